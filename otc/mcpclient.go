package otc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// ClientBackend serves the tools of any MCP server reached through the
// toolwire client (stdio child or Streamable HTTP), so that server's tools
// can be called over OTC.
type ClientBackend struct{ c *client.Client }

// NewClientBackend returns a Backend over a connected MCP client. The
// caller keeps ownership of c and closes it.
func NewClientBackend(c *client.Client) *ClientBackend { return &ClientBackend{c: c} }

// ListTools lists every tool, all pages.
func (b *ClientBackend) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	return b.c.ListTools(ctx)
}

// CallTool sends tools/call. A tool failure (*client.ToolError) is returned
// as its isError result; a JSON-RPC error as a *jsonrpc.Error; a result
// the client refused (a *client.ProtocolError, such as output that breaks
// the tool's outputSchema) as an internal JSON-RPC error. Anything else
// means the server could not be reached.
func (b *ClientBackend) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	res, err := b.c.CallTool(ctx, name, args)
	if err == nil {
		return res, nil
	}
	var te *client.ToolError
	if errors.As(err, &te) && te.Result != nil {
		return te.Result, nil
	}
	var je *client.JSONRPCError
	if errors.As(err, &je) {
		return nil, &jsonrpc.Error{Code: je.Code, Message: je.Message, Data: je.Data}
	}
	var pe *client.ProtocolError
	if errors.As(err, &pe) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "%s", pe.Error())
	}
	return nil, err
}

// Info returns the MCP server's implementation info, which names the
// default toolkit.
func (b *ClientBackend) Info() mcp.Implementation { return b.c.ServerInfo() }
