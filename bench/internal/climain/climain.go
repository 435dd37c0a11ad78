// Package climain is the main function every client process of the client
// workload (C1) shares: connect one library's client to the MCP server at
// -url, measure it, and print the figures as one JSON object on stdout.
//
// Each client runs in its own process so that what is measured in it, the
// allocations and CPU time per call, is that client's alone: the server runs
// in another process. One connected client is shared by all concurrent
// callers, as an application shares its client.
package climain

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/internal/procs"
)

// hang is how long a calls/s figure waits for a call that should have
// completed before it takes the client (or server) to hang.
const hang = time.Minute

// Figures is what a client process prints: p50 and p99 (µs, sequential),
// allocs, bytes and cpu (per call, in the client process, sequential; cpu in
// µs of user+system time), cps<N> (calls/s with N concurrent callers), and
// checked (replies checked in all).
type Figures map[string]float64

// config is a client process's flags.
type config struct {
	url                    string
	callers                []int
	latencyCalls, allocs   int
	dur, warmup            time.Duration
	defaultHTTP            bool
	cpuProfile, memProfile string
	memRate                int
}

func parseFlags() (*config, error) {
	c := &config{}
	flag.StringVar(&c.url, "url", "", "the MCP endpoint (required)")
	callers := flag.String("callers", "1,8,64", "concurrent callers of each calls/s figure, comma-separated")
	flag.IntVar(&c.latencyCalls, "latency-calls", 5000, "sequential calls timed for p50/p99 (a tenth as many warm up first)")
	flag.IntVar(&c.allocs, "alloc-calls", 2000, "sequential calls whose allocations and CPU time are counted")
	flag.DurationVar(&c.dur, "dur", 3*time.Second, "measured time of each calls/s figure")
	flag.DurationVar(&c.warmup, "warmup", 500*time.Millisecond, "unmeasured time before each calls/s figure")
	flag.BoolVar(&c.defaultHTTP, "default-http", false, "let the library use its default HTTP client instead of the shared keep-alive one")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile here")
	flag.StringVar(&c.memProfile, "memprofile", "", "write an alloc profile here at exit")
	flag.IntVar(&c.memRate, "memprofilerate", 0, "runtime.MemProfileRate when -memprofile is set (0: default)")
	flag.Parse()
	if c.url == "" {
		return nil, fmt.Errorf("-url is required")
	}
	for _, f := range strings.Split(*callers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad -callers entry %q", f)
		}
		c.callers = append(c.callers, n)
	}
	if c.latencyCalls < 1 || c.allocs < 1 {
		return nil, fmt.Errorf("-latency-calls and -alloc-calls must be positive")
	}
	return c, nil
}

// Main runs a client process with the library's connect function.
func Main(connect clients.Connect) {
	c, err := parseFlags()
	if err != nil {
		fatal(err)
	}
	if c.memProfile != "" && c.memRate > 0 {
		runtime.MemProfileRate = c.memRate
	}
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
	}
	figs, err := run(context.Background(), c, connect)
	if c.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if c.memProfile != "" {
		if werr := procs.WriteAllocs(c.memProfile); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		fatal(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(figs); err != nil {
		fatal(err)
	}
}

// run connects, warms up, then takes the figures in order: sequential
// latency, sequential cost per call, calls/s at each number of callers.
func run(ctx context.Context, c *config, connect clients.Connect) (Figures, error) {
	var hc *http.Client
	if !c.defaultHTTP {
		hc = load.NewHTTPClient(slices.Max(c.callers))
		defer hc.CloseIdleConnections()
	}
	cl, err := connect(ctx, c.url, hc)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer cl.Close()
	figs := Figures{}
	var checked int64
	echo := func(prefix string, i int) error {
		return cl.Echo(ctx, prefix+strconv.Itoa(i))
	}

	warm := max(c.latencyCalls/10, 10)
	for i := range warm {
		if err := echo("warm-", i); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	checked += int64(warm)

	if figs["p50"], figs["p99"], err = load.Latencies(c.latencyCalls, func(i int) error { return echo("seq-", i) }); err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	checked += int64(c.latencyCalls)

	if err := cost(ctx, cl, c.allocs, figs); err != nil {
		return nil, fmt.Errorf("cost per call: %w", err)
	}
	checked += int64(c.allocs)

	for _, n := range c.callers {
		cps, _, total, err := load.Rate(n, c.warmup, c.dur, hang, func(k, i int) (int64, error) {
			return 0, echo("c"+strconv.Itoa(k)+"-", i)
		})
		checked += total
		if err != nil {
			return nil, fmt.Errorf("%d callers: %w", n, err)
		}
		figs["cps"+strconv.Itoa(n)] = cps
	}
	figs["checked"] = float64(checked)
	return figs, nil
}

// cost makes n sequential calls and records the heap allocations, bytes
// allocated and CPU time (user+system) of this process per call. The
// messages are made beforehand so that only the client's work is counted;
// whatever runs in the process meanwhile (the library's own goroutines,
// net/http's connection goroutines, the GC) is counted with it.
func cost(ctx context.Context, cl clients.Caller, n int, figs Figures) error {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = "cost-" + strconv.Itoa(i)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	for _, m := range msgs {
		if err := cl.Echo(ctx, m); err != nil {
			return err
		}
	}
	cpu1 := cpuTime()
	runtime.ReadMemStats(&m1)
	figs["allocs"] = float64(m1.Mallocs-m0.Mallocs) / float64(n)
	figs["bytes"] = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
	figs["cpu"] = float64((cpu1 - cpu0).Microseconds()) / float64(n)
	return nil
}

// cpuTime is the user plus system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchclient:", err)
	os.Exit(1)
}
