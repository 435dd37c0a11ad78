package server

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// CallTool runs a tool in process, the way a 2026-07-28 tools/call would be
// served: arguments validated, defaults applied, output checked. Failures the
// protocol answers with a JSON-RPC error come back as a *jsonrpc.Error; a tool
// failure is a result with IsError set. progress, when non-nil, receives the
// tool's progress notifications.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage, progress jsonrpc.Sender) (*mcp.CallToolResult, error) {
	p := mcp.CallToolParams{Name: name, Arguments: args}
	if progress != nil {
		p.Meta = mcp.Meta{mcp.MetaProgressToken: "inprocess"}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid arguments: %v", err)
	}
	ss := newSession(s, nil) // transient: never registered, nothing to close
	peer := PeerInfo{Era: mcp.EraModern, ProtocolVersion: mcp.LatestVersion, ClientInfo: mcp.Implementation{Name: "in-process", Version: "0"}}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	res, rerr := ss.callTool(ctx, cancel, raw, peer, progress)
	if rerr != nil {
		return nil, rerr
	}
	return res, nil
}
