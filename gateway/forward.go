package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// middleware forwards tools/call, prompts/get and resources/read of the
// catalog's items to their upstream, raw: the upstream's result bytes
// become the downstream result (only the upstream's own resultType and
// serverInfo _meta are dropped, so the gateway's stamps apply). What is
// forwarded is built from the request's parsed target (target.go), the
// value the personas and the audit saw. Anything else, and names the
// catalog does not route, go on to the server (which answers unknown names
// as usual, and reads templated resources through templateRead).
func (g *Gateway) middleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		ctx, tg, perr, ok := targetFor(ctx, req)
		if !ok || req.Method == mcp.MethodComplete {
			switch req.Method {
			case mcp.MethodSetLevel:
				return g.setLevel(ctx, req, next) // sessions.go
			case mcp.MethodSubscribe, mcp.MethodUnsubscribe:
				return g.subscribe(ctx, req, next) // sessions.go
			}
			return next(ctx, req)
		}
		if perr != nil {
			return nil, perr
		}
		switch req.Method {
		case mcp.MethodCallTool:
			cat := g.cat.Load()
			r, ok := cat.tools[tg.name]
			if !ok {
				break
			}
			sreq := server.RequestFrom(ctx)
			if mayBeTask(cat.toolDefs[tg.name], sreq, tg.task) {
				break // the gateway's server runs the task (tasks.go)
			}
			if sreq == nil || sreq.Peer.Era != mcp.EraModern {
				return g.callTool(ctx, tg.name, r, tg.arguments, tg.progressToken, sreq, nil)
			}
			// A 2026-07-28 caller (inputs.go): a round the gateway parked
			// goes on; to a 2026-07-28 upstream the rounds are relayed as
			// they are (the upstream's requestState travels through the
			// caller, the gateway keeps nothing); else the call may park.
			state := tg.requestState
			if parked(state) {
				return g.resume(ctx, sreq, tg.name, state, tg.inputResponses, tg.progressToken)
			}
			if r.up.modern() {
				in := &relayedInput{responses: tg.inputResponses, state: state}
				return g.callTool(ctx, tg.name, r, tg.arguments, tg.progressToken, sreq, in)
			}
			if state != nil {
				return nil, errUnknownState(tg.name)
			}
			return g.callModern(ctx, tg.name, r, tg.arguments, tg.progressToken, sreq), nil
		case mcp.MethodGetPrompt:
			if r, ok := g.cat.Load().prompts[tg.name]; ok {
				return g.forwardRaw(ctx, r.up, mcp.MethodGetPrompt, promptParams{Name: r.name, Arguments: tg.arguments})
			}
		case mcp.MethodReadResource:
			if u, ok := g.cat.Load().resources[tg.name]; ok {
				return g.forwardRaw(ctx, u, mcp.MethodReadResource, readParams{URI: tg.name})
			}
			if res, ok, err := g.readOwn(ctx, tg.name); ok {
				return res, err // sessions.go
			}
		}
		return next(ctx, req)
	}
}

// promptParams and readParams are what is forwarded upstream for
// prompts/get and resources/read.
type (
	promptParams struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}
	readParams struct {
		URI string `json:"uri"`
	}
)

