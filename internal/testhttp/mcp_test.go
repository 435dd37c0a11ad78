package testhttp_test

import (
	"io"
	"net/http"
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
