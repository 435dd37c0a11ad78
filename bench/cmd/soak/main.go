// Command soak runs `toolwire serve` under a bounded mixed load and samples
// the server process's live heap, goroutines, open file descriptors and RSS,
// then reports whether each stayed flat after the warm-up. It is not run by
// CI: `scripts/soak` (default 10 minutes) is the way to run it.
//
// The load mixes, on several workers at once: 2025-era sessions opened, used
// and ended with DELETE; stateless 2026-07-28 calls; large echo payloads;
// arguments that break the schema; malformed bodies; and long calls whose
// connection the client drops mid-call. Every reply is checked. The server
// is stopped by PID on exit, also on error or interrupt (package procs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/bench/internal/procs"
	"github.com/toolwire/toolwire/bench/internal/stat"
)

func main() {
	var (
		duration = flag.Duration("duration", 10*time.Minute, "how long to run the load (after which the verdict is printed)")
		warmup   = flag.Duration("warmup", 2*time.Minute, "samples before this are the warm-up, not compared")
		interval = flag.Duration("interval", 10*time.Second, "time between samples")
		workers  = flag.Int("workers", 8, "concurrent load workers")
		bin      = flag.String("bin", "", "toolwire binary to soak (default: build ./cmd/toolwire of the root module)")
		csvPath  = flag.String("csv", "", "also write every sample to this CSV file")
	)
	flag.Parse()
	if *duration <= *warmup+3**interval {
		procs.Fatalf("-duration must exceed -warmup by at least three -interval")
	}
	dir, err := procs.Init("soak")
	if err != nil {
		procs.Fatalf("%v", err)
	}
	defer procs.Cleanup()
	// An interrupt ends the load early: the samples so far are still
	// written (-csv) before the server is stopped.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if *bin, err = procs.Binary(*bin, dir); err != nil {
		procs.Fatalf("building toolwire: %v", err)
	}
	srv, err := start(*bin)
	if err != nil {
		procs.Fatalf("%v", err)
	}
	fmt.Printf("soaking %s (pid %d) for %v: %d workers, samples every %v, warm-up %v\n",
		srv.url, srv.proc.PID(), *duration, *workers, *interval, *warmup)

	var st stats
	loadCtx, stopLoad := context.WithTimeout(ctx, *duration)
	defer stopLoad()
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() { defer wg.Done(); worker(loadCtx, w, srv.url, &st) }()
	}

	var samples []sample
	begin := time.Now()
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	fmt.Printf("%8s %10s %10s %6s %10s %10s %8s\n", "elapsed", "heap", "rss", "fds", "goroutines", "calls", "errors")
	for done := false; !done; {
		select {
		case <-loadCtx.Done():
			done = true
		case <-tick.C:
		}
		s, err := srv.sample(ctx)
		if err != nil {
			procs.Fatalf("sampling: %v", err)
		}
		s.elapsed = time.Since(begin)
		s.calls, s.errors = st.calls.Load(), st.errors.Load()
		samples = append(samples, s)
		fmt.Printf("%8s %10s %10s %6d %10d %10d %8d\n", s.elapsed.Round(time.Second), mib(s.heap), mib(s.rss), s.fds, s.goroutines, s.calls, s.errors)
	}
	wg.Wait()
	if *csvPath != "" {
		if err := writeCSV(*csvPath, samples); err != nil {
			procs.Fatalf("%v", err)
		}
	}
	if ctx.Err() != nil {
		procs.Fatalf("interrupted")
	}
	st.mu.Lock()
	for _, e := range st.firstErrors {
		fmt.Println("error:", e)
	}
	st.mu.Unlock()
	ok := verdict(samples, *warmup)
	if n := st.errors.Load(); n > 0 {
		fmt.Printf("FAIL: %d of %d operations failed\n", n, st.calls.Load())
		ok = false
	}
	if !ok {
		procs.Exit(1)
	}
	fmt.Println("PASS: heap, RSS, file descriptors and goroutines flat after the warm-up; every reply as expected")
}

func mib(b int64) string { return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20)) }

// server is the soaked `toolwire serve` process.
type server struct {
	proc  *procs.Proc
	url   string // the MCP endpoint
	debug string // host:port of its runtime profiles
	http  *http.Client
}

var (
	urlReady   = regexp.MustCompile(`Streamable HTTP.* url=(\S+)`)
	debugReady = regexp.MustCompile(`runtime profiles.* address=(\S+)`)
)

