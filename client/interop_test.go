package client_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/reference"
)

// referenceHTTP serves the reference tools over Streamable HTTP in-process.
func referenceHTTP(t *testing.T) string {
	t.Helper()
	srv, err := reference.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	return testmcp.ServeHTTP(t, srv)
}

func TestReferenceOverHTTP(t *testing.T) {
	url := referenceHTTP(t)
	for _, era := range []mcp.Era{mcp.EraAuto, mcp.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			c := connect(t, &client.HTTP{URL: url}, client.WithEra(era))
			if want := map[mcp.Era]mcp.Era{mcp.EraAuto: mcp.EraModern, mcp.EraLegacy: mcp.EraLegacy}[era]; c.Era() != want {
				t.Fatalf("era = %v, want %v", c.Era(), want)
			}
			ctx := context.Background()
			res, err := c.CallTool(ctx, "get-sum", map[string]any{"a": 7, "b": 5})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "The sum of 7 and 5 is 12." {
				t.Errorf("get-sum = %q", got)
			}
			var n int
			var mu sync.Mutex
			_, err = c.CallTool(ctx, "trigger-long-running-operation", map[string]any{"duration": 0.1, "steps": 3},
				client.WithProgress(func(client.Progress) { mu.Lock(); n++; mu.Unlock() }))
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if n != 3 {
				t.Errorf("%d progress reports, want 3", n)
			}
			mu.Unlock()
			res, err = c.CallTool(ctx, "gallery", nil)
			if err != nil || len(res.Content) != 5 {
				t.Fatalf("gallery: %v, %+v", err, res)
			}
		})
	}
}

// everythingHTTP starts server-everything in streamableHttp mode bound to
// 127.0.0.1 (see testenv.EverythingHTTP) and returns its endpoint.
func everythingHTTP(t *testing.T) string {
	t.Helper()
	return "http://" + testenv.EverythingHTTP(t, "streamableHttp") + "/mcp"
}

