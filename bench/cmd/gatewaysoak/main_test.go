package main

import (
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	const body = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 61
go_memstats_heap_inuse_bytes 5.9768832e+06
go_goroutines_other 3
toolwire_gateway_calls_total{upstream="a b",method="tools/call",tool="x",outcome="ok"} 12
process_open_fds 34 1700000000000
`
	m, err := parseMetrics(body, "go_goroutines", "go_memstats_heap_inuse_bytes", "process_open_fds")
	if err != nil {
		t.Fatal(err)
	}
	if m["go_goroutines"] != 61 || m["go_memstats_heap_inuse_bytes"] != 5976883.2 || m["process_open_fds"] != 34 {
		t.Fatalf("got %v", m)
	}
	for _, tc := range []struct{ body, want string }{
		{body, "no process_resident_memory_bytes"},
		{"process_resident_memory_bytes 1\nprocess_resident_memory_bytes 2\n", "twice"},
		{"process_resident_memory_bytes NaN\n", "value"},
		{"process_resident_memory_bytes x\n", "value"},
		{"process_resident_memory_bytes\n", "malformed"},
		{"process_resident_memory_bytes 1 2 3\n", "malformed"},
	} {
		_, err := parseMetrics(tc.body, "process_resident_memory_bytes")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want one saying %q", tc.body, err, tc.want)
		}
	}
}
