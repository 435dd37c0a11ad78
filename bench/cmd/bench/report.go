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

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/impls"
	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/internal/stat"
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
		Load1Start: load.SystemLoad(),
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

// figure is one row of the tables.
type figure struct {
	w, m, label string
	lowerBetter bool
	ratio       bool // show a ratio to the floor (servers) or the bare caller (clients)
}

// figures are the rows of the servers' tables.
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
	{"W7", "p50", "W7 2026 echo sequential p50 (µs)", true, true},
	{"W7", "p99", "W7 2026 echo sequential p99 (µs)", true, true},
	{"W7", "cps1", "W7 2026 echo calls/s, 1 caller", false, true},
	{"W7", "cps8", "W7 2026 echo calls/s, 8 callers", false, true},
	{"W7", "cps64", "W7 2026 echo calls/s, 64 callers", false, true},
	{"W8", "ns", "W8 in-process 2026 tools/call ns/op", true, true},
	{"W8", "bytes", "W8 in-process 2026 tools/call B/op", true, true},
	{"W8", "allocs", "W8 in-process 2026 tools/call allocs/op", true, true},
}

// clientFigures are the rows of the clients' tables (C1, server: floor).
var clientFigures = []figure{
	{"C1", "p50", "C1 echo sequential p50 (µs)", true, true},
	{"C1", "p99", "C1 echo sequential p99 (µs)", true, true},
	{"C1", "cps1", "C1 echo calls/s, 1 caller", false, true},
	{"C1", "cps8", "C1 echo calls/s, 8 callers", false, true},
	{"C1", "cps64", "C1 echo calls/s, 64 callers", false, true},
	{"C1", "allocs", "C1 allocs per call (client process)", true, true},
	{"C1", "bytes", "C1 bytes allocated per call (client process)", true, true},
	{"C1", "cpu", "C1 CPU µs per call (client process)", true, true},
}

// fig finds a figure by workload and measure.
func fig(w, m string) figure {
	for _, f := range append(slices.Clone(figures), clientFigures...) {
		if f.w == w && f.m == m {
			return f
		}
	}
	panic("no figure " + w + " " + m)
}

// med is the median of one figure of one subject, NaN when not measured.
func (r results) med(w, subject, m string) float64 {
	v := r.get(w, subject, m)
	if len(v) == 0 {
		return math.NaN()
	}
	return stat.Median(v)
}

// ratio is subject's median over base's: how many times base's throughput
// (or latency, or cost) it has.
func ratio(r results, f figure, subject, base string) float64 {
	a, b := r.med(f.w, subject, f.m), r.med(f.w, base, f.m)
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

func report(w io.Writer, c *config, e envInfo, names, clientNames []string, r results) {
	fmt.Fprintf(w, "Run %s, %s; %d repetitions, %s per calls/s figure (+%s warm-up), %d sequential latency calls, %d C1 cost calls, %d W5 sessions, W6/W8 benchtime %s; took %.0fs.\n\n",
		e.Date, e.Command, c.reps, c.dur, c.warmup, c.latencyCalls, c.allocCalls, c.sessions, c.benchtime, e.Seconds)
	fmt.Fprintf(w, "Machine: %d CPUs (%s), %s; load average (1, 5, 15 min) %s at start, %s at end.\n", e.CPUs, e.CPU, e.Go, e.Load1Start, e.Load1End)
	fmt.Fprintf(w, "Measured: toolwire %s; %s.\n", e.Toolwire, strings.Join(e.Peers, "; "))

	if tables(w, c, "Results", "Ratios to the floor", figures, names, impls.Floor, r) {
		if (r["W7"] != nil || r["W8"] != nil) && slices.Contains(names, impls.GoSDK) {
			fmt.Fprintf(w, "\nW7 and W8 run go-sdk's handler with StreamableHTTPOptions{Stateless: true}, the only mode in which v1.8.0 serves 2026-07-28.\n")
		}
		serverTargets(w, r)
	}
	if tables(w, c, "Clients against the floor (C1)", "Ratios to the bare caller", clientFigures, clientNames, clients.Bare, r) {
		fmt.Fprintf(w, "\nEach client runs in its own process with one connected client shared by its callers, on the same keep-alive *http.Client; allocations, bytes and CPU time are runtime.MemStats and getrusage deltas of that process around sequential calls.\n")
		clientTargets(w, r)
	}
}

// tables prints the results of figs for subjects and their ratios to base;
// false when none of figs was measured.
func tables(w io.Writer, c *config, title, ratioTitle string, figs []figure, subjects []string, base string, r results) bool {
	var shown []figure
	for _, f := range figs {
		if r[f.w] != nil {
			shown = append(shown, f)
		}
	}
	if len(shown) == 0 {
		return false
	}
	fmt.Fprintf(w, "\n### %s: median (min–max) of %d repetitions\n\n", title, c.reps)
	fmt.Fprintf(w, "| figure | %s |\n|---|%s\n", strings.Join(subjects, " | "), strings.Repeat("---|", len(subjects)))
	for _, f := range shown {
		row := []string{f.label}
		for _, n := range subjects {
			row = append(row, stat.Cell(r.get(f.w, n, f.m)))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	var others []string
	for _, n := range subjects {
		if n != base {
			others = append(others, n)
		}
	}
	if !slices.Contains(subjects, base) || len(others) == 0 {
		return true
	}
	fmt.Fprintf(w, "\n### %s (medians; throughput: higher is better, latency and cost: lower is better)\n\n", ratioTitle)
	fmt.Fprintf(w, "| figure | %s |\n|---|%s\n", strings.Join(others, " | "), strings.Repeat("---|", len(others)))
	for _, f := range shown {
		if !f.ratio {
			continue
		}
		row := []string{f.label}
		for _, n := range others {
			row = append(row, stat.Num(ratio(r, f, n, base)))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	return true
}
