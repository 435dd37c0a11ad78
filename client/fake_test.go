package client_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// fake is a scripted Streamable HTTP server: it records every request and
// hands each decoded POST to the test's handler. Legacy initialize and
// notifications are answered by default so tests only script what they test.
type fake struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	log     []seen
	session int
	// handle answers a POSTed request; return false to fall back to the
	// defaults (initialize, tools/list with tools, -32601).
	handle func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool
	// answer answers a POSTed response (the client's answer to a server
	// request); nil, or false returned, means 202.
	answer func(w http.ResponseWriter, r *http.Request, resp *jsonrpc.Response) bool
	// get answers GET; nil means 405.
	get func(w http.ResponseWriter, r *http.Request)
	// route, when set, sees every request first (msg is the decoded POST
	// body, nil for GET and DELETE); return true when it answered.
	route func(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message) bool
	tools string // tools/list "tools" JSON array
}

// seen is one request the fake received.
type seen struct {
	Method string // HTTP method
	RPC    string // JSON-RPC method, "" for responses and GET/DELETE
	Header http.Header
	Body   []byte
}

func newFake(t *testing.T) *fake {
	f := &fake{t: t, tools: `[]`}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// on answers the POSTed requests of one JSON-RPC method with reply; the
// others get the defaults. It replaces any handle set before.
func (f *fake) on(method string, reply func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request)) {
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method != method {
			return false
		}
		reply(w, r, req)
		return true
	}
}

func (f *fake) url() string { return f.srv.URL + "/mcp" }

func (f *fake) transport() *client.HTTP { return &client.HTTP{URL: f.url()} }

func (f *fake) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.log...)
}

// calls returns the recorded requests of one JSON-RPC method.
func (f *fake) calls(rpc string) []seen {
	var out []seen
	for _, s := range f.requests() {
		if s.RPC == rpc {
			out = append(out, s)
		}
	}
	return out
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := seen{Method: r.Method, Header: r.Header.Clone(), Body: body}
	var msg jsonrpc.Message
	if r.Method == http.MethodPost {
		var derr *jsonrpc.Error
		msg, _, derr = jsonrpc.Decode(body)
		if derr != nil {
			f.t.Errorf("fake server: client sent a malformed message: %v: %s", derr, body)
			http.Error(w, "bad message", 400)
			return
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			s.RPC = m.Method
		case *jsonrpc.Notification:
			s.RPC = m.Method
		}
	}
	f.mu.Lock()
	f.log = append(f.log, s)
	f.mu.Unlock()
	if f.route != nil && f.route(w, r, msg) {
		return
	}
	switch r.Method {
	case http.MethodGet:
		if f.get != nil {
			f.get(w, r)
			return
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && f.answer != nil && f.answer(w, r, resp) {
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if f.handle != nil && f.handle(w, r, req) {
		return
	}
	switch req.Method {
	case "initialize":
		f.mu.Lock()
		f.session++
		sid := fmt.Sprintf("session-%d", f.session)
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		writeResult(w, req.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake","version":"1"}}`)
	case "tools/list":
		writeResult(w, req.ID, `{"tools":`+f.tools+`}`)
	default:
		writeJSON(w, 200, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID))
	}
}

// legacyOnly makes server/discover fail the way a 2025 server's does.
func legacyOnly(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
	if req.Method == "server/discover" {
		writeJSON(w, 400, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`, req.ID))
		return true
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func writeResult(w http.ResponseWriter, id jsonrpc.ID, result string) {
	writeJSON(w, 200, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result))
}

// writeSSE starts an SSE reply and writes the given raw events.
func writeSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for _, e := range events {
		io.WriteString(w, e)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

// sseData is one SSE event carrying a JSON-RPC message.
func sseData(msg string) string { return "event: message\ndata: " + msg + "\n\n" }

func textResult(text string) string {
	b, _ := json.Marshal(text)
	return `{"content":[{"type":"text","text":` + string(b) + `}]}`
}

// textOf is the text of a result's first block, "" when it has none.
func textOf(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if t, ok := res.Content[0].(*mcp.TextContent); ok {
		return t.Text
	}
	return ""
}

func hasHeader(h http.Header, k, v string) bool { return h.Get(k) == v }

func bodyContains(s seen, sub string) bool { return strings.Contains(string(s.Body), sub) }
