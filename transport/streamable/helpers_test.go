package streamable

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// fixture is a server with tools that exercise the transport, and hooks the
// tests use to steer them.
type fixture struct {
	srv     *server.Server
	release chan struct{} // closed to let "gate" and "reconnect" return
	started chan struct{} // receives when "block" or "gate" starts
	stopped chan error    // receives the cause when "block" sees its context end
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		srv:     server.New(mcp.Implementation{Name: "streamable-test", Version: "1.0.0"}),
		release: make(chan struct{}),
		started: make(chan struct{}, 16),
		stopped: make(chan error, 16),
	}
	type none struct{}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	testtools.AddEcho(t, f.srv, "Echo: ")
	must(server.AddTool(f.srv, &mcp.Tool{Name: "progress", Description: "reports progress 1..3"},
		func(ctx context.Context, req *server.CallRequest, in none) (string, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Progress(ctx, float64(i), 3, "step"); err != nil {
					return "", err
				}
			}
			return "done", nil
		}))
	must(server.AddTool(f.srv, &mcp.Tool{Name: "block", Description: "runs until cancelled"},
		func(ctx context.Context, req *server.CallRequest, in none) (string, error) {
			f.started <- struct{}{}
			<-ctx.Done()
			f.stopped <- context.Cause(ctx)
			return "", ctx.Err()
		}))
	must(server.AddTool(f.srv, &mcp.Tool{Name: "gate", Description: "returns once released"},
		func(ctx context.Context, req *server.CallRequest, in none) (string, error) {
			f.started <- struct{}{}
			select {
			case <-f.release:
				return "released", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}))
	must(server.AddTool(f.srv, &mcp.Tool{Name: "reconnect", Description: "closes its SSE stream, reports progress, returns once released"},
		func(ctx context.Context, req *server.CallRequest, in none) (string, error) {
			if !CloseSSEStream(ctx) {
				return "", context.Canceled
			}
			if err := req.Progress(ctx, 1, 2, "after close"); err != nil {
				return "", err
			}
			<-f.release
			return "reconnected", nil
		}))
	must(server.AddTool(f.srv, &mcp.Tool{Name: "headers", Description: "takes header-mirrored arguments",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"region":{"type":"string","x-mcp-header":"Region"},` +
			`"count":{"type":"integer","x-mcp-header":"Count"},` +
			`"dry":{"type":"boolean","x-mcp-header":"Dry"},` +
			`"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},` +
			`"query":{"type":"string"}}}`)},
		func(ctx context.Context, req *server.CallRequest, in map[string]any) (string, error) {
			return "ok", nil
		}))
	return f
}

// testServer serves a handler on a real loopback listener.
func testServer(t *testing.T, f *fixture, opts ...HandlerOption) (*Handler, *httptest.Server) {
	t.Helper()
	h := NewHandler(f.srv, opts...)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return h, ts
}

// servePost has h serve a 2025-11-25 POST of body, in session ("" for
// none), recording the response.
func servePost(h http.Handler, session, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
		r.Header.Set("Mcp-Protocol-Version", mcp.Version20251125)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// openSession serves a new fixture on a loopback listener (testServer)
// and opens a 2025-11-25 session on it: the fixture, the handler, the
// server and the session id.
func openSession(t *testing.T) (*fixture, *Handler, *httptest.Server, string) {
	t.Helper()
	f := newFixture(t)
	h, ts := testServer(t, f)
	return f, h, ts, initialize(t, ts.URL)
}

// storedSession serves f with a memory event store and opens a 2025-11-25
// session on it: the store, the handler, the server and the session id.
func storedSession(t *testing.T, f *fixture) (*MemoryEventStore, *Handler, *httptest.Server, string) {
	t.Helper()
	store := NewMemoryEventStore()
	h, ts := testServer(t, f, WithEventStore(store))
	return store, h, ts, initialize(t, ts.URL)
}

var modernMeta = map[string]any{
	mcp.MetaProtocolVersion:    mcp.Version20260728,
	mcp.MetaClientCapabilities: map[string]any{},
	mcp.MetaClientInfo:         map[string]any{"name": "test", "version": "1"},
}

// modernRequest builds a 2026-era POST with every header set right; callers
// then spoil what they test.
func modernRequest(t *testing.T, url string, id any, method string, params map[string]any) *http.Request {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["_meta"]; !ok {
		params["_meta"] = modernMeta
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	r := testhttp.MCPPost(t, url, "", string(body))
	r.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
	r.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		r.Header.Set("Mcp-Name", name)
	}
	return r
}

// legacyRequest builds a 2025-era POST of one raw message.
func legacyRequest(t *testing.T, url, session, body string) *http.Request {
	t.Helper()
	return testhttp.MCPPost(t, url, session, body)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// initialize opens a 2025-era session and returns its id.
func initialize(t *testing.T, url string) string {
	t.Helper()
	resp := do(t, legacyRequest(t, url, "", initializeBody))
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: status %d: %s", resp.StatusCode, body)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: no Mcp-Session-Id in %v", resp.Header)
	}
	resp = do(t, legacyRequest(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	readAll(t, resp)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: status %d", resp.StatusCode)
	}
	return sid
}

func do(t *testing.T, r *http.Request) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// doAsync sends r from a goroutine, for a request that is answered only
// once the test has done something more; the channel gets the response, or
// nil when the request failed.
func doAsync(r *http.Request) <-chan *http.Response {
	replies := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			resp = nil
		}
		replies <- resp
	}()
	return replies
}

// readAll reads resp's body whole and closes it (testhttp.ReadBody).
func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	return testhttp.ReadBody(t, resp)
}

// wantReconnectResumed reads resp, a stream resumed after the priming event
// of a call (id 7) to the reconnect tool: first the progress the tool sent
// before it closed its POST stream, then, once release is closed, the
// reply, live, and then the stream's end. where names the stream in
// failures.
func wantReconnectResumed(t *testing.T, where string, resp *http.Response, release chan struct{}) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume %s: status %d %s", where, resp.StatusCode, readAll(t, resp))
	}
	sr := newSSEReader(resp.Body)
	e, ok := sr.Next()
	if !ok || !strings.Contains(e.Data, `"notifications/progress"`) {
		t.Fatalf("first event %s %+v, want the stored progress", where, e)
	}
	close(release)
	e, ok = sr.Next()
	if !ok || !strings.Contains(e.Data, `"reconnected"`) || !strings.Contains(e.Data, `"id":7`) {
		t.Fatalf("second event %s %+v, want the reply, live", where, e)
	}
	if e, ok := sr.Next(); ok {
		t.Fatalf("the stream %s goes on after the reply: %+v", where, e)
	}
}

// readReply reads the HTTP response to a request written by hand on nc,
// and its body whole; no response fails the test, naming the request.
func readReply(t *testing.T, nc net.Conn, request string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("no reply to %s: %v", request, err)
	}
	return resp, readAll(t, resp)
}

// rpcReply decodes a JSON reply body.
type rpcReply struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func decodeReply(t *testing.T, body string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("reply is not JSON: %v: %q", err, body)
	}
	return r
}

// sseEvent is one parsed server-sent event.
type sseEvent = testhttp.SSEEvent

// newSSEReader parses an event stream as it arrives.
func newSSEReader(r io.Reader) *testhttp.SSEReader { return testhttp.NewSSEReader(r) }
