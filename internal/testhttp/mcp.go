package testhttp

import (
	"net/http"
	"strings"
	"testing"
)

// MCPPost builds the POST a 2025-era Streamable HTTP client sends to the
// MCP endpoint url for one JSON-RPC message: body as application/json,
// accepting JSON or an SSE stream, and, once a session is open (session
// not empty), its Mcp-Session-Id and the negotiated MCP-Protocol-Version
// 2025-11-25. A test sends it with Do, or changes it first.
func MCPPost(t testing.TB, url, session, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	return req
}

// MCPGet builds the GET with which a 2025-era Streamable HTTP client opens
// the SSE stream of session at the MCP endpoint url, or, when lastEventID
// is not empty, resumes a stream after that event (Last-Event-ID).
func MCPGet(t testing.TB, url, session, lastEventID string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	return req
}
