package main

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// startEverythingSSE runs server-everything in its sse mode, the
// 2024-11-05 HTTP+SSE transport (GET /sse for the event stream, POST
// /message?sessionId=... for messages), on a free port of 127.0.0.1, and
// returns the stream's URL. t.Cleanup kills it by its PID.
func startEverythingSSE(t *testing.T) string {
	t.Helper()
	return "http://" + testenv.EverythingHTTP(t, "sse") + "/sse"
}

// toolwire tools and call reach a server of the 2024-11-05 HTTP+SSE
// transport through the fallback (no flag), and with --transport sse;
// --transport http refuses it as Streamable HTTP does (exit 3).
func TestCLIAgainstSSEServer(t *testing.T) {
	url := startEverythingSSE(t)
	r := runCLI(t, "tools", url)
	if r.code != 0 || !strings.Contains(r.stdout, "echo") || !strings.Contains(r.stdout, "get-sum") {
		t.Fatalf("tools %s: exit %d\n%s\n%s", url, r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"call", url, "echo", "message=over sse"},
		{"call", "--transport", "sse", url, "echo", "message=over sse"},
	} {
		r := runCLI(t, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Echo: over sse") {
			t.Errorf("%v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r = runCLI(t, "call", url, "get-sum", "a=2", "b=3")
	if r.code != 0 || !strings.Contains(r.stdout, "5") {
		t.Errorf("get-sum: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "call", url, "trigger-long-running-operation", "duration=0.2", "steps=2")
	if r.code != 0 || !strings.Contains(r.stdout, "completed") {
		t.Errorf("long-running operation: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "tools", "--transport", "http", url)
	if r.code != 3 || !strings.Contains(r.stderr, "404") {
		t.Errorf("--transport http: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLI(t, "tools", "--transport", "carrier-pigeon", url)
	if r.code != 2 || !strings.Contains(r.stderr, "want auto, http or sse") {
		t.Errorf("--transport carrier-pigeon: exit %d\n%s", r.code, r.stderr)
	}
}