// forward runs f with u's session. A session found gone before anything
// was sent is waited for once more (the request certainly never reached
// the upstream); a call failing in transport makes the supervisor check
// the session.
func (g *Gateway) forward(ctx context.Context, u *upstream, f func(context.Context, *client.Client) error) error {
	ctx, err := g.asCaller(ctx, u) // the caller's exchanged token, for an upstream with a TokenExchange
	if err != nil {
		return err
	}
	if u.pool != nil {
		return g.forwardPerClient(ctx, u, f)
	}
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

// relayedInput is what a 2026-07-28 caller's retry carries for a
// 2026-07-28 upstream: passed on as it is.
type relayedInput struct{ responses, state json.RawMessage }

// callTool forwards one tools/call of the downstream tool name from req
// (nil from inside the process), on the request's goroutine: from a
// 2025-era session, or with its input rounds relayed (in). Every failure is
// an isError result naming the upstream, never a JSON-RPC error, except the
// upstream's JSON-RPC error answering a relayed retry (a requestState it
// refuses, say), which is the caller's to see as it is.
func (g *Gateway) callTool(ctx context.Context, name string, r route, args json.RawMessage, token json.RawMessage, req *server.Request, in *relayedInput) (any, error) {
	start := time.Now()
	args, refused := g.pin(ctx, r, args)
	if refused != nil {
		return refused, nil
	}
	var raw json.RawMessage
	opts := []client.CallOption{client.WithTimeout(r.up.timeout())}
	if in != nil {
		opts = append(opts, client.WithInputRounds(false))
		if in.responses != nil || in.state != nil {
			opts = append(opts, client.WithInputResponses(in.responses, in.state))
		}
	}
	if req != nil {
		f := &forwarded{g: g, up: r.up, name: name, tool: r.name}
		rl := f.startRound(ctx, req, token)
		defer f.endRound(rl)
		if len(token) > 0 {
			opts = append(opts, client.WithProgress(f.progress))
		}
		opts = append(opts, r.up.callLog(f)...)
		defer r.up.track(f)()
		ctx = context.WithValue(ctx, forwardedKey{}, f)
	}
	err := g.forward(ctx, r.up, func(ctx context.Context, c *client.Client) error {
		var err error
		raw, err = c.CallToolRaw(ctx, r.name, args, opts...)
		return err
	})
	g.observe(ctx, r.up, mcp.MethodCallTool, name, toolOutcome(ctx, err, raw), start)
	var je *client.JSONRPCError
	if in != nil && in.state != nil && errors.As(err, &je) {
		return nil, rpcError(r.up, err)
	}
	if in != nil && err == nil && req != nil {
		if miss := undeclaredInput(req, raw); miss != nil {
			return toolFailure(r.up, r.name, miss), nil
		}
	}
	return toolResult(ctx, r.up, r.name, raw, err), nil
}

// undeclaredInput checks a relayed input_required result against the
// capabilities the caller's request declares: a round asking for what the
// caller cannot answer is never sent to it (the call fails instead, as a
// 2025-era caller's does).
func undeclaredInput(req *server.Request, raw json.RawMessage) error {
	if !bytes.Contains(raw, []byte(mcp.ResultInputRequired)) {
		return nil
	}
	var res struct {
		ResultType    mcp.ResultType              `json:"resultType"`
		InputRequests map[string]mcp.InputRequest `json:"inputRequests"`
	}
	if wirejson.Unmarshal(raw, &res) != nil || res.ResultType != mcp.ResultInputRequired {
		return nil
	}
	for _, q := range res.InputRequests {
		if err := req.Declared(q.Method); err != nil {
			return err
		}
	}
	return nil
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

// toolFailure is the isError result of a call that failed at or beyond the
// gateway, naming the upstream; an upstream that is reconnecting adds retry
// guidance (_meta dev.toolwire/retry) saying when to try again.
func toolFailure(u *upstream, tool string, err error) *mcp.CallToolResult {
	msg := fmt.Sprintf("upstream %q failed calling %q: %v", u.spec.Name, tool, err)
	var je *client.JSONRPCError
	var sl *SessionLimitError
	switch {
	case errors.As(err, &je):
		msg = fmt.Sprintf("upstream %q refused calling %q: %s (JSON-RPC error %d)", u.spec.Name, tool, je.Message, je.Code)
	case errors.As(err, &sl):
		msg = sl.Error() // names the upstream and the limit (sessions.go)
	}
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
	var nr *NotReadyError
	if errors.As(err, &nr) {
		res.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("tool %q is unavailable: %v", tool, err)}}
		res.Meta = res.Meta.SetRetryGuidance(mcp.RetryGuidance{CanRetry: true, RetryAfterMs: max(nr.RetryAfter.Milliseconds(), 1)})
	}
	return res
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
	g.observe(ctx, u, method, "", outcomeOf(ctx, err), start)
	if err != nil {
		return nil, rpcError(u, err)
	}
	return clean(raw), nil
}

