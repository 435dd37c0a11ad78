package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// middleware forwards tools/call, prompts/get and resources/read of the
// catalog's items to their upstream, raw: the upstream's result bytes
// become the downstream result (only the upstream's own resultType and
// serverInfo _meta are dropped, so the gateway's stamps apply). Anything
// else, and names the catalog does not route, go on to the server (which
// answers unknown names as usual, and reads templated resources through
// templateRead).
func (g *Gateway) middleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		switch req.Method {
		case mcp.MethodCallTool:
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
				Meta      struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
				InputResponses json.RawMessage `json:"inputResponses"`
				RequestState   *string         `json:"requestState"`
				Task           json.RawMessage `json:"task"`
			}
			if json.Unmarshal(req.Params, &p) != nil {
				break // the server explains what is wrong
			}
			cat := g.cat.Load()
			r, ok := cat.tools[p.Name]
			if !ok {
				break
			}
			sreq := server.RequestFrom(ctx)
			if mayBeTask(cat.toolDefs[p.Name], sreq, p.Task) {
				break // the gateway's server runs the task (tasks.go)
			}
			if sreq == nil || sreq.Peer.Era != mcp.EraModern {
				return g.callTool(ctx, p.Name, r, p.Arguments, p.Meta.ProgressToken, sreq), nil
			}
			if p.RequestState != nil {
				return g.resume(ctx, sreq, p.Name, *p.RequestState, p.InputResponses, p.Meta.ProgressToken)
			}
			return g.callModern(ctx, p.Name, r, p.Arguments, p.Meta.ProgressToken, sreq), nil
		case mcp.MethodGetPrompt:
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments,omitempty"`
			}
			if json.Unmarshal(req.Params, &p) != nil {
				break
			}
			if r, ok := g.cat.Load().prompts[p.Name]; ok {
				p.Name = r.name
				return g.forwardRaw(ctx, r.up, mcp.MethodGetPrompt, p)
			}
		case mcp.MethodReadResource:
			var p struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(req.Params, &p) != nil {
				break
			}
			if u, ok := g.cat.Load().resources[p.URI]; ok {
				return g.forwardRaw(ctx, u, mcp.MethodReadResource, p)
			}
		}
		return next(ctx, req)
	}
}

// forward runs f with u's session. A session found gone before anything
// was sent is waited for once more (the request certainly never reached
// the upstream); a call failing in transport makes the supervisor check
// the session.
func (g *Gateway) forward(ctx context.Context, u *upstream, f func(context.Context, *client.Client) error) error {
	if !g.enter() {
		return errors.New("the gateway is closing")
	}
	defer g.leave()
	u.begin()
	defer u.end()
	c, err := u.session()
	if err != nil {
		return err
	}
	if c.Err() != nil {
		// Gone before sending: wait for the supervisor's new session, once.
		u.suspect()
		wctx, cancel := context.WithTimeout(ctx, u.timeout())
		c, err = u.waitNewSession(wctx, c)
		cancel()
		if err != nil {
			return err
		}
	}
	err = f(ctx, c)
	if err != nil && ctx.Err() == nil && client.CodeOf(err) == client.CodeTransport {
		u.suspect()
	}
	return err
}

// callTool forwards one tools/call of the downstream tool name from a
// 2025-era session (req) or from inside the process (req nil); every
// failure is an isError result naming the upstream, never a JSON-RPC error.
func (g *Gateway) callTool(ctx context.Context, name string, r route, args json.RawMessage, token json.RawMessage, req *server.Request) any {
	start := time.Now()
	var raw json.RawMessage
	opts := []client.CallOption{client.WithTimeout(r.up.timeout())}
	if req != nil {
		f := &forwarded{g: g, up: r.up, name: name, tool: r.name}
		rl := f.startRound(ctx, req, token)
		defer f.endRound(rl)
		if len(token) > 0 {
			opts = append(opts, client.WithProgress(f.progress))
		}
		opts = append(opts, client.WithCallLog(f.log))
		defer r.up.track(f)()
		ctx = context.WithValue(ctx, forwardedKey{}, f)
	}
	err := g.forward(ctx, r.up, func(ctx context.Context, c *client.Client) error {
		var err error
		raw, err = c.CallToolRaw(ctx, r.name, args, opts...)
		return err
	})
	g.metrics.observe(r.up, mcp.MethodCallTool, name, toolOutcome(ctx, err, raw), start)
	return toolResult(ctx, r.up, r.name, raw, err)
}

// toolResult is the downstream answer to a forwarded call that ended with
// raw or err: nil when the downstream request was cancelled (the server
// sends no answer then).
func toolResult(ctx context.Context, u *upstream, tool string, raw json.RawMessage, err error) any {
	if err != nil {
		if ctx.Err() != nil && !errors.Is(context.Cause(ctx), server.ErrTimeout) {
			return nil
		}
		return toolFailure(u, tool, err)
	}
	return clean(raw)
}

