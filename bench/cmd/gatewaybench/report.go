package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/internal/stat"
)

// Targets of the gateway issue.
const (
	maxAddedP50  = 80.0 // µs over direct, HTTP upstream, 1 caller
	minRatio64   = 0.6  // calls/s gateway/direct at 64 callers
	ratioCallers = 64
	maxTrustP50  = 50.0 // µs gateway-trust over gateway-http, 1 caller
)

// versus are the comparisons of targets other than with direct: each
// target against its reference, when both ran.
var versus = [][2]string{
	{proxyH1, proxyTCP},
	{proxyFloor, proxyTCP},
	{gatewayHTTP, proxyTCP},
	{gatewayHTTP, proxyH1},
	{gatewayHTTP, proxyFloor},
	{gatewayStdio, proxyFloor},
	{gatewayBase, proxyFloor},
	{trustNoAudit, gatewayHTTP},
	{trustNoFsync, gatewayHTTP},
	{gatewayTrust, gatewayHTTP},
	{trustNoFsync, trustNoAudit},
	{gatewayTrust, trustNoFsync},
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
	if len(auditNotes) > 0 {
		var ns []string
		for _, t := range targets {
			if n, ok := auditNotes[t]; ok {
				ns = append(ns, t+": "+n)
			}
		}
		fmt.Fprintf(w, "Gateways without trust settings: %s.", strings.Join(ns, "; "))
		if slices.ContainsFunc(targets, isTrust) {
			fmt.Fprintf(w, " gateway-trust-*: an API key sent as a bearer token on every request and a persona allowing every tool; gateway-trust and gateway-trust-nofsync add a synchronous SQLite audit (fsync on and off) in %s, gateway-trust-noaudit none.", trustWhere())
		}
		fmt.Fprintf(w, "\n\n")
	}
	fmt.Fprintf(w, "Echo with a small message over Streamable HTTP; median (min–max) over the repetitions. p50 and p99 are of every call that ended in the measured window; CPU µs/call is the target process's own CPU time (user and system, from /proc) in that window over its calls (a gateway's, not its upstream's).\n\n")
	fmt.Fprintf(w, "| era | callers | target | p50 µs | p99 µs | calls/s | CPU µs/call |\n|---|---:|---|---:|---:|---:|---:|\n")
	for _, era := range eras {
		for _, n := range callerCounts {
			for _, t := range targets {
				ms := res[key{era, n, t}]
				fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s |\n", era, n, t, stat.Cell(field(ms, p50)), stat.Cell(field(ms, p99)), stat.Cell(field(ms, cps)), stat.Cell(field(ms, cpu)))
			}
		}
	}

	fmt.Fprintf(w, "\nDerived, per repetition (each target against the direct run next to it), median (min–max):\n\n")
	fmt.Fprintf(w, "| era | callers | target | added p50 µs | added p99 µs | calls/s target/direct |\n|---|---:|---|---:|---:|---:|\n")
	for _, era := range eras {
		for _, n := range callerCounts {
			dir := res[key{era, n, direct}]
			for _, t := range targets[1:] {
				gw := res[key{era, n, t}]
				fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", era, n, t,
					stat.Cell(paired(gw, dir, p50, sub)), stat.Cell(paired(gw, dir, p99, sub)), stat.Cell(paired(gw, dir, cps, div)))
			}
		}
	}

	var vs [][2]string
	for _, v := range versus {
		if slices.Contains(targets, v[0]) && slices.Contains(targets, v[1]) {
			vs = append(vs, v)
		}
	}
	if len(vs) > 0 {
		fmt.Fprintf(w, "\nDerived, per repetition, against another target than direct (the floor proxy: the extra hop alone; gateway-http: the gateway without trust settings), median (min–max); CPU is each process's own:\n\n")
		fmt.Fprintf(w, "| era | callers | target | against | added p50 µs | added p99 µs | calls/s target/against | CPU µs/call target/against |\n|---|---:|---|---|---:|---:|---:|---:|\n")
		for _, era := range eras {
			for _, n := range callerCounts {
				for _, v := range vs {
					a, b := res[key{era, n, v[0]}], res[key{era, n, v[1]}]
					fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", era, n, v[0], v[1],
						stat.Cell(paired(a, b, p50, sub)), stat.Cell(paired(a, b, p99, sub)), stat.Cell(paired(a, b, cps, div)), stat.Cell(paired(a, b, cpu, div)))
				}
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
			if len(dir1) > 0 {
				a := stat.Median(paired(res[key{era, 1, t}], dir1, p50, sub))
				if t == gatewayHTTP {
					fmt.Fprintf(w, "- %s, %s: added p50 at 1 caller %s µs (target ≤ %.0f µs): %s\n", era, t, stat.Num(a), maxAddedP50, verdict(a <= maxAddedP50))
				} else {
					fmt.Fprintf(w, "- %s, %s: added p50 at 1 caller %s µs (no target; for comparison)\n", era, t, stat.Num(a))
				}
			}
			if len(dir64) > 0 {
				r := stat.Median(paired(res[key{era, ratioCallers, t}], dir64, cps, div))
				if strings.HasPrefix(t, "proxy-") {
					fmt.Fprintf(w, "- %s, %s: calls/s target/direct at %d callers %.2f (no target; for comparison)\n", era, t, ratioCallers, r)
				} else {
					fmt.Fprintf(w, "- %s, %s: calls/s target/direct at %d callers %.2f (target ≥ %.1f): %s\n", era, t, ratioCallers, r, minRatio64, verdict(r >= minRatio64))
				}
			}
		}
	}
	floorLines(w, eras, callerCounts, res)
	trustLines(w, eras, callerCounts, res, verdict)
}

