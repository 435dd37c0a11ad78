// Command gatewaysoak runs `toolwire gateway` under a bounded mixed load and
// samples the gateway process's live heap, RSS, open file descriptors and
// threads, then reports whether each stayed flat. It is not run by CI:
//
//	cd bench && go run ./cmd/gatewaysoak              # 10 minutes
//	cd bench && go run ./cmd/gatewaysoak -dur 2m -warmup 30s
//
// The gateway has two upstreams: `toolwire serve` over Streamable HTTP
// (upstream "http") and `toolwire serve --stdio` as its child (upstream
// "stdio"). The load, on -callers workers paced to -rate operations a
// second in all, mixes tools/call of echo, get-structured-content,
// get-tiny-image and trigger-long-running-operation (with progress; some
// cancelled mid-way), prompts/get, resources/read (static and templated),
// tools/list, and sessions opened and closed in both protocol eras. Every
// answer is checked.
//
// The gateway's /metrics registry has no Go runtime or process collectors
// (no go_memstats_*, go_goroutines or process_*), so the live heap comes
// from the runtime's own GC trace (GODEBUG=gctrace=1 on the gateway: the
// heap marked live at each collection, in MiB), and RSS, file descriptors
// and threads from /proc/PID; goroutines are not observable from outside.
// Every -interval it samples; the verdict compares the median of the last
// third of the samples after the warm-up with that of the first third.
// Every process it starts is stopped by PID on exit, also on error or
// interrupt.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	dur      = flag.Duration("dur", 10*time.Minute, "how long to run the load")
	warmup   = flag.Duration("warmup", 2*time.Minute, "samples before this are the warm-up, not compared")
	interval = flag.Duration("interval", 10*time.Second, "time between samples")
	callers  = flag.Int("callers", 8, "concurrent load workers")
	rate     = flag.Int("rate", 200, "operations a second, all workers together (0: as fast as they go)")
	binFlag  = flag.String("bin", "", "toolwire binary (default: build ./cmd/toolwire of the root module)")
	verbose  = flag.Bool("v", false, "log the processes' output to stderr")
)

// Allowances of the verdict: the last third's median may exceed the first
// third's by this factor plus this much.
const (
	heapRatio, heapSlack = 1.25, 4 << 20
	rssRatio, rssSlack   = 1.25, 16 << 20
	fdSlack, threadSlack = 16, 8
	sessionSlack         = 32
)

// The upstreams' names in the gateway's config.
const (
	upstreamHTTP  = "http"
	upstreamStdio = "stdio"
)

// procs are the processes started, stopped by PID at exit.
var (
	procsMu sync.Mutex
	procs   []*proc
	tmpDir  string
)

type proc struct {
	name  string
	cmd   *exec.Cmd
	found map[string]string // the first group of each ready pattern
	log   *logBuf
	done  chan struct{}
	gcMu  sync.Mutex
	gc    []int64 // live heap after each collection since the last sample (gctrace)
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.WriteString(s + "\n")
	}
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// gcLine is a gctrace line: "gc 12 @3.4s 1%: ..., 4->5->2 MB, 5 MB goal, ...";
// the third figure is the heap marked live.
var gcLine = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

// start runs bin with args in its own process group and waits for a log
// line (stderr) matching each of ready, keeping each one's first group.
func start(name, bin string, env []string, ready map[string]*regexp.Regexp, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "XDG_STATE_HOME="+tmpDir), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, found: map[string]string{}, log: &logBuf{}, done: make(chan struct{})}
	procsMu.Lock()
	if err := cmd.Start(); err != nil {
		procsMu.Unlock()
		return nil, err
	}
	procs = append(procs, p)
	procsMu.Unlock()
	var mu sync.Mutex
	all := make(chan struct{})
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := gcLine.FindStringSubmatch(line); m != nil {
				live, _ := strconv.ParseInt(m[3], 10, 64)
				p.gcMu.Lock()
				p.gc = append(p.gc, live<<20)
				p.gcMu.Unlock()
				continue
			}
			p.log.add(line)
			if *verbose {
				fmt.Fprintf(os.Stderr, "[%s] %s\n", name, line)
			}
			mu.Lock()
			for k, re := range ready {
				if _, ok := p.found[k]; !ok {
					if m := re.FindStringSubmatch(line); m != nil {
						p.found[k] = m[1]
						if len(p.found) == len(ready) {
							close(all)
						}
					}
				}
			}
			mu.Unlock()
		}
		_ = cmd.Wait()
	}()
	select {
	case <-all:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before serving:\n%s", name, p.log)
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("%s not serving after 30s:\n%s", name, p.log)
	}
}

