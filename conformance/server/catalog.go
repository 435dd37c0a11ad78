package main

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The suite's caching scenario lists prompts, resources and resource
// templates, and server-stateless checks that a server answering prompts/list
// declares prompts. toolwire's server hosts tools only so far, so this
// fixture wraps its sessions to serve those lists empty, declare the two
// capabilities, and answer reads and gets of anything with "not found". The
// prompt and resource fixtures themselves belong to a later issue.

const catalogTTLMs = 300000

// catalogOpener opens fixture sessions on a server.
type catalogOpener struct{ srv *server.Server }

func (o catalogOpener) OpenSession(out jsonrpc.Sender) jsonrpc.Session {
	return &catalogSession{Session: o.srv.NewSession(out), srv: o.srv}
}

// Tool lets the HTTP handler check Mcp-Param-* headers.
func (o catalogOpener) Tool(name string) (*mcp.Tool, bool) { return o.srv.Tool(name) }

type catalogSession struct {
	*server.Session
	srv *server.Server
}

// HandleRequest serves the empty catalogue methods and passes the rest on,
// adding the prompts and resources capabilities to the handshake results.
func (s *catalogSession) HandleRequest(ctx context.Context, req *jsonrpc.Request, w jsonrpc.Sender) *jsonrpc.Response {
	switch req.Method {
	case "prompts/list", "resources/list", "resources/templates/list", "resources/read", "prompts/get":
		return s.catalog(req)
	}
	resp := s.Session.HandleRequest(ctx, req, w)
	if resp != nil && resp.Error == nil && (req.Method == mcp.MethodInitialize || req.Method == mcp.MethodDiscover) {
		resp.Result = withCatalogCapabilities(resp.Result)
	}
	return resp
}

// withCatalogCapabilities adds prompts and resources to result.capabilities.
func withCatalogCapabilities(result json.RawMessage) json.RawMessage {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return result
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(r["capabilities"], &caps) != nil || caps == nil {
		caps = map[string]json.RawMessage{}
	}
	caps["prompts"] = json.RawMessage(`{}`)
	caps["resources"] = json.RawMessage(`{}`)
	r["capabilities"], _ = json.Marshal(caps)
	out, err := json.Marshal(r)
	if err != nil {
		return result
	}
	return out
}

func (s *catalogSession) catalog(req *jsonrpc.Request) *jsonrpc.Response {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	var head struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", err)}
		}
		_ = json.Unmarshal(req.Params, &head)
	}
	modern := false
	if raw, ok := head.Meta[mcp.MetaProtocolVersion]; ok {
		var v string
		_ = json.Unmarshal(raw, &v)
		if mcp.EraOf(v) != mcp.EraModern {
			return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(mcp.CodeUnsupportedProtocolVersion, "unsupported protocol version %q", v).
				WithData(mcp.UnsupportedVersionData{Supported: mcp.SupportedVersions(), Requested: v})}
		}
		modern = true
	} else if s.Peer().ProtocolVersion == "" {
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidParams, "session not initialized: send initialize first")}
	}
	var result map[string]any
	switch req.Method {
	case "prompts/list":
		result = map[string]any{"prompts": []any{}}
	case "resources/list":
		result = map[string]any{"resources": []any{}}
	case "resources/templates/list":
		result = map[string]any{"resourceTemplates": []any{}}
	case "resources/read":
		code := int64(-32002) // 2025-11-25: resource not found
		if modern {
			code = jsonrpc.CodeInvalidParams
		}
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(code, "Resource not found: %s", p.URI).WithData(map[string]string{"uri": p.URI})}
	case "prompts/get":
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt: %q", p.Name)}
	}
	if modern {
		result["resultType"] = mcp.ResultComplete
		result["ttlMs"] = catalogTTLMs
		result["cacheScope"] = mcp.CachePublic
		result["_meta"] = map[string]any{mcp.MetaServerInfo: s.srv.Info()}
	}
	resp, err := jsonrpc.NewResponse(req.ID, result)
	if err != nil {
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", err)}
	}
	return resp
}
