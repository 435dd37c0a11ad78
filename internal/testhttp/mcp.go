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

// OpenMCPGet sends MCPGet with c (http.DefaultClient when nil), for as
// long as t runs, and returns the response with its body unread, for a
// test that reads the stream as it arrives; the test closes the body. An
// error sending it fails t.
func OpenMCPGet(t testing.TB, c *http.Client, url, session, lastEventID string) *http.Response {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(MCPGet(t, url, session, lastEventID).WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// FirstEventID opens session's SSE stream at url with OpenMCPGet and
// returns the id of its first event that has one (a 2025-11-25 server's
// priming event), then closes the stream. A status other than 200, or a
// stream that ends with no event id, fails t.
func FirstEventID(t testing.TB, c *http.Client, url, session string) string {
	t.Helper()
	res := OpenMCPGet(t, c, url, session, "")
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", res.StatusCode)
	}
	sr := NewSSEReader(res.Body)
	for e, ok := sr.Next(); ok; e, ok = sr.Next() {
		if e.ID != "" {
			return e.ID
		}
	}
	t.Fatal("the GET stream ended with no event id")
	return ""
}
