package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// backServer hosts "roots", which pings the client and lists its roots
// mid-call, and "ping-until-cancelled", which waits on a ping the client
// never answers.
func backServer(t *testing.T, mws ...jsonrpc.Middleware) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "back", Version: "1"}, server.WithSendingMiddleware(mws...))
	type none struct{}
	if err := server.AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		if err := req.Ping(ctx); err != nil {
			return "", err
		}
		res, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return strings.Join(uris, ","), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "ping-until-cancelled"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		err := req.Ping(ctx)
		return "", err
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

func initializeWithRoots(p *peer) {
	p.t.Helper()
	p.initializeWith("2025-11-25", map[string]any{"roots": map[string]any{}})
}

// A tool calls its client back in the middle of a call: the server sends
// ping and roots/list on the connection, the answers reach the waiting
// handler, and only then does the call complete.
func TestServerCallsClientMidCall(t *testing.T) {
	var seen []string
	observe := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			res, err := next(ctx, req)
			seen = append(seen, req.Method)
			return res, err
		}
	}
	p := connect(t, backServer(t, observe))
	initializeWithRoots(p)
	_, done := p.start("tools/call", map[string]any{"name": "roots"})

	ping := p.request()
	if ping.Method != "ping" || ping.Params != nil {
		t.Fatalf("first server request: %s %s", ping.Method, ping.Params)
	}
	// A response to an id the server never used is dropped, and the call
	// goes on waiting for the real one.
	p.send(&jsonrpc.Response{ID: jsonrpc.Int64ID(999), Result: json.RawMessage(`{}`)})
	p.send(&jsonrpc.Response{ID: ping.ID, Result: json.RawMessage(`{}`)})
	roots := p.request()
	if roots.Method != "roots/list" || roots.ID == ping.ID {
		t.Fatalf("second server request: %s id %s (ping was %s)", roots.Method, roots.ID, ping.ID)
	}
	select {
	case r := <-done:
		t.Fatalf("call answered before the client answered roots/list: %+v", r)
	default:
	}
	p.send(&jsonrpc.Response{ID: roots.ID, Result: json.RawMessage(`{"roots":[{"uri":"file:///a"},{"uri":"file:///b","name":"b"}]}`)})
	if got := text(t, callResult(t, p.wait(done))); got != "file:///a,file:///b" {
		t.Errorf("result %q", got)
	}
	if strings.Join(seen, ",") != "ping,roots/list" {
		t.Errorf("sending middleware saw %v", seen)
	}
}

// The client's JSON-RPC error reaches the handler as a *jsonrpc.Error; a
// client without the roots capability is never asked.
func TestServerCallErrors(t *testing.T) {
	p := connect(t, backServer(t))
	initializeWithRoots(p)
	_, done := p.start("tools/call", map[string]any{"name": "roots"})
	ping := p.request()
	p.send(&jsonrpc.Response{ID: ping.ID, Error: jsonrpc.NewError(-32001, "busy")})
	res := callResult(t, p.wait(done))
	if !res.IsError || !strings.Contains(text(t, res), "busy") {
		t.Errorf("client error not surfaced: %+v", res)
	}

	p2 := connect(t, backServer(t))
	p2.initialize("2025-11-25") // declares no roots
	_, done = p2.start("tools/call", map[string]any{"name": "roots"})
	ping = p2.request()
	p2.send(&jsonrpc.Response{ID: ping.ID, Result: json.RawMessage(`{}`)})
	res = callResult(t, p2.wait(done))
	if !res.IsError || !strings.Contains(text(t, res), `did not declare the "roots" capability`) {
		t.Errorf("missing capability: %+v", res)
	}
	p2.noRequest("a client without the roots capability")
}

// When the call is cancelled while the server waits on the client, the
// server tells the client to stop waiting on its own request too.
func TestServerCallCancelledTellsClient(t *testing.T) {
	p := connect(t, backServer(t))
	initializeWithRoots(p)
	id, _ := p.start("tools/call", map[string]any{"name": "ping-until-cancelled"})
	ping := p.request()
	p.send(&jsonrpc.Notification{Method: mcp.NotificationCancelled, Params: json.RawMessage(`{"requestId":` + id.String() + `}`)})
	n := p.note()
	var c mcp.CancelledParams
	if n.Method != mcp.NotificationCancelled || json.Unmarshal(n.Params, &c) != nil || c.RequestID == nil || *c.RequestID != ping.ID {
		t.Fatalf("want notifications/cancelled for %s, got %s %s", ping.ID, n.Method, n.Params)
	}
}

// 2026-07-28 has no server-to-client requests: the handler is told so and
// nothing is sent.
func TestModernHasNoBackChannel(t *testing.T) { synctest.Test(t, testModernHasNoBackChannel) }

func testModernHasNoBackChannel(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "back", Version: "1"})
	type none struct{}
	var got error
	if err := server.AddTool(s, &mcp.Tool{Name: "ping"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		got = req.Ping(ctx)
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	r := p.call("tools/call", map[string]any{"name": "ping", "_meta": modernMeta()})
	if r.Error != nil || !errors.Is(got, server.ErrNoBackChannel) {
		t.Fatalf("modern ping: %v (result %s %v)", got, r.Result, r.Error)
	}
	quiesce()
	p.noRequest("a 2026-07-28 client")
}

// Closing the session fails a pending server-to-client request at once.
func TestSessionCloseFailsServerCalls(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "back", Version: "1"})
	sent := make(chan jsonrpc.Message, 1)
	ss := s.NewSession(jsonrpc.SenderFunc(func(_ context.Context, m jsonrpc.Message) error {
		select {
		case sent <- m:
		default:
		}
		return nil
	}))
	init := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "initialize",
		Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)}
	if r := ss.HandleRequest(context.Background(), init, nil); r.Error != nil {
		t.Fatal(r.Error)
	}
	errc := make(chan error, 1)
	go func() { _, err := ss.Call(context.Background(), "ping", nil); errc <- err }()
	testwait.Recv(t, sent, "the ping to be sent")
	ss.Close()
	if err := testwait.Recv(t, errc, "the pending call to fail on Close"); err == nil {
		t.Error("pending call succeeded after close")
	}
}
