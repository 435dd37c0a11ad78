package main

import (
	"fmt"
	"io"
	"math"

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/impls"
	"github.com/toolwire/toolwire/bench/internal/stat"
)

// target is one line of a targets table: a value of each subject (a ratio
// or an absolute figure) and the goal toolwire's must meet. Targets are
// printed, never asserted.
type target struct {
	label  string
	w      string // printed only when this workload ran
	value  func(r results, subject string) float64
	goal   float64
	atMost bool
	show   string
}

// toFloor is a figure's ratio to the floor's.
func toFloor(w, m string) func(results, string) float64 {
	return func(r results, s string) float64 { return ratio(r, fig(w, m), s, impls.Floor) }
}

// absolute is a figure's median.
func absolute(w, m string) func(results, string) float64 {
	return func(r results, s string) float64 { return r.med(w, s, m) }
}

// serverTargets prints the servers' targets: those of the 2025-11-25
// workloads and those of the 2026-07-28 ones.
func serverTargets(w io.Writer, r results) {
	legacy := []target{
		{"W1 calls/s at 8 callers (ratio)", "W1", toFloor("W1", "cps8"), 0.85, false, ">= 0.85"},
		{"W1 calls/s at 64 callers (ratio)", "W1", toFloor("W1", "cps64"), 0.85, false, ">= 0.85"},
		{"W1 sequential p50 latency (ratio)", "W1", toFloor("W1", "p50"), 1.15, true, "<= 1.15x"},
		{"W3 1 MiB results calls/s (ratio)", "W3", toFloor("W3", "cps"), 0.8, false, ">= 0.8"},
		{"W4 stdio calls/s (ratio)", "W4", toFloor("W4", "cps"), 0.7, false, ">= 0.7"},
		{"W5 live heap per idle session (KB)", "W5", absolute("W5", "heap"), 1, true, "<= 1 KB"},
		{"W5 goroutines per idle session", "W5", absolute("W5", "gor"), 0.5, true, "0 (< 0.5)"},
		{"W6 allocs per in-process call", "W6", absolute("W6", "allocs"), 70, true, "<= 70"},
	}
	modern := []target{
		{"W7 2026 calls/s at 8 callers (ratio)", "W7", toFloor("W7", "cps8"), 0.85, false, ">= 0.85"},
		{"W7 2026 calls/s at 64 callers (ratio)", "W7", toFloor("W7", "cps64"), 0.85, false, ">= 0.85"},
		{"W7 2026 sequential p50 latency (ratio)", "W7", toFloor("W7", "p50"), 1.2, true, "<= 1.2x"},
		{"W8 allocs per 2026 call / W6 allocs per 2025 call", "W8", func(r results, s string) float64 {
			return r.med("W8", s, "allocs") / r.med("W6", s, "allocs")
		}, 1.10, true, "<= 1.10"},
	}
	targetTable(w, "Against the targets of the 2025-11-25 workloads (same run)", legacy, r)
	targetTable(w, "Against the targets of the 2026-07-28 workloads (same run)", modern, r)
}

func targetTable(w io.Writer, title string, ts []target, r results) {
	var shown []target
	for _, t := range ts {
		if r[t.w] != nil {
			shown = append(shown, t)
		}
	}
	if len(shown) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### %s\n\n", title)
	fmt.Fprintf(w, "| figure | go-sdk | mcp-go | toolwire | target | toolwire meets it |\n|---|---|---|---|---|---|\n")
	for _, t := range shown {
		tw := t.value(r, impls.Toolwire)
		met := "no"
		switch {
		case math.IsNaN(tw):
			met = "–"
		case t.atMost && tw <= t.goal, !t.atMost && tw >= t.goal:
			met = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", t.label, stat.Num(t.value(r, impls.GoSDK)), stat.Num(t.value(r, impls.MCPGo)), stat.Num(tw), t.show, met)
	}
}

// clientTarget is one line of the client targets: toolwire's client ahead
// of both peers (ahead: lower, or higher for throughput), or within a factor
// of the bare caller.
type clientTarget struct {
	f      figure
	toBare bool    // compare the ratio to the bare caller, else the peers
	within float64 // with toBare: the largest ratio allowed
}

// clientTargets prints toolwire's client against its targets: ahead of
// go-sdk and mcp-go, and within 1.3x of the bare caller in latency and
// allocations.
func clientTargets(w io.Writer, r results) {
	ts := []clientTarget{
		{fig("C1", "p50"), false, 0},
		{fig("C1", "p50"), true, 1.3},
		{fig("C1", "allocs"), false, 0},
		{fig("C1", "allocs"), true, 1.3},
		{fig("C1", "cps8"), false, 0},
		{fig("C1", "cps64"), false, 0},
	}
	fmt.Fprintf(w, "\n### Against the targets of the client workload (same run)\n\n")
	fmt.Fprintf(w, "| figure | bare | go-sdk | mcp-go | toolwire | target | toolwire meets it |\n|---|---|---|---|---|---|---|\n")
	for _, t := range ts {
		val := func(s string) float64 {
			if t.toBare {
				return ratio(r, t.f, s, clients.Bare)
			}
			return r.med(t.f.w, s, t.f.m)
		}
		tw, gs, mg := val(clients.Toolwire), val(clients.GoSDK), val(clients.MCPGo)
		label, show, ok := t.f.label, "", false
		switch {
		case t.toBare:
			label += ", ratio to bare"
			show = fmt.Sprintf("<= %.1fx", t.within)
			ok = tw <= t.within
		case t.f.lowerBetter:
			show = "< go-sdk and mcp-go"
			ok = (math.IsNaN(gs) || tw < gs) && (math.IsNaN(mg) || tw < mg)
		default:
			show = "> go-sdk and mcp-go"
			ok = (math.IsNaN(gs) || tw > gs) && (math.IsNaN(mg) || tw > mg)
		}
		met := "no"
		switch {
		case math.IsNaN(tw):
			met = "–"
		case ok:
			met = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", label, stat.Num(val(clients.Bare)), stat.Num(gs), stat.Num(mg), stat.Num(tw), show, met)
	}
}
