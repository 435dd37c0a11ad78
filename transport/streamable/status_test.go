package streamable

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// withHeader is r with its header name set to value.
func withHeader(r *http.Request, name, value string) *http.Request {
	r.Header.Set(name, value)
	return r
}

// TestStatusCodes drives each HTTP status the handler answers with and
// checks the JSON-RPC error body that goes with it.
func TestStatusCodes(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f, WithLimits(Limits{MaxBodyBytes: 1024}))
	url := ts.URL
	sid := initialize(t, url)
	// list is a 2025-era tools/list in session sid.
	list := func(sid string) *http.Request {
		return legacyRequest(t, url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}

	cases := []struct {
		name   string
		req    func() *http.Request
		status int
		code   int64 // expected JSON-RPC error code; 0 for none
	}{
		{"legacy notification accepted", func() *http.Request {
			return legacyRequest(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
		}, http.StatusAccepted, 0},
		{"legacy response accepted", func() *http.Request {
			return legacyRequest(t, url, sid, `{"jsonrpc":"2.0","id":"s1","result":{}}`)
		}, http.StatusAccepted, 0},
		{"legacy request answered", func() *http.Request {
			return list(sid)
		}, http.StatusOK, 0},
		{"legacy request without session", func() *http.Request {
			return list("")
		}, http.StatusBadRequest, jsonrpc.CodeInvalidRequest},
		{"unsupported legacy protocol version", func() *http.Request {
			return withHeader(list(sid), "MCP-Protocol-Version", "1999-01-01")
		}, http.StatusBadRequest, jsonrpc.CodeInvalidRequest},
		{"absent protocol version means 2025-03-26", func() *http.Request {
			r := list(sid)
			r.Header.Del("MCP-Protocol-Version")
			return r
		}, http.StatusOK, 0},
		{"parse error", func() *http.Request {
			return legacyRequest(t, url, sid, `{"jsonrpc":`)
		}, http.StatusBadRequest, jsonrpc.CodeParseError},
		{"bad Origin", func() *http.Request {
			return withHeader(list(sid), "Origin", "http://evil.example.com")
		}, http.StatusForbidden, jsonrpc.CodeInvalidRequest},
		{"bad Host", func() *http.Request {
			r := modernRequest(t, url, 3, "server/discover", nil)
			r.Host = "evil.example.com"
			return r
		}, http.StatusForbidden, jsonrpc.CodeInvalidRequest},
		{"loopback Origin accepted", func() *http.Request {
			return withHeader(modernRequest(t, url, 3, "server/discover", nil), "Origin", "http://localhost:3000")
		}, http.StatusOK, 0},
		{"unknown session", func() *http.Request {
			return list("no-such-session")
		}, http.StatusNotFound, jsonrpc.CodeInvalidRequest},
		{"modern unknown method", func() *http.Request {
			return modernRequest(t, url, 4, "unknown/method", nil)
		}, http.StatusNotFound, jsonrpc.CodeMethodNotFound},
		{"modern initialize", func() *http.Request {
			return modernRequest(t, url, 4, "initialize", nil)
		}, http.StatusNotFound, jsonrpc.CodeMethodNotFound},
		{"modern unknown tool", func() *http.Request {
			return modernRequest(t, url, 4, "tools/call", map[string]any{"name": "nope"})
		}, http.StatusBadRequest, jsonrpc.CodeInvalidParams},
		{"modern missing _meta", func() *http.Request {
			return modernRequest(t, url, 5, "server/discover", map[string]any{"_meta": map[string]any{}})
		}, http.StatusBadRequest, jsonrpc.CodeInvalidParams},
		{"modern header mismatch", func() *http.Request {
			return withHeader(modernRequest(t, url, 6, "tools/list", nil), "Mcp-Method", "prompts/list")
		}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
		{"modern unsupported version", func() *http.Request {
			meta := map[string]any{mcp.MetaProtocolVersion: "v999.0.0", mcp.MetaClientCapabilities: map[string]any{}}
			return withHeader(modernRequest(t, url, 7, "server/discover", map[string]any{"_meta": meta}), "MCP-Protocol-Version", "v999.0.0")
		}, http.StatusBadRequest, mcp.CodeUnsupportedProtocolVersion},
		{"modern GET", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, url, nil)
			r.Header.Set("Accept", "text/event-stream")
			r.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
			return r
		}, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest},
		{"modern DELETE", func() *http.Request {
			r, _ := http.NewRequest(http.MethodDelete, url, nil)
			r.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
			return r
		}, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest},
		{"PUT", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPut, url, strings.NewReader("{}"))
			return r
		}, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest},
		{"body too large", func() *http.Request {
			big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", 2000) + `"}}}`
			return legacyRequest(t, url, sid, big)
		}, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest},
		{"Accept without event-stream", func() *http.Request {
			return withHeader(list(sid), "Accept", "application/json")
		}, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest},
		{"wrong Content-Type", func() *http.Request {
			return withHeader(list(sid), "Content-Type", "text/plain")
		}, http.StatusUnsupportedMediaType, jsonrpc.CodeInvalidRequest},
		{"GET without session", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, url, nil)
			r.Header.Set("Accept", "text/event-stream")
			return r
		}, http.StatusBadRequest, jsonrpc.CodeInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := do(t, c.req())
			body := readAll(t, resp)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, c.status, body)
			}
			if c.code == 0 {
				if c.status == http.StatusOK && decodeReply(t, body).Error != nil {
					t.Fatalf("unexpected error body %s", body)
				}
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q, want application/json", ct)
			}
			r := decodeReply(t, body)
			if r.Error == nil || r.Error.Code != c.code {
				t.Fatalf("error %+v, want code %d; body %s", r.Error, c.code, body)
			}
		})
	}

	t.Run("DELETE ends the session, then 404", func(t *testing.T) {
		sid := initialize(t, url)
		r, _ := http.NewRequest(http.MethodDelete, url, nil)
		r.Header.Set("Mcp-Session-Id", sid)
		resp := do(t, r)
		readAll(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("DELETE: status %d", resp.StatusCode)
		}
		resp = do(t, legacyRequest(t, url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		if body := readAll(t, resp); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("after DELETE: status %d, want 404; %s", resp.StatusCode, body)
		}
	})
}

// TestModernErrorsEchoID checks that 2026-era errors name the request.
func TestModernErrorsEchoID(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f)
	r := modernRequest(t, ts.URL, "req-7", "tools/list", nil)
	r.Header.Del("Mcp-Method")
	resp := do(t, r)
	rep := decodeReply(t, readAll(t, resp))
	if resp.StatusCode != http.StatusBadRequest || rep.Error == nil || rep.Error.Code != mcp.CodeHeaderMismatch || rep.ID != "req-7" {
		t.Fatalf("got %d %+v id %v", resp.StatusCode, rep.Error, rep.ID)
	}
}

// TestMaxInFlight: past the bound a request gets 503; once a slot frees up
// requests are served again.
func TestMaxInFlight(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f, WithLimits(Limits{MaxInFlight: 1}))
	replies := make(chan string, 1)
	go func() {
		resp := do(t, modernRequest(t, ts.URL, 1, "tools/call", map[string]any{"name": "gate"}))
		replies <- readAll(t, resp)
	}()
	testwait.Recv(t, f.started, "the first call")
	resp := do(t, modernRequest(t, ts.URL, 2, "tools/list", nil))
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "server busy") || !strings.Contains(body, `"code":-32005`) {
		t.Fatalf("second request: status %d: %s", resp.StatusCode, body)
	}
	close(f.release)
	testwait.Recv(t, replies, "the first reply")
	resp = do(t, modernRequest(t, ts.URL, 3, "tools/list", nil))
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the slot freed: status %d: %s", resp.StatusCode, body)
	}
}

// TestAnsweredStreamsAreBounded: a session keeps only its last few answered
// streams (and their events) for late resumption.
func TestAnsweredStreamsAreBounded(t *testing.T) {
	f := newFixture(t)
	store, h, ts, sid := storedSession(t, f)
	for i := range retainedStreams + 10 {
		resp := do(t, legacyRequest(t, ts.URL, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1}}}`, i+10)))
		readAll(t, resp)
	}
	ls := h.lookup(sid)
	ls.mu.Lock()
	n := ls.streams.Len()
	ls.mu.Unlock()
	if n != retainedStreams { // the standalone stream is kept apart
		t.Fatalf("session holds %d streams, want %d", n, retainedStreams)
	}
	if got, want := store.Len(), retainedStreams*5; got != want { // priming, 3 progress, result
		t.Fatalf("store holds %d events, want %d", got, want)
	}
}
