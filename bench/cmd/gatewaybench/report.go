package main

import (
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/toolwire/toolwire/bench/internal/load"
)

// Targets of the gateway issue.
const (
	maxAddedP50  = 80.0 // µs over direct, HTTP upstream, 1 caller
	minRatio64   = 0.6  // calls/s gateway/direct at 64 callers
	ratioCallers = 64
)

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func num(v float64) string {
	switch {
	case v >= 100 || v <= -100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10 || v <= -10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// cell is "median (min–max)".
func cell(v []float64) string {
	if len(v) == 1 {
		return num(v[0])
	}
	return fmt.Sprintf("%s (%s–%s)", num(median(v)), num(slices.Min(v)), num(slices.Max(v)))
}

func field(ms []measurement, f func(measurement) float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = f(m)
	}
	return out
}

func p50(m measurement) float64 { return m.p50 }
func p99(m measurement) float64 { return m.p99 }
func cps(m measurement) float64 { return m.cps }
func cpu(m measurement) float64 { return m.cpu }

// paired is f(gateway) op f(direct) per repetition (the repetitions ran
// back to back, so each pair saw the same drift).
func paired(gw, dir []measurement, f func(measurement) float64, op func(a, b float64) float64) []float64 {
	n := min(len(gw), len(dir))
	out := make([]float64, n)
	for i := range n {
		out[i] = op(f(gw[i]), f(dir[i]))
	}
	return out
}

func sub(a, b float64) float64 { return a - b }
func div(a, b float64) float64 { return a / b }

// loadStart is the load average when the run began.
var loadStart = load.SystemLoad()

func goVersion() string {
	out, err := exec.Command("go", "version").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

func report(w io.Writer, eras []string, callerCounts []int, res map[key][]measurement, elapsed time.Duration) {
	fmt.Fprintf(w, "Run %s, commit %s, %d CPUs, %s; %d repetitions, each target %s warm-up + %s measured per era and caller count, targets interleaved (order rotated each repetition); %s in all.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), headShort(), runtime.NumCPU(), goVersion(), *reps, *warmup, *dur, elapsed.Round(time.Second))
	fmt.Fprintf(w, "Load average at the start %s, at the end %s (the machine is shared: anything else running competes with the load generator and the servers for the same CPUs).\n\n", loadStart, load.SystemLoad())
	fmt.Fprintf(w, "Echo with a small message over Streamable HTTP; median (min–max) over the repetitions. p50 and p99 are of every call that ended in the measured window; CPU µs/call is the target process's own CPU time (user and system, from /proc) in that window over its calls (a gateway's, not its upstream's).\n\n")
	fmt.Fprintf(w, "| era | callers | target | p50 µs | p99 µs | calls/s | CPU µs/call |\n|---|---:|---|---:|---:|---:|---:|\n")
	for _, era := range eras {
		for _, n := range callerCounts {
			for _, t := range targets {
				ms := res[key{era, n, t}]
				fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s |\n", era, n, t, cell(field(ms, p50)), cell(field(ms, p99)), cell(field(ms, cps)), cell(field(ms, cpu)))
			}
		}
	}

	fmt.Fprintf(w, "\nDerived, per repetition (gateway against the direct run next to it), median (min–max):\n\n")
	fmt.Fprintf(w, "| era | callers | upstream | added p50 µs | added p99 µs | calls/s gateway/direct |\n|---|---:|---|---:|---:|---:|\n")
	for _, era := range eras {
		for _, n := range callerCounts {
			dir := res[key{era, n, direct}]
			for _, t := range targets[1:] {
				gw := res[key{era, n, t}]
				fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", era, n, strings.TrimPrefix(t, "gateway-"),
					cell(paired(gw, dir, p50, sub)), cell(paired(gw, dir, p99, sub)), cell(paired(gw, dir, cps, div)))
			}
		}
	}

	fmt.Fprintf(w, "\nTargets:\n\n")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	for _, era := range eras {
		dir1 := res[key{era, 1, direct}]
		dir64 := res[key{era, ratioCallers, direct}]
		for _, t := range targets[1:] {
			up := strings.TrimPrefix(t, "gateway-")
			if len(dir1) > 0 {
				a := median(paired(res[key{era, 1, t}], dir1, p50, sub))
				if t == gatewayHTTP {
					fmt.Fprintf(w, "- %s, %s upstream: added p50 at 1 caller %s µs (target ≤ %.0f µs): %s\n", era, up, num(a), maxAddedP50, verdict(a <= maxAddedP50))
				} else {
					fmt.Fprintf(w, "- %s, %s upstream: added p50 at 1 caller %s µs (no target; for comparison)\n", era, up, num(a))
				}
			}
			if len(dir64) > 0 {
				r := median(paired(res[key{era, ratioCallers, t}], dir64, cps, div))
				fmt.Fprintf(w, "- %s, %s upstream: calls/s gateway/direct at %d callers %.2f (target ≥ %.1f): %s\n", era, up, ratioCallers, r, minRatio64, verdict(r >= minRatio64))
			}
		}
	}
}
