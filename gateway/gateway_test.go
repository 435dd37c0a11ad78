package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
	"github.com/toolwire/toolwire/transport/stdio"
)

// TestMain runs the tests, or, with TW_GW_FAKE set, is an upstream over
// stdio: "serve" a real toolwire server (tools pid, block, echo),
// "garbage" a fake that answers tools/call with a line that is not JSON.
func TestMain(m *testing.M) {
	switch os.Getenv("TW_GW_FAKE") {
	case "serve":
		if err := stdio.ServeStdio(context.Background(), stdioServer()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "garbage":
		garbage()
		os.Exit(0)
	}
	// The streamable handler's watchdog ends at its next tick (up to a
	// second) after the last HTTP operation leaves it.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/toolwire/toolwire/transport/streamable.(*watchdog).run"))
}

func stdioServer() *server.Server {
	s := echoServer("stdio")
	must(server.AddTool(s, &mcp.Tool{Name: "pid"}, func(context.Context, *server.CallRequest, struct{}) (struct {
		PID int `json:"pid"`
	}, error) {
		return struct {
			PID int `json:"pid"`
		}{os.Getpid()}, nil
	}))
	must(server.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (struct{}, error) {
		_ = req.Progress(ctx, 1, 0, "blocking")
		<-ctx.Done()
		return struct{}{}, ctx.Err()
	}))
	return s
}

func garbage() {
	testenv.ServeStdio(func(m *jsonrpc.Request, send func(string)) {
		switch m.Method {
		case "initialize":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"junk","version":"1"}}}`, m.ID))
		case "tools/list":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}}`, m.ID))
		case "ping":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID))
		case "tools/call":
			send(`this is not JSON at all {{{`)
		default:
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}`, m.ID, m.Method))
		}
	})
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

type echoIn struct {
	Text string `json:"text"`
}
type echoOut struct {
	Echo string `json:"echo"`
	From string `json:"from"`
}

// echoServer is an upstream with tools echo and secret, a prompt greet
// and a resource.
func echoServer(name string, opts ...server.Option) *server.Server {
	s := server.New(mcp.Implementation{Name: name, Version: "1"}, opts...)
	must(server.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo from " + name},
		func(_ context.Context, _ *server.CallRequest, in echoIn) (echoOut, error) {
			return echoOut{Echo: in.Text, From: name}, nil
		}))
	must(server.AddTool(s, &mcp.Tool{Name: "secret"}, func(context.Context, *server.CallRequest, struct{}) (struct{}, error) {
		return struct{}{}, nil
	}))
	must(server.AddPrompt(s, &mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, _ *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + args["who"] + " from " + name}}}}, nil
		}))
	must(server.AddResource(s, &mcp.Resource{URI: "mem://" + name + "/doc", Name: "doc"},
		func(_ context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: req.URI, Text: "doc of " + name}}}, nil
		}))
	return s
}

func newGateway(t *testing.T, cfg gateway.Config, opts ...gateway.Option) *gateway.Gateway {
	t.Helper()
	opts = append([]gateway.Option{gateway.WithLimits(gateway.Limits{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, StartTimeout: 20 * time.Second})}, opts...)
	g, err := gateway.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return g
}

// downstream connects a client to the gateway in process.
func downstream(t testing.TB, g *gateway.Gateway, opts ...client.Option) *client.Client {
	t.Helper()
	return downstreamAs(t, g, nil, opts...)
}

// downstreamAs connects a client to the gateway in process as p, the
// principal a transport's authentication would have put in the session's
// context (nil: an anonymous caller).
func downstreamAs(t testing.TB, g *gateway.Gateway, p *auth.Principal, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(auth.WithPrincipal(context.Background(), p))
	c, err := client.Connect(ctx, &client.Conn{Conn: memory.Serve(ctx, g.Server())}, opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		cancel()
	})
	return c
}

func stateOf(g *gateway.Gateway, name string) gateway.UpstreamStatus {
	for _, st := range g.Upstreams() {
		if st.Name == name {
			return st
		}
	}
	return gateway.UpstreamStatus{}
}

func TestNamespacingRenameHide(t *testing.T) {
	g := newGateway(t, gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "a", Server: echoServer("a")}, {Name: "b", Server: echoServer("b")}},
		Naming:    gateway.Naming{Rename: map[string]string{"a__echo": "shout"}, Hide: []string{"b__secret"}},
	})
	c := downstream(t, g)
	got := strings.Join(testmcp.ToolNames(t, c), ",")
	if got != "a__secret,b__echo,shout" {
		t.Fatalf("tools = %s", got)
	}
	ctx := context.Background()
	for name, from := range map[string]string{"shout": "a", "b__echo": "b"} {
		res, err := c.CallTool(ctx, name, map[string]any{"text": "hi"})
		if err != nil {
			t.Fatal(err)
		}
		var out echoOut
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.From != from || out.Echo != "hi" {
			t.Fatalf("%s: %s %v", name, res.StructuredContent, err)
		}
	}
	if _, err := c.CallTool(ctx, "b__secret", nil); err == nil {
		t.Fatal("a hidden tool answered")
	}
	// Prompts and resources go to their upstreams.
	p, err := c.GetPrompt(ctx, "b__greet", map[string]string{"who": "Ann"})
	if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "hello Ann from b" {
		t.Fatalf("prompt: %+v %v", p, err)
	}
	r, err := c.ReadResource(ctx, "mem://a/doc")
	if err != nil || r.Contents[0].(*mcp.TextResourceContents).Text != "doc of a" {
		t.Fatalf("resource: %+v %v", r, err)
	}
	st := g.Upstreams()
	if len(st) != 2 || st[0].State != gateway.StateReady || st[1].State != gateway.StateReady || st[0].Tools != 2 {
		t.Fatalf("status: %+v", st)
	}
}

func TestCollisionNamesBoth(t *testing.T) {
	_, err := gateway.New(gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "a", Server: echoServer("a")}, {Name: "b", Server: echoServer("b")}},
		Naming:    gateway.Naming{Rename: map[string]string{"a__echo": "b__echo"}},
	})
	var ce *gateway.CollisionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "a/echo") || !strings.Contains(err.Error(), "b/echo") {
		t.Fatalf("err = %v", err)
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, cfg := range []gateway.Config{
		{Upstreams: []gateway.Upstream{{Name: "A", Server: echoServer("a")}}},
		{Upstreams: []gateway.Upstream{{Name: "a"}}},
		{Upstreams: []gateway.Upstream{{Name: "a", Server: echoServer("a")}, {Name: "a", Server: echoServer("a")}}},
		{Upstreams: []gateway.Upstream{{Name: "a", Server: echoServer("a"), URL: "http://x"}}},
		{Naming: gateway.Naming{Rename: map[string]string{"a__x": "bad name"}}},
	} {
		if _, err := gateway.New(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// recorder collects notifications a downstream client receives.
type recorder struct {
	ch chan string
}

func newRecorder() *recorder { return &recorder{ch: make(chan string, 1000)} }

func (r *recorder) handle(method string, _ json.RawMessage) {
	select {
	case r.ch <- method:
	default:
	}
}

func (r *recorder) wait(t *testing.T, method string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m := <-r.ch:
			if m == method {
				return
			}
		case <-timeout:
			t.Fatalf("no %s", method)
		}
	}
}
