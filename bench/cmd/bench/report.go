package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/toolwire/toolwire/bench/impls"
)

// results: workload -> server -> figure -> one value per repetition.
type results map[string]map[string]map[string][]float64

func (r results) add(w, impl string, s sample) {
	if r[w] == nil {
		r[w] = map[string]map[string][]float64{}
	}
	if r[w][impl] == nil {
		r[w][impl] = map[string][]float64{}
	}
	for k, v := range s {
		r[w][impl][k] = append(r[w][impl][k], v)
	}
}

func (r results) get(w, impl, m string) []float64 { return r[w][impl][m] }

// envInfo records what was measured and on what.
type envInfo struct {
	Date       string   `json:"date"`
	Command    string   `json:"command"`
	Go         string   `json:"go"`
	CPU        string   `json:"cpu"`
	CPUs       int      `json:"cpus"`
	Toolwire   string   `json:"toolwire"`
	Peers      []string `json:"peers"`
	Load1Start string   `json:"load1Start"`
	Load1End   string   `json:"load1End"`
	Seconds    float64  `json:"seconds"`
}

func describe() envInfo {
	e := envInfo{
		Date:       time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Command:    "go run ./cmd/bench " + strings.Join(os.Args[1:], " "),
		Go:         runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		CPU:        cpuModel(),
		Load1Start: loadavg(),
	}
	if out, err := exec.Command("git", "-C", "..", "describe", "--always", "--dirty").Output(); err == nil {
		e.Toolwire = "commit " + strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("go", "list", "-m", "github.com/modelcontextprotocol/go-sdk", "github.com/mark3labs/mcp-go").Output(); err == nil {
		e.Peers = strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	return e
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// loadavg is the 1, 5 and 15 minute load averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// figure is one row of the tables.
type figure struct {
	w, m, label string
	lowerBetter bool
	ratio       bool // show a ratio to the floor
}

var figures = []figure{
	{"W1", "p50", "W1 echo sequential p50 (µs)", true, true},
	{"W1", "p99", "W1 echo sequential p99 (µs)", true, true},
	{"W1", "cps1", "W1 echo calls/s, 1 caller", false, true},
	{"W1", "cps8", "W1 echo calls/s, 8 callers", false, true},
	{"W1", "cps64", "W1 echo calls/s, 64 callers", false, true},
	{"W2", "cps", "W2 add calls/s, 8 callers", false, true},
	{"W3", "cps", "W3 big (1 MiB) calls/s, 4 callers", false, true},
	{"W3", "mbps", "W3 big MB/s (response bodies)", false, true},
	{"W4", "cps", "W4 stdio echo calls/s, sequential", false, true},
	{"W5", "rss", "W5 RSS growth per idle session (KB)", true, false},
	{"W5", "heap", "W5 live heap growth per idle session (KB)", true, false},
	{"W5", "gor", "W5 goroutines per idle session", true, false},
	{"W5", "secs", "W5 time to open the sessions (s)", true, true},
	{"W6", "ns", "W6 in-process tools/call ns/op", true, true},
	{"W6", "bytes", "W6 in-process tools/call B/op", true, true},
	{"W6", "allocs", "W6 in-process tools/call allocs/op", true, true},
}

func num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "–"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func cell(v []float64) string {
	if len(v) == 0 {
		return "–"
	}
	if len(v) == 1 {
		return num(v[0])
	}
	return fmt.Sprintf("%s (%s–%s)", num(median(v)), num(slices.Min(v)), num(slices.Max(v)))
}

// ratio is impl's median over the floor's: how many times the floor's
// throughput (or latency, or cost) it has.
func ratio(r results, f figure, impl string) float64 {
	a, b := r.get(f.w, impl, f.m), r.get(f.w, impls.Floor, f.m)
	if len(a) == 0 || len(b) == 0 || median(b) == 0 {
		return math.NaN()
	}
	return median(a) / median(b)
}

// target is one line of the targets table.
type target struct {
	label  string
	f      figure
	useRat bool // compare the ratio to the floor, else the absolute value
	goal   float64
	atMost bool
	show   string
}

func report(w io.Writer, c *config, e envInfo, names []string, r results) {
	fmt.Fprintf(w, "Run %s, %s; %d repetitions, %s per calls/s figure (+%s warm-up), %d sequential latency calls, %d W5 sessions, W6 benchtime %s; took %.0fs.\n\n",
		e.Date, e.Command, c.reps, c.dur, c.warmup, c.latencyCalls, c.sessions, c.benchtime, e.Seconds)
	fmt.Fprintf(w, "Machine: %d CPUs (%s), %s; load average (1, 5, 15 min) %s at start, %s at end.\n", e.CPUs, e.CPU, e.Go, e.Load1Start, e.Load1End)
	fmt.Fprintf(w, "Measured: toolwire %s; %s.\n\n", e.Toolwire, strings.Join(e.Peers, "; "))

	fmt.Fprintf(w, "### Results: median (min–max) of %d repetitions\n\n", c.reps)
	fmt.Fprintf(w, "| figure | %s |\n|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, f := range figures {
		if r[f.w] == nil {
			continue
		}
		row := []string{f.label}
		for _, n := range names {
			row = append(row, cell(r.get(f.w, n, f.m)))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}

	var others []string
	for _, n := range names {
		if n != impls.Floor {
			others = append(others, n)
		}
	}
	if slices.Contains(names, impls.Floor) && len(others) > 0 {
		fmt.Fprintf(w, "\n### Ratios to the floor (medians; throughput: higher is better, latency and cost: lower is better)\n\n")
		fmt.Fprintf(w, "| figure | %s |\n|---|%s\n", strings.Join(others, " | "), strings.Repeat("---|", len(others)))
		for _, f := range figures {
			if !f.ratio || r[f.w] == nil {
				continue
			}
			row := []string{f.label}
			for _, n := range others {
				row = append(row, num(ratio(r, f, n)))
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}

	targets := []target{
		{"W1 calls/s at 8 callers (ratio)", figures[3], true, 0.85, false, ">= 0.85"},
		{"W1 calls/s at 64 callers (ratio)", figures[4], true, 0.85, false, ">= 0.85"},
		{"W1 sequential p50 latency (ratio)", figures[0], true, 1.15, true, "<= 1.15x"},
		{"W3 1 MiB results calls/s (ratio)", figures[6], true, 0.8, false, ">= 0.8"},
		{"W4 stdio calls/s (ratio)", figures[8], true, 0.7, false, ">= 0.7"},
		{"W5 live heap per idle session (KB)", figures[10], false, 1, true, "<= 1 KB"},
		{"W5 goroutines per idle session", figures[11], false, 0.5, true, "0 (< 0.5)"},
		{"W6 allocs per in-process call", figures[15], false, 70, true, "<= 70"},
	}
	fmt.Fprintf(w, "\n### Against the targets of issue 6 (same run)\n\n")
	fmt.Fprintf(w, "| figure | go-sdk | mcp-go | toolwire | target | toolwire meets it |\n|---|---|---|---|---|---|\n")
	for _, t := range targets {
		if r[t.f.w] == nil {
			continue
		}
		val := func(impl string) float64 {
			if t.useRat {
				return ratio(r, t.f, impl)
			}
			v := r.get(t.f.w, impl, t.f.m)
			if len(v) == 0 {
				return math.NaN()
			}
			return median(v)
		}
		tw := val(impls.Toolwire)
		met := "no"
		switch {
		case math.IsNaN(tw):
			met = "–"
		case t.atMost && tw <= t.goal, !t.atMost && tw >= t.goal:
			met = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", t.label, num(val(impls.GoSDK)), num(val(impls.MCPGo)), num(tw), t.show, met)
	}
}