// takeGC returns the live heaps the collections since the last call
// reported.
func (p *proc) takeGC() []int64 {
	p.gcMu.Lock()
	defer p.gcMu.Unlock()
	out := p.gc
	p.gc = nil
	return out
}

var cleanupOnce sync.Once

// cleanup stops every process started: SIGTERM to its PID (the gateway
// then closes its stdio child), then SIGKILL to its process group after a
// grace period. It removes tmpDir.
func cleanup() {
	cleanupOnce.Do(func() {
		procsMu.Lock()
		ps := slices.Clone(procs)
		procsMu.Unlock()
		slices.Reverse(ps) // the gateway before the server it calls
		for _, p := range ps {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range ps {
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
			}
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
		if tmpDir != "" {
			_ = os.RemoveAll(tmpDir)
		}
	})
}

func fatalf(f string, a ...any) {
	cleanup()
	fmt.Fprintf(os.Stderr, "gatewaysoak: "+f+"\n", a...)
	os.Exit(1)
}

// build compiles toolwire from the root module into tmpDir.
func build() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/toolwire/toolwire").Output()
	if err != nil {
		return "", fmt.Errorf("locating the root module: %v", err)
	}
	bin := filepath.Join(tmpDir, "toolwire")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/toolwire")
	cmd.Dir = strings.TrimSpace(string(out))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/toolwire: %v\n%s", err, out)
	}
	return bin, nil
}

var (
	serveReady   = regexp.MustCompile(`msg="serving reference tools over Streamable HTTP" url=(\S+)`)
	gatewayReady = regexp.MustCompile(`msg="gateway serving" url=(\S+)`)
	adminReady   = regexp.MustCompile(`msg="admin endpoints" url=(\S+)`)
)

// startAll starts the HTTP upstream and the gateway (which starts the
// stdio upstream).
func startAll(bin string) (gw *proc, err error) {
	srv, err := start("serve", bin, nil, map[string]*regexp.Regexp{"url": serveReady}, "serve", "--addr", "127.0.0.1:0", "--data-dir", "")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(tmpDir, "gateway.yaml")
	// The stdio child gets GODEBUG emptied: only the gateway traces its
	// collections.
	yaml := "upstreams:\n" +
		"  " + upstreamHTTP + ":\n    url: " + srv.found["url"] + "\n" +
		"  " + upstreamStdio + ":\n    command: [" + strconv.Quote(bin) + ", serve, --stdio, --data-dir, '']\n    env: {GODEBUG: ''}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	gw, err = start("gateway", bin, []string{"GODEBUG=gctrace=1"},
		map[string]*regexp.Regexp{"url": gatewayReady, "admin": adminReady},
		"gateway", "--config", cfg, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--watch-interval", "0")
	if err != nil {
		return nil, err
	}
	for _, u := range []string{upstreamHTTP, upstreamStdio} {
		if !strings.Contains(gw.log.String(), u+"=ready") {
			return nil, fmt.Errorf("upstream %s not ready:\n%s", u, gw.log)
		}
	}
	return gw, nil
}

