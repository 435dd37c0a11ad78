// Package mcpgo builds the benchmark's tools on mcp-go
// (github.com/mark3labs/mcp-go): schemas from Go types (WithInputSchema,
// WithOutputSchema), typed handlers, and input validation switched on
// (WithInputSchemaValidation; it is off by default).
package mcpgo

import (
	"context"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwire/toolwire/bench/tools"
)

// New returns a server hosting echo, add and big.
func New() *server.MCPServer {
	s := server.NewMCPServer("bench-mcp-go", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithInputSchemaValidation())
	s.AddTool(mcp.NewTool(tools.Echo, mcp.WithDescription(tools.EchoDesc), mcp.WithInputSchema[tools.EchoIn]()),
		mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in tools.EchoIn) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(in.Message), nil
		}))
	s.AddTool(mcp.NewTool(tools.Add, mcp.WithDescription(tools.AddDesc),
		mcp.WithInputSchema[tools.AddIn](), mcp.WithOutputSchema[tools.AddOut]()),
		mcp.NewStructuredToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in tools.AddIn) (tools.AddOut, error) {
			return tools.AddOut{Sum: in.A + in.B}, nil
		}))
	s.AddTool(mcp.NewTool(tools.Big, mcp.WithDescription(tools.BigDesc), mcp.WithInputSchema[tools.BigIn]()),
		mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in tools.BigIn) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(tools.BigText), nil
		}))
	return s
}

// Handler returns mcp-go's Streamable HTTP server, used as an http.Handler,
// with default options.
func Handler() (http.Handler, error) {
	return server.NewStreamableHTTPServer(New()), nil
}

// ServeStdio serves on stdin and stdout.
func ServeStdio(ctx context.Context) error {
	return server.NewStdioServer(New()).Listen(ctx, os.Stdin, os.Stdout)
}