// start starts the server; the errors it logs are copied to stderr.
func start(bin string) (*server, error) {
	p, err := procs.Start(procs.Cmd{
		Name:  "server",
		Bin:   bin,
		Args:  []string{"serve", "--addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--data-dir", "", "--log-level", "info"},
		Ready: map[string]*regexp.Regexp{"url": urlReady, "debug": debugReady},
		Line: func(line string) bool {
			if strings.Contains(line, "level=ERROR") {
				fmt.Fprintln(os.Stderr, "server:", line)
			}
			return true
		},
	})
	if err != nil {
		return nil, err
	}
	return &server{proc: p, url: p.Found["url"], debug: p.Found["debug"], http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// sample is one measurement of the server process.
type sample struct {
	elapsed         time.Duration
	heap, rss       int64 // bytes: live heap after a forced GC; resident set
	fds, goroutines int64
	calls, errors   int64
}

var heapAllocRe = regexp.MustCompile(`(?m)^# HeapAlloc = (\d+)$`)

func (s *server) sample(ctx context.Context) (sample, error) {
	var out sample
	// heap?gc=1 runs a collection first, so HeapAlloc is the live heap.
	body, err := s.get(ctx, "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return out, err
	}
	m := heapAllocRe.FindSubmatch(body)
	if m == nil {
		return out, errors.New("no HeapAlloc in the heap profile")
	}
	out.heap, _ = strconv.ParseInt(string(m[1]), 10, 64)
	if body, err = s.get(ctx, "/debug/pprof/goroutine?debug=1"); err != nil {
		return out, err
	}
	first, _, _ := strings.Cut(string(body), "\n")
	if out.goroutines, err = strconv.ParseInt(strings.TrimPrefix(first, "goroutine profile: total "), 10, 64); err != nil {
		return out, fmt.Errorf("goroutine profile: %q", first)
	}
	pid := s.proc.PID()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return out, err
	}
	out.fds = int64(len(fds))
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			out.rss = kb << 10
		}
	}
	return out, nil
}

func (s *server) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.debug+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
	}
	return b, err
}

// verdict compares the median of the first three samples after the warm-up
// with the median of the last three and prints whether each measure stayed
// within its allowance.
func verdict(samples []sample, warmup time.Duration) bool {
	var after []sample
	for _, s := range samples {
		if s.elapsed >= warmup {
			after = append(after, s)
		}
	}
	if len(after) < 6 {
		fmt.Println("FAIL: fewer than six samples after the warm-up; run longer")
		return false
	}
	type measure struct {
		name      string
		get       func(sample) int64
		ratio     float64 // allowed growth factor
		slack     int64   // plus this much
		formatted func(int64) string
	}
	count := func(v int64) string { return strconv.FormatInt(v, 10) }
	ok := true
	for _, m := range []measure{
		{"live heap", func(s sample) int64 { return s.heap }, 1.25, 4 << 20, mib},
		{"RSS", func(s sample) int64 { return s.rss }, 1.25, 16 << 20, mib},
		{"file descriptors", func(s sample) int64 { return s.fds }, 1, 16, count},
		{"goroutines", func(s sample) int64 { return s.goroutines }, 1, 32, count},
	} {
		base, last := stat.MedianOf(after[:3], m.get), stat.MedianOf(after[len(after)-3:], m.get)
		limit := int64(float64(base)*m.ratio) + m.slack
		state := "flat"
		if last > limit {
			state, ok = "GROWING", false
		}
		fmt.Printf("%-17s %10s after warm-up, %10s at the end (allowed %10s): %s\n", m.name, m.formatted(base), m.formatted(last), m.formatted(limit), state)
	}
	return ok
}

func writeCSV(path string, samples []sample) error {
	var b strings.Builder
	b.WriteString("elapsed_s,heap_bytes,rss_bytes,fds,goroutines,calls,errors\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%.0f,%d,%d,%d,%d,%d,%d\n", s.elapsed.Seconds(), s.heap, s.rss, s.fds, s.goroutines, s.calls, s.errors)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// stats counts the load's operations and keeps the first few failures.
type stats struct {
	calls, errors atomic.Int64
	mu            sync.Mutex
	firstErrors   []string
}

func (st *stats) record(op string, err error) {
	st.calls.Add(1)
	if err == nil {
		return
	}
	st.errors.Add(1)
	st.mu.Lock()
	if len(st.firstErrors) < 10 {
		st.firstErrors = append(st.firstErrors, op+": "+err.Error())
	}
	st.mu.Unlock()
}
