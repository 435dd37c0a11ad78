// Command bench runs the benchmark of issue 6: the same workloads against
// four servers (toolwire, go-sdk, mcp-go and a bare net/http floor), each in
// a fresh process per workload, the order rotated every repetition, and
// prints medians with min-max and the ratios to the floor.
//
// Run it from bench/: `go run ./cmd/bench` (full, about 10 minutes) or
// `go run ./cmd/bench -quick` (a few seconds; checks every reply, never a
// time; exits non-zero on any incorrect reply).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolwire/toolwire/bench/impls"
)

var verbose = flag.Bool("v", false, "show server stderr and progress detail")

// workload is one of W1..W6.
type workload struct {
	name string
	run  func(c *config, ctx context.Context, impl string, rep int) (sample, error)
}

var workloads = []workload{
	{"W1", (*config).w1},
	{"W2", (*config).w2},
	{"W3", (*config).w3},
	{"W4", (*config).w4},
	{"W5", (*config).w5},
	{"W6", (*config).w6},
}

func main() {
	quick := flag.Bool("quick", false, "a few seconds: tiny sizes, one repetition; checks every reply, reports no verdict on speed")
	reps := flag.Int("reps", 3, "repetitions (medians need at least 3)")
	dur := flag.Duration("dur", 3*time.Second, "measured time of each calls/s figure")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "unmeasured time before each calls/s figure")
	latCalls := flag.Int("latency-calls", 5000, "W1 sequential calls timed for p50/p99")
	sessions := flag.Int("sessions", 1000, "W5 idle sessions opened")
	benchtime := flag.String("benchtime", "1s", "W6 -test.benchtime")
	only := flag.String("impls", strings.Join(impls.All, ","), "servers to run, comma-separated")
	wls := flag.String("workloads", "W1,W2,W3,W4,W5,W6", "workloads to run, comma-separated")
	profile := flag.String("profile", "", "write toolwire CPU and alloc profiles of each workload run into this directory")
	jsonOut := flag.String("json", "", "write every sample as JSON to this file")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up (exit 1) if the whole run takes longer: a hung server")
	flag.Parse()
	time.AfterFunc(*timeout, func() { fatalf("run exceeded -timeout %s", *timeout) })

	if *quick {
		*reps, *dur, *warmup, *latCalls, *sessions, *benchtime = 1, 100*time.Millisecond, 20*time.Millisecond, 100, 20, "20x"
	}
	cfg := &config{reps: *reps, dur: *dur, warmup: *warmup, latencyCalls: *latCalls, sessions: *sessions, benchtime: *benchtime}
	names := strings.Split(*only, ",")
	for _, n := range names {
		if !slices.Contains(impls.All, n) {
			fatalf("unknown server %q (have %s)", n, strings.Join(impls.All, ", "))
		}
	}
	var run []workload
	for _, w := range workloads {
		if slices.Contains(strings.Split(*wls, ","), w.name) {
			run = append(run, w)
		}
	}
	if *profile != "" {
		abs, err := filepath.Abs(*profile)
		if err != nil {
			fatalf("%v", err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			fatalf("%v", err)
		}
		cfg.profileDir = abs
	}

	start := time.Now()
	env := describe()
	tmp, err := os.MkdirTemp("", "toolwire-bench-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)
	if err := build(cfg, tmp, names); err != nil {
		fatalf("build: %v", err)
	}
	fmt.Fprintf(os.Stderr, "built in %.1fs\n", time.Since(start).Seconds())

	ctx := context.Background()
	res := results{}
	failed := 0
	for rep := range cfg.reps {
		order := rotate(names, rep)
		for _, w := range run {
			for _, impl := range order {
				t := time.Now()
				s, err := w.run(cfg, ctx, impl, rep)
				if err != nil {
					failed++
					fmt.Fprintf(os.Stderr, "FAIL rep %d %s %s: %v\n", rep+1, w.name, impl, err)
					continue
				}
				res.add(w.name, impl, s)
				if *verbose {
					fmt.Fprintf(os.Stderr, "rep %d %s %-8s %5.1fs %v\n", rep+1, w.name, impl, time.Since(t).Seconds(), s)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "rep %d/%d done at %.0fs\n", rep+1, cfg.reps, time.Since(start).Seconds())
	}
	env.Load1End = loadavg()
	env.Seconds = time.Since(start).Seconds()

	if *jsonOut != "" {
		b, _ := json.MarshalIndent(struct {
			Env     envInfo `json:"env"`
			Samples results `json:"samples"`
		}{env, res}, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	if *quick {
		fmt.Printf("quick: %d replies checked across %s on %s; %d failures\n",
			checked.Load(), strings.Join(names, ", "), wlNames(run), failed)
	} else {
		report(os.Stdout, cfg, env, names, res)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

func wlNames(ws []workload) string {
	var n []string
	for _, w := range ws {
		n = append(n, w.name)
	}
	return strings.Join(n, ",")
}

// rotate returns names started at position rep.
func rotate(names []string, rep int) []string {
	k := rep % len(names)
	return append(slices.Clone(names[k:]), names[:k]...)
}

// build compiles each server and the in-process benchmark into dir.
func build(c *config, dir string, names []string) error {
	c.bins = map[string]string{}
	args := []string{"build", "-o", dir + "/"}
	for _, n := range names {
		args = append(args, "./cmd/srv-"+n)
		c.bins[n] = filepath.Join(dir, "srv-"+n)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	c.testBin = filepath.Join(dir, "inproc.test")
	if out, err := exec.Command("go", "test", "-c", "-o", c.testBin, "./inproc").CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

func fatalf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+f+"\n", a...)
	os.Exit(1)
}