// sample is one measurement of the gateway process.
type sample struct {
	elapsed    time.Duration
	heap       int64 // median live heap of the interval's collections (gctrace); -1 when none ran
	gcs        int   // collections in the interval
	rss        int64
	fds        int64
	threads    int64
	sessions   int64 // toolwire_gateway_sessions
	goroutines int64 // go_goroutines, -1 when the registry has none
	ops        int64
	errors     int64
	cancelled  int64
}

func procStatus(pid int, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return -1
			}
			n, _ := strconv.ParseInt(f[0], 10, 64)
			if len(f) > 1 && f[1] == "kB" {
				n <<= 10
			}
			return n
		}
	}
	return -1
}

// metric reads one unlabelled sample from a Prometheus text exposition; -1
// when absent.
func metric(body, name string) int64 {
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return int64(f)
			}
		}
	}
	return -1
}

func scrape(ctx context.Context, hc *http.Client, admin string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, admin+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /metrics: status %d", resp.StatusCode)
	}
	return string(b), err
}

func (g *proc) sample(ctx context.Context, hc *http.Client) (sample, error) {
	pid := g.cmd.Process.Pid
	s := sample{heap: -1, rss: procStatus(pid, "VmRSS"), threads: procStatus(pid, "Threads")}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return s, fmt.Errorf("the gateway is gone: %v", err)
	}
	s.fds = int64(len(fds))
	if gcs := g.takeGC(); len(gcs) > 0 {
		slices.Sort(gcs)
		s.heap, s.gcs = gcs[len(gcs)/2], len(gcs)
	}
	body, err := scrape(ctx, hc, g.found["admin"])
	if err != nil {
		return s, err
	}
	s.sessions = metric(body, "toolwire_gateway_sessions")
	s.goroutines = metric(body, "go_goroutines")
	return s, nil
}