// passedError is the JSON-RPC error a peer answered with (its code,
// message and data, if any), for passing on as it was.
func passedError(code int64, message string, data json.RawMessage) *jsonrpc.Error {
	e := jsonrpc.NewError(code, "%s", message)
	if len(data) > 0 {
		e.Data = data
	}
	return e
}

func rpcError(u *upstream, err error) error {
	var je *client.JSONRPCError
	if errors.As(err, &je) {
		return passedError(je.Code, je.Message, je.Data)
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
	res, _ := g.callTool(ctx, req.Name, r, req.Arguments, nil, req.Request, nil) // no relayed round: no error
	switch res := res.(type) {
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
// top-level resultType "complete" (the gateway's server stamps its own;
// input_required, which a relayed round passes on, is kept) and the
// serverInfo member of _meta (an emptied _meta goes too). Every other byte
// is kept as it is; the result is returned untouched when it has neither,
// or when it is not an object the scanner reads plainly.
func clean(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"resultType"`)) && !bytes.Contains(raw, []byte(mcp.MetaServerInfo)) {
		return raw
	}
	// One cut at a time, each on a fresh scan of what is left, so that two
	// neighbouring members never claim the same comma.
	for range len(cleanMembers) {
		cut, ok := nextCut(raw)
		if !ok {
			break
		}
		out := make([]byte, 0, len(raw)-(cut[1]-cut[0]))
		out = append(out, raw[:cut[0]]...)
		raw = append(out, raw[cut[1]:]...)
	}
	return raw
}

// nextCut finds the first thing clean drops from raw: the byte range to
// cut; false when there is none (or raw is not plainly readable).
func nextCut(raw []byte) ([2]int, bool) {
	var cut [2]int
	found := false
	ok := jsonscan.Members(raw, cleanMembers, func(name, value []byte) bool {
		if found {
			return true // the whole object is still checked
		}
		at := offset(raw, value)
		switch string(name) {
		case "resultType":
			if s, plain := jsonscan.PlainString(value); plain && string(s) == string(mcp.ResultComplete) {
				cut, found = memberRange(raw, at, at+len(value)), true
			}
		case "_meta":
			var inner [2]int
			has := false
			if !jsonscan.Members(value, metaMembers, func(_, v []byte) bool {
				i := offset(value, v)
				inner, has = memberRange(value, i, i+len(v)), true
				return true
			}) || !has {
				return true
			}
			if emptyWithout(value, inner) {
				cut = memberRange(raw, at, at+len(value))
			} else {
				cut = [2]int{at + inner[0], at + inner[1]}
			}
			found = true
		}
		return true
	})
	return cut, ok && found
}

var (
	cleanMembers = []string{"resultType", "_meta"}
	metaMembers  = []string{mcp.MetaServerInfo}
)

// offset is where sub, a slice of data, starts in it.
func offset(data, sub []byte) int { return cap(data) - cap(sub) }

// memberRange widens the value at obj[start:end] to its whole member: the
// name before it and one comma next to it (the following one, else the
// preceding one), so that cutting the range leaves a valid object.
func memberRange(obj []byte, start, end int) [2]int {
	i := start - 1
	for i > 0 && obj[i] != ':' {
		i--
	}
	i-- // before the colon: spaces, then the name's closing quote
	for i > 0 && obj[i] != '"' {
		i--
	}
	i-- // the name is plain (no escapes): its opening quote is the previous one
	for i > 0 && obj[i] != '"' {
		i--
	}
	from, to := i, end
	j := end
	for j < len(obj) && isSpace(obj[j]) {
		j++
	}
	if j < len(obj) && obj[j] == ',' {
		return [2]int{from, j + 1}
	}
	k := from - 1
	for k > 0 && isSpace(obj[k]) {
		k--
	}
	if obj[k] == ',' {
		from = k
	}
	return [2]int{from, to}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// emptyWithout says whether the object obj has no member left once the
// range cut is removed.
func emptyWithout(obj []byte, cut [2]int) bool {
	for i, c := range obj {
		if i >= cut[0] && i < cut[1] || isSpace(c) || c == '{' || c == '}' {
			continue
		}
		return false
	}
	return true
}
