package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestReport prints a report of made-up figures and checks the tables and
// verdicts the new workloads add.
func TestReport(t *testing.T) {
	r := results{}
	for impl, v := range map[string]float64{"floor": 100, "toolwire": 95, "go-sdk": 20, "mcp-go": 60} {
		r.add("W6", impl, sample{"allocs": 200 - v})
		r.add("W7", impl, sample{"p50": 10000 / v, "p99": 20000 / v, "cps1": v, "cps8": v * 8, "cps64": v * 9})
		r.add("W8", impl, sample{"ns": 1000, "bytes": 100, "allocs": 210 - v})
	}
	for client, v := range map[string]float64{"bare": 100, "toolwire": 90, "go-sdk": 40, "mcp-go": 70} {
		r.add("C1", client, sample{"p50": 10000 / v, "p99": 20000 / v, "cps1": v, "cps8": v * 8, "cps64": v * 9, "allocs": 10000 / v, "bytes": 1e5 / v, "cpu": 1000 / v})
	}
	var b bytes.Buffer
	report(&b, &config{reps: 1}, envInfo{}, []string{"floor", "toolwire", "go-sdk", "mcp-go"}, []string{"bare", "toolwire", "go-sdk", "mcp-go"}, r)
	out := b.String()
	for _, want := range []string{
		"| W7 2026 echo calls/s, 8 callers | 800 | 760 | 160 | 480 |",
		"| W7 2026 echo calls/s, 8 callers | 0.95 | 0.20 | 0.60 |", // ratios to the floor
		"StreamableHTTPOptions{Stateless: true}",
		"| W7 2026 calls/s at 8 callers (ratio) | 0.20 | 0.60 | 0.95 | >= 0.85 | yes |",
		"| W8 allocs per 2026 call / W6 allocs per 2025 call | 1.06 | 1.07 | 1.10 | <= 1.10 | yes |",
		"| C1 echo calls/s, 64 callers | 900 | 810 | 360 | 630 |",
		"| C1 allocs per call (client process) | 1.11 | 2.50 | 1.43 |", // ratios to bare
		"| C1 echo sequential p50 (µs) | 100 | 250 | 143 | 111 | < go-sdk and mcp-go | yes |",
		"| C1 allocs per call (client process), ratio to bare | 1.00 | 2.50 | 1.43 | 1.11 | <= 1.3x | yes |",
		"| C1 echo calls/s, 8 callers | 800 | 320 | 560 | 720 | > go-sdk and mcp-go | yes |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(out, "W1 calls/s at 8 callers") {
		t.Error("a target of W1 was printed without W1's figures")
	}
	if t.Failed() {
		t.Log(out)
	}
}
