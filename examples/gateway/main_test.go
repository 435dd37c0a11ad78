package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// The example serves its in-process greeter and an HTTP upstream given as
// -upstream behind one endpoint, each under its prefix, until its context
// ends.
func TestGatewayExampleServesBoth(t *testing.T) {
	other := server.New(mcp.Implementation{Name: "other", Version: "1.0.0"})
	type none struct{}
	if err := server.AddTool(other, &mcp.Tool{Name: "ping"}, func(context.Context, *server.CallRequest, none) (string, error) {
		return "pong", nil
	}); err != nil {
		t.Fatal(err)
	}
	h := streamable.NewHandler(other)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	var extra upstreams
	if err := extra.Set("other=" + hs.URL + "/mcp"); err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithCancel(testwait.Context(t))
	ready := make(chan daemon.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "127.0.0.1:0", extra, slog.New(slog.DiscardHandler), func(a daemon.Addrs) { ready <- a })
	}()
	addrs := testwait.Recv(t, ready, "the gateway serving")

	c, err := client.Connect(ctx, &client.HTTP{URL: addrs.MCP})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(ctx)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if err != nil || !slices.Equal(names, []string{"greeter__greet", "other__ping"}) {
		t.Errorf("tools: %v %v", names, err)
	}
	res, err := c.CallTool(ctx, "greeter__greet", map[string]any{"name": "Ada"})
	if err != nil || string(res.StructuredContent) != `{"greeting":"Hello, Ada!"}` {
		t.Errorf("greeter__greet: %+v %v", res, err)
	}
	c.Close()
	stop()
	if err := testwait.Recv(t, done, "the gateway's end"); err != nil {
		t.Errorf("run: %v", err)
	}
	if err := extra.Set("nameless"); err == nil {
		t.Error("-upstream without a URL was accepted")
	}
}
