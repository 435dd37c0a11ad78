package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Example connects to a Streamable HTTP server, lists its tools and calls
// two of them: one that succeeds and one that reports a tool error.
func Example() {
	srv, _ := reference.NewServer()
	hs := httptest.NewServer(streamable.NewHandler(srv))
	defer hs.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		fmt.Println(client.CodeOf(err), err)
		return
	}
	defer c.Close()
	fmt.Println("era:", c.Era())

	res, err := c.CallTool(ctx, "get-sum", map[string]any{"a": 7, "b": 5})
	if err != nil {
		fmt.Println(client.CodeOf(err), err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)

	_, err = c.CallTool(ctx, "safe_divide", map[string]any{"a": 1, "b": 0})
	var te *client.ToolError
	if errors.As(err, &te) {
		fmt.Println(client.CodeOf(err), te.Content()[0].(*mcp.TextContent).Text)
	}
	// Output:
	// era: modern
	// The sum of 7 and 5 is 12.
	// ERR_MCP_TOOL_ERROR cannot divide by zero; pass a non-zero b
}

// ExampleCallToolAs decodes a tool's structured content into a Go value,
// after checking it against the tool's outputSchema.
func ExampleCallToolAs() {
	srv, _ := reference.NewServer()
	hs := httptest.NewServer(streamable.NewHandler(srv))
	defer hs.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTP{URL: hs.URL + "/mcp"}, client.WithEra(mcp.EraLegacy))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	w, err := client.CallToolAs[reference.CityWeather](ctx, c, "get-structured-content", map[string]string{"location": "Chicago"})
	fmt.Println(w.Temperature, w.Conditions, err)
	// Output: 36 Light rain / drizzle <nil>
}

// ExampleCodeOf shows the five codes a caller can switch on.
func ExampleCodeOf() {
	_, err := client.Connect(context.Background(), &client.HTTP{URL: "ftp://example.com"})
	switch client.CodeOf(err) {
	case client.CodeTransport:
		fmt.Println("transport:", err)
	case client.CodeProtocol, client.CodeJSONRPC, client.CodeToolError, client.CodeSessionInvalid:
		fmt.Println("other:", err)
	}
	// Output: transport: transport: connect: "ftp://example.com" is not an http:// or https:// URL
}

// ExampleConn talks to a server in the same process: memory.Serve serves
// it on one end of an in-memory pipe and returns the other end, which the
// client uses as any framed connection. Messages are still encoded and
// decoded, so the client sees exactly what a remote client would.
func ExampleConn() {
	type GreetIn struct {
		Name string `json:"name"`
	}
	srv := server.New(mcp.Implementation{Name: "greeter", Version: "1.0.0"})
	err := server.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx context.Context, req *server.CallRequest, in GreetIn) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, &client.Conn{Conn: memory.Serve(ctx, srv)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name, c.Era())

	res, err := c.CallTool(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil {
		fmt.Println(client.CodeOf(err), err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// greeter modern
	// Hello, Ada!
}

// inMemory connects a client with opts to srv served in memory, as
// ExampleConn does step by step, and runs body with it. setupErr is the
// error of registering srv's handlers; the examples print that, a failed
// connection or body's error, and stop.
func inMemory(srv *server.Server, setupErr error, body func(ctx context.Context, c *client.Client) error, opts ...client.Option) {
	if setupErr != nil {
		fmt.Println(setupErr)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, &client.Conn{Conn: memory.Serve(ctx, srv)}, opts...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := body(ctx, c); err != nil {
		fmt.Println(err)
	}
}

// ExampleWithMiddleware logs every request the client sends, with how
// long it took and whether it failed. The same jsonrpc.Middleware shape
// wraps the requests a toolwire server receives, so one middleware can
// serve both. (The example drops the time and the duration from the log
// lines so that its output is stable.)
func ExampleWithMiddleware() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "took" {
				return slog.Attr{}
			}
			return a
		},
	}))
	timing := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			start := time.Now()
			res, err := next(ctx, req)
			logger.Info("mcp request", "method", req.Method, "took", time.Since(start), "ok", err == nil)
			return res, err
		}
	}

	srv, err := reference.NewServer()
	inMemory(srv, err, func(ctx context.Context, c *client.Client) error {
		// The first call lists the tools for the outputSchema check.
		_, err := c.CallTool(ctx, "get-sum", map[string]any{"a": 7, "b": 5})
		return err
	}, client.WithMiddleware(timing))
	// Output:
	// level=INFO msg="mcp request" method=server/discover ok=true
	// level=INFO msg="mcp request" method=tools/list ok=true
	// level=INFO msg="mcp request" method=tools/call ok=true
}
