// Command gatewaysoak runs `toolwire gateway` under a bounded mixed load and
// samples the gateway process's goroutines, heap in use, RSS, open file
// descriptors and threads, then reports whether each stayed flat. It is not
// run by CI:
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
// Every -interval it scrapes the gateway's /metrics (admin listener):
// go_goroutines, go_memstats_heap_inuse_bytes, process_resident_memory_bytes,
// process_open_fds, toolwire_gateway_sessions, toolwire_gateway_pending_inputs
// and go_gc_duration_seconds_count (collections since the last sample); a
// series missing is an error, not a blank. Threads come from /proc/PID (the
// registry's go_threads counts the threads ever created, not those alive).
// The verdict compares the median of the last third of the samples after
// the warm-up with that of the first third. Every process it starts is
// stopped by PID on exit, also on error or interrupt (package procs).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/bench/internal/procs"
	"github.com/toolwire/toolwire/bench/internal/stat"
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
	heapRatio, heapSlack     = 1.25, 4 << 20
	rssRatio, rssSlack       = 1.25, 16 << 20
	fdSlack, threadSlack     = 16, 8
	goroutineSlack           = 32
	sessionSlack, inputSlack = 32, 8
)

// The upstreams' names in the gateway's config.
const (
	upstreamHTTP  = "http"
	upstreamStdio = "stdio"
)

var (
	serveReady   = regexp.MustCompile(`msg="serving reference tools over Streamable HTTP" url=(\S+)`)
	gatewayReady = regexp.MustCompile(`msg="gateway serving" url=(\S+)`)
	adminReady   = regexp.MustCompile(`msg="admin endpoints" url=(\S+)`)
)

// startAll starts the HTTP upstream and the gateway (which starts the
// stdio upstream).
func startAll(bin, dir string) (*procs.Proc, error) {
	srv, err := procs.Start(procs.Cmd{
		Name: "serve", Bin: bin,
		Args:  []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", ""},
		Ready: map[string]*regexp.Regexp{"url": serveReady},
	})
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "gateway.yaml")
	yaml := "upstreams:\n" +
		"  " + upstreamHTTP + ":\n    url: " + srv.Found["url"] + "\n" +
		"  " + upstreamStdio + ":\n    command: [" + strconv.Quote(bin) + ", serve, --stdio, --data-dir, '']\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	gw, err := procs.Start(procs.Cmd{
		Name: "gateway", Bin: bin,
		Args:  []string{"gateway", "--config", cfg, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--watch-interval", "0"},
		Ready: map[string]*regexp.Regexp{"url": gatewayReady, "admin": adminReady},
	})
	if err != nil {
		return nil, err
	}
	for _, u := range []string{upstreamHTTP, upstreamStdio} {
		if !strings.Contains(gw.Log(), u+"=ready") {
			return nil, fmt.Errorf("upstream %s not ready:\n%s", u, gw.Log())
		}
	}
	return gw, nil
}

// The series sampled from /metrics, all unlabelled.
const (
	mGoroutines = "go_goroutines"
	mHeapInuse  = "go_memstats_heap_inuse_bytes"
	mRSS        = "process_resident_memory_bytes"
	mFDs        = "process_open_fds"
	mSessions   = "toolwire_gateway_sessions"
	mInputs     = "toolwire_gateway_pending_inputs"
	mGCs        = "go_gc_duration_seconds_count"
)

// sample is one measurement of the gateway process.
type sample struct {
	elapsed    time.Duration
	goroutines int64
	heap       int64 // heap in use (bytes in in-use spans)
	gcs        int64 // collections since the previous sample
	rss        int64
	fds        int64
	threads    int64 // from /proc/PID/status
	sessions   int64 // downstream
	inputs     int64 // forwarded calls waiting for an answer to a question
	ops        int64
	errors     int64
	cancelled  int64
}

// threads reads Threads from /proc/PID/status.
func threads(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("the gateway is gone: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no Threads in /proc/%d/status", pid)
}

// parseMetrics reads the unlabelled series names from a Prometheus text
// exposition ("name value" or "name value timestamp" lines; comments and
// other series skipped). A name missing, repeated or with a value that is
// not a finite number is an error.
func parseMetrics(body string, names ...string) (map[string]float64, error) {
	got := make(map[string]float64, len(names))
	for line := range strings.SplitSeq(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		if !slices.Contains(names, name) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 1 && len(f) != 2 {
			return nil, fmt.Errorf("/metrics: malformed line %q", line)
		}
		if _, dup := got[name]; dup {
			return nil, fmt.Errorf("/metrics: %s twice", name)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("/metrics: %s: value %q", name, f[0])
		}
		got[name] = v
	}
	for _, n := range names {
		if _, ok := got[n]; !ok {
			return nil, fmt.Errorf("/metrics has no %s", n)
		}
	}
	return got, nil
}

