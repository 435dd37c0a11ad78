package server

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// CallTool runs a tool in process, the way a 2026-07-28 tools/call would be
// served, for the caller ctx names (auth.PrincipalFrom; none: anonymous): through the server's middleware, arguments validated, defaults
// applied, output checked. Failures the protocol answers with a JSON-RPC
// error come back as a *jsonrpc.Error; a tool failure is a result with
// IsError set. progress, when non-nil, receives the tool's progress
// notifications.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage, progress jsonrpc.Sender) (*mcp.CallToolResult, error) {
	p := struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Meta      mcp.Meta        `json:"_meta,omitempty"`
	}{Name: name, Arguments: args}
	if progress != nil {
		p.Meta = mcp.Meta{mcp.MetaProgressToken: "inprocess"}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid arguments: %v", err)
	}
	ss := newSession(s, nil) // transient: never registered, nothing to close
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req := &jsonrpc.Request{ID: jsonrpc.StringID("inprocess"), Method: mcp.MethodCallTool, Params: raw}
	peer := PeerInfo{Era: mcp.EraModern, ProtocolVersion: mcp.LatestVersion, ClientInfo: mcp.Implementation{Name: "in-process", Version: "0"}}
	// The caller ctx carries (auth.WithPrincipal: an HTTP front end
	// authenticated it) is the request's, for middleware deciding rights.
	c := &call{Request: Request{Method: req.Method, ID: req.ID, Params: raw, Peer: peer, session: ss, sender: progress,
		principal: auth.PrincipalFrom(ctx)}, cancel: cancel}
	ctx = context.WithValue(ctx, requestKey{}, c)
	res, err := s.handler(ctx, req)
	if err != nil {
		return nil, errorOf(err)
	}
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r, nil
	case json.RawMessage:
		var out mcp.CallToolResult
		if err := wirejson.Unmarshal(r, &out); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "middleware returned a result that is not a tools/call result: %v", err)
		}
		return &out, nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "tools/call returned %T, not a tools/call result", res)
}

// ToolsFor returns the registered tools, in list order, that the caller
// ctx names (auth.PrincipalFrom; none: anonymous) sees: the list filter
// (WithListFilter) applied as to a 2026-07-28 tools/list of that caller.
func (s *Server) ToolsFor(ctx context.Context) []*mcp.Tool {
	r := &Request{Method: mcp.MethodListTools, Peer: PeerInfo{Era: mcp.EraModern, ProtocolVersion: mcp.LatestVersion},
		principal: auth.PrincipalFrom(ctx)}
	keep := s.keep(r, ListTools)
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*mcp.Tool, 0, len(s.tools.names))
	for _, t := range s.tools.values() {
		if keep == nil || keep(t.name) {
			out = append(out, t.modern)
		}
	}
	return out
}
