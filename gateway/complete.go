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
// own name for it), with the argument and context as received. It reads
// the request's parsed target (target.go), which the personas decided on;
// the params the server decoded for it are not read again. An upstream
// that does not complete answers with no values.
func (g *Gateway) complete(ctx context.Context, _ *server.Request, _ *wirejson.DiscardObject) (json.RawMessage, error) {
	req := server.RequestFrom(ctx)
	if req == nil {
		return nil, invalidParams(mcp.MethodComplete, "params are missing")
	}
	_, tg, perr, _ := targetFor(ctx, &jsonrpc.Request{Method: req.Method, Params: req.Params})
	if perr != nil {
		return nil, perr
	}
	cat := g.cat.Load()
	var u *upstream
	ref := tg.ref
	switch ref.Type {
	case mcp.RefPrompt:
		r, ok := cat.prompts[ref.Name]
		if !ok {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt %q", ref.Name)
		}
		u = r.up
		ref.Name = r.name
	default:
		var ok bool
		if u, ok = cat.templates[ref.URI]; !ok {
			if u, ok = cat.resources[ref.URI]; !ok {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown resource template %q", ref.URI)
			}
		}
	}
	if !u.completes() {
		return json.RawMessage(`{"completion":{"values":[]}}`), nil
	}
	res, err := g.forwardRaw(ctx, u, mcp.MethodComplete, completeParams{Ref: ref, Argument: tg.argument, Context: tg.context})
	if err != nil {
		return nil, err
	}
	return res.(json.RawMessage), nil
}

// completeParams are what is forwarded upstream for completion/complete.
type completeParams struct {
	Ref      mcp.CompletionReference `json:"ref"`
	Argument json.RawMessage         `json:"argument"`
	Context  json.RawMessage         `json:"context,omitempty"`
}

// completes says whether u's current session declared completions.
func (u *upstream) completes() bool {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	return c != nil && c.ServerCapabilities().Completions != nil
}
