package streamable

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Outside any request, a server reaches a 2025-era client on the session's
// GET stream; the client's answer, POSTed with the session id, reaches the
// waiting caller.
func TestServerRequestOnGetStream(t *testing.T) {
	srv := server.New(mcp.Implementation{Name: "back", Version: "1"})
	sessions := make(chan *server.Session, 1)
	type none struct{}
	if err := server.AddTool(srv, &mcp.Tool{Name: "remember"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		sessions <- req.Session()
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(srv)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })

	resp := do(t, legacyRequest(t, ts.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`))
	readAll(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	readAll(t, do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)))
	readAll(t, do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember"}}`)))
	ss := testwait.Recv(t, sessions, "the session")

	get := sseGet(t, ts.URL, sid)
	get.Header.Set("MCP-Protocol-Version", "2025-11-25")
	stream := do(t, get)
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", stream.StatusCode)
	}
	defer stream.Body.Close()
	events := newSSEReader(stream.Body)

	type outcome struct {
		raw json.RawMessage
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Limit) // a hang bound
		defer cancel()
		raw, err := ss.Call(ctx, mcp.MethodListRoots, nil)
		done <- outcome{raw, err}
	}()
	var req *jsonrpc.Request
	for req == nil {
		e, ok := events.Next()
		if !ok {
			t.Fatal("GET stream ended before the server's request")
		}
		if e.Data == "" {
			continue // priming event
		}
		msg, _, derr := jsonrpc.Decode([]byte(e.Data))
		if derr != nil {
			t.Fatalf("event %q: %v", e.Data, derr)
		}
		req, _ = msg.(*jsonrpc.Request)
	}
	if req.Method != mcp.MethodListRoots {
		t.Fatalf("server sent %s", req.Method)
	}
	answer, _ := jsonrpc.Encode(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"roots":[{"uri":"file:///x"}]}`)})
	r := do(t, legacyRequest(t, ts.URL, sid, string(answer)))
	readAll(t, r)
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("POST of the answer: %d", r.StatusCode)
	}
	o := testwait.Recv(t, done, "the answer")
	if o.err != nil || string(o.raw) != `{"roots":[{"uri":"file:///x"}]}` {
		t.Fatalf("Session.Call: %s, %v", o.raw, o.err)
	}
}