func mib(b int64) string {
	if b < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

func count(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func main() {
	flag.Parse()
	if *dur < *warmup+3**interval {
		fatalf("-dur must exceed -warmup by at least three -interval")
	}
	if *callers < 1 {
		fatalf("-callers must be at least 1")
	}
	var err error
	if tmpDir, err = os.MkdirTemp("", "gatewaysoak-"); err != nil {
		fatalf("%v", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		cleanup()
		fmt.Fprintf(os.Stderr, "gatewaysoak: %v: stopped every process started\n", s)
		os.Exit(130)
	}()
	defer cleanup()

	bin := *binFlag
	if bin == "" {
		if bin, err = build(); err != nil {
			fatalf("%v", err)
		}
	}
	gw, err := startAll(bin)
	if err != nil {
		fatalf("%v", err)
	}
	ctx := context.Background()
	hc := &http.Client{Timeout: 10 * time.Second}
	body, err := scrape(ctx, hc, gw.found["admin"])
	if err != nil {
		fatalf("%v", err)
	}
	runtimeMetrics := strings.Contains(body, "go_memstats_") || strings.Contains(body, "process_resident_memory_bytes")
	fmt.Printf("soaking %s (gateway pid %d; upstreams %s over Streamable HTTP and %s over stdio) for %v: %d callers, %d ops/s, samples every %v, warm-up %v\n",
		gw.found["url"], gw.cmd.Process.Pid, upstreamHTTP, upstreamStdio, *dur, *callers, *rate, *interval, *warmup)
	if !runtimeMetrics {
		fmt.Println("the gateway's /metrics has no go_memstats_*, go_goroutines or process_* series: heap from GODEBUG=gctrace=1, RSS, fds and threads from /proc")
	}

	l, err := newLoad(ctx, gw.found["url"])
	if err != nil {
		fatalf("preparing the load: %v\n%s", err, gw.log)
	}
	loadCtx, stopLoad := context.WithTimeout(ctx, *dur)
	defer stopLoad()
	var wg sync.WaitGroup
	l.run(loadCtx, &wg)

	var samples []sample
	begin := time.Now()
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	fmt.Println()
	fmt.Println("| elapsed | live heap | GCs | RSS | fds | threads | sessions | operations | cancelled | errors |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for loadCtx.Err() == nil {
		select {
		case <-loadCtx.Done():
			continue // the load is over: the last sample was taken under it
		case <-tick.C:
		}
		s, err := gw.sample(ctx, hc)
		if err != nil {
			fatalf("sampling: %v\n%s", err, gw.log)
		}
		s.elapsed = time.Since(begin)
		s.ops, s.errors, s.cancelled = l.st.ops.Load(), l.st.errors.Load(), l.st.cancelled.Load()
		samples = append(samples, s)
		fmt.Printf("| %s | %s | %d | %s | %d | %d | %s | %d | %d | %d |\n", s.elapsed.Round(time.Second), mib(s.heap), s.gcs, mib(s.rss), s.fds, s.threads, count(s.sessions), s.ops, s.cancelled, s.errors)
	}
	wg.Wait()
	l.close()
	fmt.Println()
	for _, e := range l.st.first() {
		fmt.Println("error:", e)
	}
	fmt.Println(l.st.summary())
	ok := verdict(samples)
	if n := l.st.errors.Load(); n > 0 {
		fmt.Printf("FAIL: %d of %d operations failed\n", n, l.st.ops.Load())
		ok = false
	}
	if !ok {
		cleanup()
		os.Exit(1)
	}
	fmt.Println("PASS: the gateway's live heap, RSS, file descriptors, threads and sessions flat after the warm-up; every answer as expected")
}

// verdict compares the median of the first third of the samples after the
// warm-up with the median of the last third.
func verdict(samples []sample) bool {
	var after []sample
	for _, s := range samples {
		if s.elapsed >= *warmup {
			after = append(after, s)
		}
	}
	if len(after) < 6 {
		fmt.Println("FAIL: fewer than six samples after the warm-up; run longer")
		return false
	}
	third := len(after) / 3
	first, last := after[:third], after[len(after)-third:]
	fmt.Printf("\nverdict: median of the first third after the %v warm-up (%d samples, %s to %s) against the last third (%s to %s)\n\n",
		*warmup, third, first[0].elapsed.Round(time.Second), first[third-1].elapsed.Round(time.Second),
		last[0].elapsed.Round(time.Second), last[third-1].elapsed.Round(time.Second))
	fmt.Println("| measure | first third | last third | allowed | |")
	fmt.Println("|---|---:|---:|---:|---|")
	type measure struct {
		name   string
		get    func(sample) int64
		ratio  float64
		slack  int64
		format func(int64) string
	}
	ok := true
	for _, m := range []measure{
		{"live heap (gctrace)", func(s sample) int64 { return s.heap }, heapRatio, heapSlack, mib},
		{"RSS", func(s sample) int64 { return s.rss }, rssRatio, rssSlack, mib},
		{"file descriptors", func(s sample) int64 { return s.fds }, 1, fdSlack, count},
		{"threads", func(s sample) int64 { return s.threads }, 1, threadSlack, count},
		{"downstream sessions", func(s sample) int64 { return s.sessions }, 1, sessionSlack, count},
		{"goroutines", func(s sample) int64 { return s.goroutines }, 1, 32, count},
	} {
		base, end := median(first, m.get), median(last, m.get)
		if base < 0 || end < 0 {
			fmt.Printf("| %s | - | - | - | not observable |\n", m.name)
			continue
		}
		limit := int64(float64(base)*m.ratio) + m.slack
		state := "flat"
		if end > limit {
			state, ok = "GROWING", false
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", m.name, m.format(base), m.format(end), m.format(limit), state)
	}
	fmt.Println()
	return ok
}

// median of the values get finds (negative ones, not measured, left out;
// -1 when none is left).
func median(s []sample, get func(sample) int64) int64 {
	var v []int64
	for i := range s {
		if x := get(s[i]); x >= 0 {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return -1
	}
	slices.Sort(v)
	return v[len(v)/2]
}
