// Package gosdk builds the benchmark's tools on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): mcp.AddTool with typed input and
// output, whose schemas the SDK infers and validates against.
package gosdk

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolwire/toolwire/bench/tools"
)

// New returns a server hosting echo, add and big.
func New() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-go-sdk", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: tools.Echo, Description: tools.EchoDesc},
		func(ctx context.Context, req *mcp.CallToolRequest, in tools.EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: tools.Add, Description: tools.AddDesc},
		func(ctx context.Context, req *mcp.CallToolRequest, in tools.AddIn) (*mcp.CallToolResult, tools.AddOut, error) {
			return nil, tools.AddOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: tools.Big, Description: tools.BigDesc},
		func(ctx context.Context, req *mcp.CallToolRequest, in tools.BigIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tools.BigText}}}, nil, nil
		})
	return s
}

// Handler returns the SDK's Streamable HTTP handler with default options.
func Handler() (http.Handler, error) {
	s := New()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), nil
}

// StatelessHandler returns the SDK's Streamable HTTP handler in stateless
// mode (StreamableHTTPOptions.Stateless), the only mode in which v1.8.0
// serves the stateless 2026-07-28 revision: the default, stateful handler
// answers a 2026-07-28 request with -32022 (unsupported version).
func StatelessHandler() (http.Handler, error) {
	s := New()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true}), nil
}

// ServeStdio serves on stdin and stdout.
func ServeStdio(ctx context.Context) error {
	return New().Run(ctx, &mcp.StdioTransport{})
}