// server-everything forgets every session when it restarts and answers the
// old one with 400 and JSON-RPC -32000 "Bad Request: No valid session ID
// provided", not 404: the client recognises that as
// session loss, re-initializes once, and the call succeeds on the new
// session.
func TestInteropServerEverythingRestart(t *testing.T) {
	addr, stop := testenv.EverythingHTTPOn(t, "streamableHttp", "0")
	url := "http://" + addr + "/mcp"
	var inits atomic.Int32
	count := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == mcp.MethodInitialize {
				inits.Add(1)
			}
			return next(ctx, req)
		}
	}
	c := connect(t, &client.HTTP{URL: url}, client.WithEra(mcp.EraLegacy), client.WithMiddleware(count))
	ctx := context.Background()
	echo := func() (*mcp.CallToolResult, error) {
		return c.CallTool(ctx, "echo", map[string]string{"message": "again"}, client.WithTimeout(testwait.Limit))
	}
	if _, err := echo(); err != nil {
		t.Fatal(err)
	}
	stop()
	_, port, _ := strings.Cut(addr, ":")
	if a, _ := testenv.EverythingHTTPOn(t, "streamableHttp", port); a != addr {
		t.Fatalf("restarted on %s, not %s", a, addr)
	}
	res, err := echo()
	if err != nil {
		t.Fatalf("after the restart: %s: %v", client.CodeOf(err), err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "Echo: again" {
		t.Errorf("after the restart: %+v", res.Content)
	}
	if n := inits.Load(); n != 2 {
		t.Errorf("%d initialize requests, want 2 (one re-initialization)", n)
	}
}

func TestInteropServerEverything(t *testing.T) {
	node, entry := testenv.Everything(t)
	targets := map[string]func(t *testing.T) client.Transport{
		"stdio": func(t *testing.T) client.Transport {
			return &client.Command{Path: node, Args: []string{entry, "stdio"}}
		},
		"streamableHttp": func(t *testing.T) client.Transport { return &client.HTTP{URL: everythingHTTP(t)} },
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			c := connect(t, target(t))
			if c.Era() != mcp.EraLegacy || c.ProtocolVersion() != "2025-11-25" {
				t.Fatalf("negotiated %v %s; server-everything speaks 2025-11-25", c.Era(), c.ProtocolVersion())
			}
			if !strings.Contains(c.ServerInfo().Name, "everything") {
				t.Errorf("server info %+v", c.ServerInfo())
			}
			ctx := context.Background()
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, tl := range tools {
				have[tl.Name] = true
			}
			for _, n := range []string{"echo", "get-sum", "get-structured-content", "get-tiny-image", "get-resource-links", "trigger-long-running-operation"} {
				if !have[n] {
					t.Errorf("tool %s not listed", n)
				}
			}

			text := func(res *mcp.CallToolResult, i int) string {
				t.Helper()
				tc, ok := res.Content[i].(*mcp.TextContent)
				if !ok {
					t.Fatalf("content[%d] is %T", i, res.Content[i])
				}
				return tc.Text
			}
			res, err := c.CallTool(ctx, "echo", map[string]string{"message": "hi there"})
			if err != nil || text(res, 0) != "Echo: hi there" {
				t.Fatalf("echo: %v %+v", err, res)
			}
			res, err = c.CallTool(ctx, "get-sum", map[string]any{"a": 7, "b": 5})
			if err != nil || text(res, 0) != "The sum of 7 and 5 is 12." {
				t.Fatalf("get-sum: %v %+v", err, res)
			}
			// Validated against the outputSchema from tools/list (the default).
			w, err := client.CallToolAs[reference.CityWeather](ctx, c, "get-structured-content", map[string]string{"location": "Chicago"})
			if err != nil || w != (reference.CityWeather{Temperature: 36, Conditions: "Light rain / drizzle", Humidity: 82}) {
				t.Fatalf("get-structured-content: %v %+v", err, w)
			}
			tool, _ := c.Tool(ctx, "get-structured-content")
			if tool == nil || len(tool.OutputSchema) == 0 {
				t.Fatal("get-structured-content has no outputSchema to validate against")
			}
			res, err = c.CallTool(ctx, "get-tiny-image", nil)
			if err != nil {
				t.Fatal(err)
			}
			var img *mcp.ImageContent
			for _, b := range res.Content {
				if i, ok := b.(*mcp.ImageContent); ok {
					img = i
				}
			}
			if img == nil || img.MIMEType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG") {
				t.Fatalf("get-tiny-image: %+v", res.Content)
			}
			res, err = c.CallTool(ctx, "get-resource-links", map[string]int{"count": 2})
			if err != nil {
				t.Fatal(err)
			}
			links := 0
			for _, b := range res.Content {
				if l, ok := b.(*mcp.ResourceLink); ok && l.URI != "" && l.Name != "" {
					links++
				}
			}
			if links != 2 {
				t.Fatalf("get-resource-links: %d links in %+v", links, res.Content)
			}
			var mu sync.Mutex
			var progress []client.Progress
			res, err = c.CallTool(ctx, "trigger-long-running-operation", map[string]any{"duration": 0.4, "steps": 4},
				client.WithProgress(func(p client.Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() }))
			if err != nil || !strings.Contains(text(res, 0), "Long running operation completed") {
				t.Fatalf("trigger-long-running-operation: %v %+v", err, res)
			}
			mu.Lock()
			if len(progress) != 4 || progress[3].Progress != 4 || progress[3].Total != 4 {
				t.Errorf("progress = %+v", progress)
			}
			mu.Unlock()

			// The pinned server-everything (TS SDK 1.32) reports an unknown
			// tool as an isError result, not as a JSON-RPC error.
			_, err = c.CallTool(ctx, "no-such-tool", map[string]any{})
			var te *client.ToolError
			if !errors.As(err, &te) || !strings.Contains(te.Error(), "no-such-tool") {
				t.Fatalf("unknown tool: err = %v", err)
			}
			t.Logf("unknown tool: %s: %v", client.CodeOf(err), err)
		})
	}
}
