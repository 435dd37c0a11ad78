package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
)

// member returns the raw bytes of a top-level member of a JSON object.
func member(t *testing.T, raw json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}

func TestStructuredContentRaw(t *testing.T) {
	up := server.New(mcp.Implementation{Name: "raw", Version: "1"})
	// Written by hand: odd spacing, member order and escapes a re-encoding
	// would change.
	structured := json.RawMessage(`{ "z" : 1,  "a":[ 1.50, "\u00e9<>" ], "n" : null }`)
	must(server.AddRawTool(up, &mcp.Tool{Name: "odd", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *server.CallRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "odd"}}, StructuredContent: structured}, nil
		}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	direct, err := client.Connect(ctx, &client.Conn{Conn: memory.Serve(ctx, up)})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	want, err := direct.CallToolRaw(ctx, "odd", nil)
	if err != nil {
		t.Fatal(err)
	}

	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "r", Server: up}}})
	c := downstream(t, g)
	got, err := c.CallToolRaw(ctx, "r__odd", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"structuredContent", "content"} {
		if w, g := member(t, want, name), member(t, got, name); !bytes.Equal(w, g) || len(w) == 0 {
			t.Errorf("%s: direct %s, through the gateway %s", name, w, g)
		}
	}
}

func TestProgressAndCancellation(t *testing.T) {
	cancelled := make(chan struct{})
	up := server.New(mcp.Implementation{Name: "slow", Version: "1"})
	must(server.AddTool(up, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (struct{}, error) {
		_ = req.Progress(ctx, 1, 10, "one")
		_ = req.Progress(ctx, 2, 10, "two")
		<-ctx.Done()
		close(cancelled)
		return struct{}{}, ctx.Err()
	}))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "s", Server: up}}})
	c := downstream(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := make(chan client.Progress, 10)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "s__wait", nil, client.WithProgress(func(p client.Progress) { progress <- p }))
		done <- err
	}()
	for _, want := range []client.Progress{{Progress: 1, Total: 10, Message: "one"}, {Progress: 2, Total: 10, Message: "two"}} {
		if p := <-progress; p != want {
			t.Fatalf("progress %+v, want %+v", p, want)
		}
	}
	cancel()
	<-cancelled // the upstream tool saw its context end
	if err := <-done; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
}

func TestTimeoutIsError(t *testing.T) {
	hang := server.New(mcp.Implementation{Name: "hang", Version: "1"})
	must(server.AddTool(hang, &mcp.Tool{Name: "forever"}, func(ctx context.Context, _ *server.CallRequest, _ struct{}) (struct{}, error) {
		<-ctx.Done()
		return struct{}{}, ctx.Err()
	}))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "hang", Server: hang, Timeout: 100 * time.Millisecond},
		{Name: "ok", Server: echoServer("ok")},
	}})
	c := downstream(t, g)
	ctx := context.Background()
	res, err := c.CallTool(ctx, "hang__forever", nil)
	if client.CodeOf(err) != client.CodeToolError || !res.IsError || !strings.Contains(testmcp.Text(res), `upstream "hang"`) {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if _, err := c.CallTool(ctx, "ok__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
}

func stdioUpstream(t *testing.T, name, mode string) gateway.Upstream {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return gateway.Upstream{Name: name, Command: []string{exe}, Env: map[string]string{"TW_GW_FAKE": mode}, Timeout: 5 * time.Second}
}

func TestGarbageReplyIsError(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		stdioUpstream(t, "junk", "garbage"),
		{Name: "ok", Server: echoServer("ok")},
	}})
	c := downstream(t, g)
	ctx := context.Background()
	res, err := c.CallTool(ctx, "junk__work", nil)
	if client.CodeOf(err) != client.CodeToolError || !strings.Contains(testmcp.Text(res), `upstream "junk"`) {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if _, err := c.CallTool(ctx, "ok__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
}

func TestManyToolsInPages(t *testing.T) {
	const n = 5000
	up := server.New(mcp.Implementation{Name: "many", Version: "1"}, server.WithLimits(server.Limits{PageSize: 100}))
	for i := range n {
		must(server.AddRawTool(up, &mcp.Tool{Name: fmt.Sprintf("t%04d", i), InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *server.CallRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			}))
	}
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "m", Server: up}}},
		gateway.WithServerOptions(server.WithLimits(server.Limits{PageSize: 500})))
	c := downstream(t, g)
	names := testmcp.ToolNames(t, c)
	if len(names) != n || names[0] != "m__t0000" || names[n-1] != "m__t4999" {
		t.Fatalf("%d tools listed downstream", len(names))
	}
	if res, err := c.CallTool(context.Background(), "m__t4321", nil); err != nil || testmcp.Text(res) != "ok" {
		t.Fatal(res, err)
	}
}