// floorLines splits the HTTP gateway's overhead into the extra hop (the
// floor proxy over direct) and the gateway's own work (the gateway over
// the floor proxy), and says whether the targets are within the floor's
// reach at all on this machine.
func floorLines(w io.Writer, eras []string, callerCounts []int, res map[key][]measurement) {
	for _, floor := range []string{proxyTCP, proxyH1, proxyFloor} {
		if slices.Contains(targets, floor) {
			floorLinesOf(w, floor, eras, callerCounts, res)
		}
	}
}

func floorLinesOf(w io.Writer, floor string, eras []string, callerCounts []int, res map[key][]measurement) {
	what := "a bare net/http reverse proxy, the extra HTTP hop and nothing else"
	switch floor {
	case proxyTCP:
		what = "a TCP relay, the extra hop below HTTP, the least any proxy in its own process adds"
	case proxyH1:
		what = "the bare reverse proxy calling upstream as the gateway does, on the handler's goroutine: the floor of a gateway built like toolwire's"
	}
	fmt.Fprintf(w, "\nThe floor %s (%s):\n\n", floor, what)
	for _, era := range eras {
		for _, n := range []int{1, ratioCallers} {
			if !slices.Contains(callerCounts, n) {
				continue
			}
			dir, fl, gw := res[key{era, n, direct}], res[key{era, n, floor}], res[key{era, n, gatewayHTTP}]
			hop := stat.Median(paired(fl, dir, p50, sub))
			fr := stat.Median(paired(fl, dir, cps, div))
			fcpu := stat.Median(field(fl, cpu))
			if n == 1 {
				reach := "within reach of the floor"
				if hop > maxAddedP50 {
					reach = "**out of reach even of the floor** (" + floor + " misses it on this machine)"
				}
				fmt.Fprintf(w, "- %s, 1 caller: %s adds %s µs at p50 over direct; the target ≤ %.0f µs is %s\n", era, floor, stat.Num(hop), maxAddedP50, reach)
			} else {
				reach := "within reach of the floor"
				if fr < minRatio64 {
					reach = "**out of reach even of the floor** (" + floor + " misses it on this machine)"
				}
				fmt.Fprintf(w, "- %s, %d callers: %s reaches %.2f of direct's calls/s; the target ≥ %.1f is %s\n", era, n, floor, fr, minRatio64, reach)
			}
			if len(gw) == 0 {
				continue
			}
			all := stat.Median(paired(gw, dir, p50, sub))
			own := stat.Median(paired(gw, fl, p50, sub))
			gr := stat.Median(paired(gw, fl, cps, div))
			gcpu := stat.Median(field(gw, cpu))
			fmt.Fprintf(w, "- %s, %d %s: gateway-http adds %s µs at p50 over direct: %s µs over %s (the gateway's own work) and %s µs the hop (%s over direct); calls/s gateway-http/%s %.2f; CPU µs/call gateway-http %s, %s %s (%.1fx)\n",
				era, n, plural(n, "caller"), stat.Num(all), stat.Num(own), floor, stat.Num(hop), floor, floor, gr, stat.Num(gcpu), floor, stat.Num(fcpu), gcpu/fcpu)
		}
	}
}

// trustLines compares the trust gateways with gateway-http.
func trustLines(w io.Writer, eras []string, callerCounts []int, res map[key][]measurement, verdict func(bool) string) {
	if !slices.Contains(targets, gatewayHTTP) {
		return
	}
	var ts []string
	for _, t := range []string{trustNoAudit, trustNoFsync, gatewayTrust} {
		if slices.Contains(targets, t) {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTrust settings (API key and persona; gateway-trust and -nofsync with a synchronous SQLite audit), against gateway-http:\n\n")
	for _, era := range eras {
		for _, t := range ts {
			for _, n := range callerCounts {
				a, b := res[key{era, n, t}], res[key{era, n, gatewayHTTP}]
				d := stat.Median(paired(a, b, p50, sub))
				r := stat.Median(paired(a, b, cps, div))
				dc := stat.Median(paired(a, b, cpu, sub))
				v := "no target; for comparison"
				if n == 1 {
					v = fmt.Sprintf("target ≤ %.0f µs: %s", maxTrustP50, verdict(d <= maxTrustP50))
				}
				fmt.Fprintf(w, "- %s, %s, %d %s: added p50 %s µs (%s); calls/s %.2f of gateway-http; CPU µs/call %s more\n", era, t, n, plural(n, "caller"), stat.Num(d), v, r, stat.Num(dc))
			}
		}
	}
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// trustWhere says where the trust gateways' audit databases are.
func trustWhere() string {
	if *trustDir != "" {
		return *trustDir
	}
	return "the temp dir (" + os.TempDir() + ")"
}