func toolFailure(u *upstream, tool string, err error) *mcp.CallToolResult {
	msg := fmt.Sprintf("upstream %q failed calling %q: %v", u.spec.Name, tool, err)
	var je *client.JSONRPCError
	if errors.As(err, &je) {
		msg = fmt.Sprintf("upstream %q refused calling %q: %s (JSON-RPC error %d)", u.spec.Name, tool, je.Message, je.Code)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// forwardRaw forwards a request whose answer passes through as it is; an
// upstream's JSON-RPC error keeps its code, message and data, a transport
// failure is -32603 naming the upstream.
func (g *Gateway) forwardRaw(ctx context.Context, u *upstream, method string, params any) (any, error) {
	start := time.Now()
	var raw json.RawMessage
	err := g.forward(ctx, u, func(ctx context.Context, c *client.Client) error {
		var err error
		raw, err = c.Call(ctx, method, params, client.WithTimeout(u.timeout()))
		return err
	})
	g.metrics.observe(u, method, "", outcomeOf(ctx, err), start)
	if err != nil {
		return nil, rpcError(u, err)
	}
	return clean(raw), nil
}

func rpcError(u *upstream, err error) error {
	var je *client.JSONRPCError
	if errors.As(err, &je) {
		e := jsonrpc.NewError(je.Code, "%s", je.Message)
		if len(je.Data) > 0 {
			e.Data = je.Data
		}
		return e
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "upstream %q: %v", u.spec.Name, err)
}

// toolFallback serves what the middleware leaves to the server: a call
// that may run as one of the gateway's tasks (tasks.go), and one that
// reaches the registered tool some other way. promptFallback and
// resourceFallback exist because registration needs a handler (the
// middleware always forwards those).
func (g *Gateway) toolFallback(ctx context.Context, req *server.CallRequest) (*mcp.CallToolResult, error) {
	r, ok := g.cat.Load().tools[req.Name]
	if !ok {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "tool is gone: " + req.Name}}}, nil
	}
	if req.TaskID() != "" && r.tasks != mcp.TaskForbidden {
		return g.callTask(ctx, req, r), nil
	}
	switch res := g.callTool(ctx, req.Name, r, req.Arguments, nil, req.Request).(type) {
	case *mcp.CallToolResult:
		return res, nil
	case json.RawMessage:
		out := new(mcp.CallToolResult)
		if err := out.UnmarshalJSON(res); err != nil {
			return toolFailure(r.up, r.name, err), nil
		}
		return out, nil
	}
	return nil, ctx.Err()
}

func (g *Gateway) promptFallback(ctx context.Context, req *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
	r, ok := g.cat.Load().prompts[req.Name]
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt %q", req.Name)
	}
	var res *mcp.GetPromptResult
	err := g.forward(ctx, r.up, func(ctx context.Context, c *client.Client) error {
		var err error
		res, err = c.GetPrompt(ctx, r.name, args, client.WithTimeout(r.up.timeout()))
		return err
	})
	if err != nil {
		return nil, rpcError(r.up, err)
	}
	return res, nil
}

func (g *Gateway) resourceFallback(ctx context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
	u, ok := g.cat.Load().resources[req.URI]
	if !ok {
		return nil, server.ErrResourceNotFound
	}
	var res *mcp.ReadResourceResult
	err := g.forward(ctx, u, func(ctx context.Context, c *client.Client) error {
		var err error
		res, err = c.ReadResource(ctx, req.URI, client.WithTimeout(u.timeout()))
		return err
	})
	if err != nil {
		if client.IsResourceNotFound(err) {
			return nil, server.ErrResourceNotFound
		}
		return nil, rpcError(u, err)
	}
	return res, nil
}

// clean drops what an upstream stamped on its result for itself: a
// top-level resultType and the serverInfo member of _meta (the gateway's
// server stamps its own for 2026-07-28 requests). Every other member's
// bytes are kept as they are; the result is untouched when it has neither.
func clean(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"resultType"`)) && !bytes.Contains(raw, []byte(mcp.MetaServerInfo)) {
		return raw
	}
	members, ok := objectMembers(raw)
	if !ok {
		return raw
	}
	out := []byte{'{'}
	for _, m := range members {
		if m.name == "resultType" {
			continue
		}
		value := m.value
		if m.name == "_meta" {
			meta, ok := objectMembers(value)
			if ok {
				kept := meta[:0]
				for _, mm := range meta {
					if mm.name != mcp.MetaServerInfo {
						kept = append(kept, mm)
					}
				}
				if len(kept) == 0 {
					continue
				}
				value = encodeMembers(kept)
			}
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		key, _ := json.Marshal(m.name)
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, value...)
	}
	return append(out, '}')
}

type member struct {
	name  string
	value json.RawMessage
}

// objectMembers reads a JSON object's members in order, values as raw
// bytes.
func objectMembers(raw []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{name, v})
	}
	return out, true
}

func encodeMembers(ms []member) json.RawMessage {
	out := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		key, _ := json.Marshal(m.name)
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}')
}
