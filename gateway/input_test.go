package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// An upstream tool's elicitation reaches the downstream client of the one
// call in flight, and its answer comes back.
func TestElicitationAcrossTheHop(t *testing.T) {
	up := server.New(mcp.Implementation{Name: "ask", Version: "1"})
	must(server.AddTool(up, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (echoOut, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		if err != nil {
			return echoOut{}, err
		}
		name, _ := res.Content["name"].(string)
		return echoOut{Echo: res.Action + ":" + name, From: "ask"}, nil
	}))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "q", Server: up}}})
	asked := make(chan string, 1)
	c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithElicitationHandler(
		func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked <- p.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
		}))
	res, err := c.CallTool(context.Background(), "q__ask", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := <-asked; m != "Your name?" {
		t.Fatalf("asked %q", m)
	}
	if !strings.Contains(string(res.StructuredContent), `"echo":"accept:Ann"`) {
		t.Fatalf("result %s", res.StructuredContent)
	}
}

// A 2026-07-28 caller cannot be asked for input during a forwarded call:
// the upstream's elicitation is refused with an error that says why (this
// upstream speaks 2026-07-28 too, so its input round fails the call, which
// the caller gets as a tool error naming the upstream), and the caller is
// never asked.
func TestElicitationRefusedForModernCaller(t *testing.T) {
	up := server.New(mcp.Implementation{Name: "ask", Version: "1"})
	must(server.AddTool(up, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (echoOut, error) {
		if _, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}); err != nil {
			return echoOut{}, err
		}
		return echoOut{Echo: "asked"}, nil
	}))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "q", Server: up}}})
	c := downstream(t, g, client.WithEra(mcp.EraModern), client.WithElicitationHandler(
		func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			t.Error("the 2026-07-28 caller was asked")
			return &mcp.ElicitResult{Action: "decline"}, nil
		}))
	_, err := c.CallTool(context.Background(), "q__ask", nil)
	var te *client.ToolError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `upstream "q"`) ||
		!strings.Contains(err.Error(), "the calling client speaks 2026-07-28, which the gateway cannot ask for input") {
		t.Fatalf("call: %v", err)
	}
}

// An upstream's log message during a call reaches the downstream client.
func TestUpstreamLogReachesCaller(t *testing.T) {
	up := server.New(mcp.Implementation{Name: "talk", Version: "1"})
	must(server.AddTool(up, &mcp.Tool{Name: "talk"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (struct{}, error) {
		return struct{}{}, req.Log(ctx, mcp.LevelWarning, "talker", "careful")
	}))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "t", Server: up}}})
	logs := make(chan client.LogMessage, 10)
	c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithLogHandler(func(m client.LogMessage) { logs <- m }))
	if _, err := c.CallTool(context.Background(), "t__talk", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-logs:
		if m.Level != mcp.LevelWarning || m.Logger != "talker" || string(m.Data) != `"careful"` {
			t.Fatalf("log %+v", m)
		}
	default:
		t.Fatal("no log message before the result")
	}
}
