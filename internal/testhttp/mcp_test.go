package testhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testhttp"
)

// MCPPost carries the body and the media types; the session headers come
// only with a session.
func TestMCPPost(t *testing.T) {
	r := testhttp.MCPPost(t, "http://127.0.0.1:1/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	b, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || string(b) != `{"jsonrpc":"2.0","id":1,"method":"ping"}` ||
		r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json, text/event-stream" {
		t.Fatalf("request %s %v: %s", r.Method, r.Header, b)
	}
	if r.Header.Get("Mcp-Session-Id") != "" || r.Header.Get("MCP-Protocol-Version") != "" {
		t.Fatalf("session headers without a session: %v", r.Header)
	}
	r = testhttp.MCPPost(t, "http://127.0.0.1:1/mcp", "s1", `{}`)
	if r.Header.Get("Mcp-Session-Id") != "s1" || r.Header.Get("MCP-Protocol-Version") != "2025-11-25" {
		t.Fatalf("session headers %v", r.Header)
	}
}

// MCPGet asks for the session's stream, resuming only when given an event
// id.
func TestMCPGet(t *testing.T) {
	r := testhttp.MCPGet(t, "http://127.0.0.1:1/mcp", "s1", "")
	if r.Method != http.MethodGet || r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Mcp-Session-Id") != "s1" ||
		r.Header.Get("MCP-Protocol-Version") != "2025-11-25" || r.Header.Get("Last-Event-ID") != "" {
		t.Fatalf("request %s %v", r.Method, r.Header)
	}
	if r = testhttp.MCPGet(t, "http://127.0.0.1:1/mcp", "s1", "e7"); r.Header.Get("Last-Event-ID") != "e7" {
		t.Fatalf("resuming request %v", r.Header)
	}
}

// FirstEventID sends the session's GET and skips events without an id (a
// comment, an event with data only) to the first one that has one.
func TestFirstEventID(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Mcp-Session-Id") != "s1" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": hello\n\ndata: x\n\nid: prime-1\ndata:\n\nid: 2\ndata: y\n\n")
	}))
	defer ts.Close()
	if got := testhttp.FirstEventID(t, nil, ts.URL, "s1"); got != "prime-1" {
		t.Fatalf("first event id %q, want prime-1", got)
	}
	res := testhttp.OpenMCPGet(t, ts.Client(), ts.URL, "s1", "prime-1")
	defer res.Body.Close()
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK || !strings.Contains(string(b), "id: 2") {
		t.Fatalf("stream %d: %s", res.StatusCode, b)
	}
}
