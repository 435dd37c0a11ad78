package gateway

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// completeSpec is the gateway's completion/complete: it completes the
// arguments of every upstream's prompts and resource templates, so the
// gateway declares the completions capability.
var completeSpec = server.MethodSpec{Name: mcp.MethodComplete, Capability: "completions"}

// complete forwards completion/complete to the upstream that serves the
// prompt or resource template its ref names (a prompt under the upstream's
// own name for it); every other member passes through as it is. An
// upstream that does not complete answers with no values.
func (g *Gateway) complete(ctx context.Context, _ *server.Request, p *map[string]json.RawMessage) (json.RawMessage, error) {
	params := *p
	var ref mcp.CompletionReference
	if err := wirejson.Unmarshal(params["ref"], &ref); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid completion/complete params: ref: %v", err)
	}
	cat := g.cat.Load()
	var u *upstream
	switch ref.Type {
	case mcp.RefPrompt:
		r, ok := cat.prompts[ref.Name]
		if !ok {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt %q", ref.Name)
		}
		u = r.up
		renamed, err := json.Marshal(mcp.CompletionReference{Type: mcp.RefPrompt, Name: r.name})
		if err != nil {
			return nil, err
		}
		params["ref"] = renamed
	case mcp.RefResource:
		var ok bool
		if u, ok = cat.templates[ref.URI]; !ok {
			if u, ok = cat.resources[ref.URI]; !ok {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown resource template %q", ref.URI)
			}
		}
	default:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid completion/complete params: ref.type %q is neither %s nor %s", ref.Type, mcp.RefPrompt, mcp.RefResource)
	}
	if !u.completes() {
		return json.RawMessage(`{"completion":{"values":[]}}`), nil
	}
	res, err := g.forwardRaw(ctx, u, mcp.MethodComplete, params)
	if err != nil {
		return nil, err
	}
	return res.(json.RawMessage), nil
}

// completes says whether u's current session declared completions.
func (u *upstream) completes() bool {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	return c != nil && c.ServerCapabilities().Completions != nil
}
