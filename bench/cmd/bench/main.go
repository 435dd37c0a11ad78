// Command bench runs the SDK benchmark: the same workloads against
// four servers (toolwire, go-sdk, mcp-go and a bare net/http floor), each in
// a fresh process per workload, the order rotated every repetition, and
// prints medians with min-max and the ratios to the floor. W1-W6 are
// 2025-11-25 sessions; W7 and W8 are W1 and W6 in the stateless 2026-07-28
// revision. C1 turns it around: the server is fixed (the floor) and the
// client varies (toolwire's, go-sdk's, mcp-go's and a bare net/http caller),
// each in its own process; its ratios are to the bare caller.
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

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/impls"
	"github.com/toolwire/toolwire/bench/internal/load"
)

var verbose = flag.Bool("v", false, "show server stderr and progress detail")

// workload is one of W1..W8 (run against each server) or C1 (run with each
// client, against the floor).
type workload struct {
	name    string
	clients bool // the subjects are clients, not servers
	run     func(c *config, ctx context.Context, subject string, rep int) (sample, error)
}

var workloads = []workload{
	{"W1", false, (*config).w1},
	{"W2", false, (*config).w2},
	{"W3", false, (*config).w3},
	{"W4", false, (*config).w4},
	{"W5", false, (*config).w5},
	{"W6", false, (*config).w6},
	{"W7", false, (*config).w7},
	{"W8", false, (*config).w8},
	{"C1", true, (*config).c1},
}

func allWorkloads() string {
	var n []string
	for _, w := range workloads {
		n = append(n, w.name)
	}
	return strings.Join(n, ",")
}

func main() {
	quick := flag.Bool("quick", false, "a few seconds: tiny sizes, one repetition; checks every reply, reports no verdict on speed")
	reps := flag.Int("reps", 3, "repetitions (medians need at least 3)")
	dur := flag.Duration("dur", 3*time.Second, "measured time of each calls/s figure")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "unmeasured time before each calls/s figure")
	latCalls := flag.Int("latency-calls", 5000, "W1, W7 and C1 sequential calls timed for p50/p99")
	allocCalls := flag.Int("alloc-calls", 2000, "C1 sequential calls whose allocations and CPU time are counted")
	sessions := flag.Int("sessions", 1000, "W5 idle sessions opened")
	benchtime := flag.String("benchtime", "1s", "W6 and W8 -test.benchtime")
	only := flag.String("impls", strings.Join(impls.All, ","), "servers to run W1-W8 against, comma-separated")
	clientList := flag.String("clients", strings.Join(clients.All, ","), "clients to run C1 with, comma-separated")
	wls := flag.String("workloads", allWorkloads(), "workloads to run, comma-separated")
	profile := flag.String("profile", "", "write toolwire CPU and alloc profiles (its server's, or its client's in C1), and the floor server's to read them against, of each workload run into this directory")
	jsonOut := flag.String("json", "", "write every sample as JSON to this file")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up (exit 1) if the whole run takes longer: a hung server")
	flag.Parse()
	time.AfterFunc(*timeout, func() { fatalf("run exceeded -timeout %s", *timeout) })

	if *quick {
		*reps, *dur, *warmup, *latCalls, *allocCalls, *sessions, *benchtime = 1, 100*time.Millisecond, 20*time.Millisecond, 100, 50, 20, "20x"
	}
	cfg := &config{reps: *reps, dur: *dur, warmup: *warmup, latencyCalls: *latCalls, allocCalls: *allocCalls, sessions: *sessions, benchtime: *benchtime}
	names := strings.Split(*only, ",")
	for _, n := range names {
		if !slices.Contains(impls.All, n) {
			fatalf("unknown server %q (have %s)", n, strings.Join(impls.All, ", "))
		}
	}
	clientNames := strings.Split(*clientList, ",")
	for _, n := range clientNames {
		if !slices.Contains(clients.All, n) {
			fatalf("unknown client %q (have %s)", n, strings.Join(clients.All, ", "))
		}
	}
	chosen := strings.Split(*wls, ",")
	for _, n := range chosen {
		if !slices.ContainsFunc(workloads, func(w workload) bool { return w.name == n }) {
			fatalf("unknown workload %q (have %s)", n, allWorkloads())
		}
	}
	var run []workload
	for _, w := range workloads {
		if slices.Contains(chosen, w.name) {
			run = append(run, w)
		}
	}
	subjects := func(w workload) []string {
		if w.clients {
			return clientNames
		}
		return names
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
	if err := build(cfg, tmp, binaries(run, names, clientNames)); err != nil {
		fatalf("build: %v", err)
	}
	fmt.Fprintf(os.Stderr, "built in %.1fs\n", time.Since(start).Seconds())

	ctx := context.Background()
	res := results{}
	failed := 0
	for rep := range cfg.reps {
		for _, w := range run {
			for _, subj := range rotate(subjects(w), rep) {
				t := time.Now()
				s, err := w.run(cfg, ctx, subj, rep)
				if err != nil {
					failed++
					fmt.Fprintf(os.Stderr, "FAIL rep %d %s %s: %v\n", rep+1, w.name, subj, err)
					continue
				}
				res.add(w.name, subj, s)
				if *verbose {
					fmt.Fprintf(os.Stderr, "rep %d %s %-8s %5.1fs %v\n", rep+1, w.name, subj, time.Since(t).Seconds(), s)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "rep %d/%d done at %.0fs\n", rep+1, cfg.reps, time.Since(start).Seconds())
	}
	env.Load1End = load.SystemLoad()
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
		fmt.Printf("quick: %d replies checked across servers %s and clients %s on %s; %d failures\n",
			checked.Load(), strings.Join(names, ", "), strings.Join(clientNames, ", "), wlNames(run), failed)
	} else {
		report(os.Stdout, cfg, env, names, clientNames, res)
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

// binaries lists the commands the chosen workloads need: the chosen
// servers for W1-W8, the floor and the chosen clients for C1.
func binaries(run []workload, servers, clientNames []string) []string {
	var bins []string
	add := func(b string) {
		if !slices.Contains(bins, b) {
			bins = append(bins, b)
		}
	}
	for _, w := range run {
		if w.clients {
			add("srv-" + impls.Floor)
			for _, n := range clientNames {
				add("cli-" + n)
			}
			continue
		}
		for _, n := range servers {
			add("srv-" + n)
		}
	}
	return bins
}

// build compiles the commands bins (srv-*, cli-*) and the in-process
// benchmark into dir.
func build(c *config, dir string, bins []string) error {
	c.bins = map[string]string{}
	args := []string{"build", "-o", dir + "/"}
	for _, b := range bins {
		args = append(args, "./cmd/"+b)
		c.bins[b] = filepath.Join(dir, b)
	}
	if len(bins) > 0 {
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
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
