package otc

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Backend is the MCP side the handler serves: a tool list and a way to call
// a tool. The handler validates input before calling, so CallTool sees only
// arguments that pass the tool's inputSchema.
//
// CallTool reports a tool failure as a result with IsError set. A returned
// *jsonrpc.Error is an MCP protocol error (unknown tool, bad params, server
// bug); any other error means the MCP server could not be reached.
//
// An adapter for an MCP client is a few lines: ListTools pages through
// tools/list, CallTool sends tools/call. A backend that also has
// Info() mcp.Implementation lends its name to the default toolkit.
type Backend interface {
	ListTools(ctx context.Context) ([]*mcp.Tool, error)
	CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)
}

// ServerBackend serves the tools of an in-process *server.Server.
type ServerBackend struct{ s *server.Server }

// NewServerBackend returns a Backend calling s in process.
func NewServerBackend(s *server.Server) *ServerBackend { return &ServerBackend{s: s} }

// ListTools returns the server's tools as a 2026-07-28 client sees them:
// those the caller ctx carries (auth.PrincipalFrom) may see, when the server
// filters its lists by caller.
func (b *ServerBackend) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	return b.s.ToolsFor(ctx), nil
}

// CallTool runs the tool in process, as the caller ctx carries.
func (b *ServerBackend) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return b.s.CallTool(ctx, name, args, nil)
}

// Info returns the server's implementation info.
func (b *ServerBackend) Info() mcp.Implementation { return b.s.Info() }
