package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
)

// A timing and logging middleware: it sees every request in both eras, the
// era and client it came from, and the outcome.
func ExampleWithMiddleware() {
	timing := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			start := time.Now()
			res, err := next(ctx, req)
			outcome := "ok"
			if err != nil {
				outcome = "error: " + err.Error()
			} else if r, isCall := res.(*mcp.CallToolResult); isCall && r.IsError {
				outcome = "tool error"
			}
			peer := server.RequestFrom(ctx).Peer
			fmt.Printf("%s from %s (%s): %s, under a second: %v\n", req.Method, peer.ClientInfo.Name, peer.Era, outcome, time.Since(start) < time.Second)
			return res, err
		}
	}
	s := server.New(mcp.Implementation{Name: "timed", Version: "1.0.0"}, server.WithMiddleware(timing))
	type in struct {
		Name string `json:"name"`
	}
	_ = server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
		return "Hello, " + in.Name, nil
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn := memory.Serve(ctx, s)
	send := func(msg string) {
		_ = conn.Write(ctx, []byte(msg))
		_, _ = conn.Read(ctx)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"demo","version":"1"}}`
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},` + meta + `}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":7},` + meta + `}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{` + meta + `}}`)
	// Output:
	// tools/call from demo (modern): ok, under a second: true
	// tools/call from demo (modern): tool error, under a second: true
	// prompts/list from demo (modern): error: jsonrpc error -32601: method not found: "prompts/list" is not served in 2026-07-28, under a second: true
}

// A policy middleware refuses a tools/call with an isError result that says
// why; the tool never runs. It works the same in both eras.
func TestMiddlewareDeniesToolCall(t *testing.T) {
	var runs atomic.Int32
	deny := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == mcp.MethodCallTool {
				var p struct {
					Name string `json:"name"`
				}
				if err := json.Unmarshal(req.Params, &p); err == nil && p.Name == "drop-tables" {
					return mcp.ErrorResult("denied: %q is not allowed for %s clients", p.Name, server.RequestFrom(ctx).Peer.Era), nil
				}
			}
			return next(ctx, req)
		}
	}
	s := server.New(mcp.Implementation{Name: "policy", Version: "1"}, server.WithMiddleware(deny))
	type none struct{}
	for _, name := range []string{"drop-tables", "select"} {
		if err := server.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
			runs.Add(1)
			return "ran " + req.Name, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	modern := connect(t, s)
	for _, c := range []struct {
		p    *peer
		meta map[string]any
		era  string
	}{{legacy, nil, "legacy"}, {modern, modernMeta(), "modern"}} {
		params := map[string]any{"name": "drop-tables"}
		if c.meta != nil {
			params["_meta"] = c.meta
		}
		res := callResult(t, c.p.call("tools/call", params))
		if !res.IsError || text(t, res) != `denied: "drop-tables" is not allowed for `+c.era+` clients` {
			t.Errorf("%s: %+v", c.era, res)
		}
		params["name"] = "select"
		if res := callResult(t, c.p.call("tools/call", params)); res.IsError || text(t, res) != "ran select" {
			t.Errorf("%s allowed call: %+v", c.era, res)
		}
	}
	if runs.Load() != 2 {
		t.Errorf("tools ran %d times, want 2 (the allowed calls only)", runs.Load())
	}
}

// Middleware runs in order (the first outermost), can rewrite params the
// method then decodes exactly, and can refuse with a JSON-RPC error.
func TestMiddlewareOrderRewriteAndRefuse(t *testing.T) {
	var order []string
	mark := func(name string) jsonrpc.Middleware {
		return func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
			return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				order = append(order, name+">")
				res, err := next(ctx, req)
				order = append(order, "<"+name)
				return res, err
			}
		}
	}
	rewrite := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == mcp.MethodCallTool {
				req.Params = json.RawMessage(strings.Replace(string(req.Params), `"Ada"`, `"Grace"`, 1))
			}
			if req.Method == mcp.MethodListTools && server.RequestFrom(ctx).Session() != nil {
				return nil, jsonrpc.NewError(-32042, "listing is refused in sessions")
			}
			return next(ctx, req)
		}
	}
	s := server.New(mcp.Implementation{Name: "mw", Version: "1"}, server.WithMiddleware(mark("a"), mark("b"), rewrite))
	type in struct {
		Name string `json:"name"`
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
		return "Hello, " + in.Name, nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	wantError(t, p.call("tools/list", nil), -32042)
	order = nil
	if got := text(t, callResult(t, p.call("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}}))); got != "Hello, Grace" {
		t.Errorf("rewritten call: %q", got)
	}
	if strings.Join(order, " ") != "a> b> <b <a" {
		t.Errorf("order %v", order)
	}
}