func scrape(ctx context.Context, hc *http.Client, admin string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, admin+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "text/plain") // the text format, not protobuf
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

// sampler measures the gateway; gcs is the collection count at the
// previous sample.
type sampler struct {
	gw  *procs.Proc
	hc  *http.Client
	gcs int64
}

func (sp *sampler) sample(ctx context.Context) (sample, error) {
	body, err := scrape(ctx, sp.hc, sp.gw.Found["admin"])
	if err != nil {
		return sample{}, err
	}
	m, err := parseMetrics(body, mGoroutines, mHeapInuse, mRSS, mFDs, mSessions, mInputs, mGCs)
	if err != nil {
		return sample{}, err
	}
	n, err := threads(sp.gw.PID())
	if err != nil {
		return sample{}, err
	}
	gcs := int64(m[mGCs])
	s := sample{
		goroutines: int64(m[mGoroutines]),
		heap:       int64(m[mHeapInuse]),
		gcs:        gcs - sp.gcs,
		rss:        int64(m[mRSS]),
		fds:        int64(m[mFDs]),
		threads:    n,
		sessions:   int64(m[mSessions]),
		inputs:     int64(m[mInputs]),
	}
	sp.gcs = gcs
	return s, nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func count(n int64) string { return strconv.FormatInt(n, 10) }

func main() {
	flag.Parse()
	procs.Verbose = *verbose
	if *dur < *warmup+3**interval {
		procs.Fatalf("-dur must exceed -warmup by at least three -interval")
	}
	if *callers < 1 {
		procs.Fatalf("-callers must be at least 1")
	}
	dir, err := procs.Init("gatewaysoak")
	if err != nil {
		procs.Fatalf("%v", err)
	}
	procs.ExitOnSignal()
	defer procs.Cleanup()

	bin, err := procs.Binary(*binFlag, dir)
	if err != nil {
		procs.Fatalf("%v", err)
	}
	gw, err := startAll(bin, dir)
	if err != nil {
		procs.Fatalf("%v", err)
	}
	ctx := context.Background()
	sp := &sampler{gw: gw, hc: &http.Client{Timeout: 10 * time.Second}}
	if _, err := sp.sample(ctx); err != nil { // every series there, and the GC count's start
		procs.Fatalf("%v", err)
	}
	fmt.Printf("soaking %s (gateway pid %d; upstreams %s over Streamable HTTP and %s over stdio) for %v: %d callers, %d ops/s, samples every %v, warm-up %v\n",
		gw.Found["url"], gw.PID(), upstreamHTTP, upstreamStdio, *dur, *callers, *rate, *interval, *warmup)

	l, err := newLoad(ctx, gw.Found["url"])
	if err != nil {
		procs.Fatalf("preparing the load: %v\n%s", err, gw.Log())
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
	fmt.Println("| elapsed | goroutines | heap in use | GCs | RSS | fds | threads | sessions | pending inputs | operations | cancelled | errors |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for loadCtx.Err() == nil {
		select {
		case <-loadCtx.Done():
			continue // the load is over: the last sample was taken under it
		case <-tick.C:
		}
		s, err := sp.sample(ctx)
		if err != nil {
			procs.Fatalf("sampling: %v\n%s", err, gw.Log())
		}
		s.elapsed = time.Since(begin)
		s.ops, s.errors, s.cancelled = l.st.ops.Load(), l.st.errors.Load(), l.st.cancelled.Load()
		samples = append(samples, s)
		fmt.Printf("| %s | %d | %s | %d | %s | %d | %d | %d | %d | %d | %d | %d |\n", s.elapsed.Round(time.Second), s.goroutines, mib(s.heap), s.gcs,
			mib(s.rss), s.fds, s.threads, s.sessions, s.inputs, s.ops, s.cancelled, s.errors)
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
		procs.Exit(1)
	}
	fmt.Println("PASS: the gateway's goroutines, heap in use, RSS, file descriptors, threads, sessions and pending inputs flat after the warm-up; every answer as expected")
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
		{"goroutines", func(s sample) int64 { return s.goroutines }, 1, goroutineSlack, count},
		{"heap in use", func(s sample) int64 { return s.heap }, heapRatio, heapSlack, mib},
		{"RSS", func(s sample) int64 { return s.rss }, rssRatio, rssSlack, mib},
		{"file descriptors", func(s sample) int64 { return s.fds }, 1, fdSlack, count},
		{"threads", func(s sample) int64 { return s.threads }, 1, threadSlack, count},
		{"downstream sessions", func(s sample) int64 { return s.sessions }, 1, sessionSlack, count},
		{"pending inputs", func(s sample) int64 { return s.inputs }, 1, inputSlack, count},
	} {
		base, end := stat.MedianOf(first, m.get), stat.MedianOf(last, m.get)
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
