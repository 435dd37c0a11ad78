package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Call sends any request and returns its result exactly as the server sent
// it: the bytes of the response's "result" member, member order and
// whitespace included. It handles what every request shares: _meta, headers,
// timeouts, cancellation, progress, the version retry, the session retry,
// input_required rounds and Options.Middleware. params is anything that
// encodes to a JSON object (or nil).
func (c *Client) Call(ctx context.Context, method string, params any, opts ...CallOption) (json.RawMessage, error) {
	var cc callConfig
	for _, o := range opts {
		o(&cc)
	}
	obj, err := paramsObject(params)
	if err != nil {
		return nil, err
	}
	return c.call(ctx, method, obj, &cc)
}

// paramsObject turns params into a mutable object of raw members. Raw
// params from the caller are read exactly: a member named twice is refused
// rather than silently resolved.
func paramsObject(params any) (map[string]json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if params == nil {
		return obj, nil
	}
	raw, ok := params.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, fmt.Errorf("client: cannot encode params: %w", err)
		}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return obj, nil
	}
	if err := wirejson.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("client: params must encode to a JSON object: %w", err)
	}
	return obj, nil
}

// resultHead is what the client reads of every result: whether the server
// needs input first (2026-07-28 multi round-trip requests).
type resultHead struct {
	ResultType    mcp.ResultType             `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage            `json:"requestState"`
}

// call runs input_required rounds around roundTrip (2026-07-28 MRTR).
func (c *Client) call(ctx context.Context, method string, obj map[string]json.RawMessage, cc *callConfig) (json.RawMessage, error) {
	if cc.hasTimeout || c.opts.Timeout > 0 {
		d := c.opts.Timeout
		if cc.hasTimeout {
			d = cc.timeout
		}
		if d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, d, &timeoutError{d})
			defer cancel()
		}
	}
	for round := 0; ; round++ {
		raw, err := c.roundTrip(ctx, method, obj, cc)
		if err != nil {
			return nil, err
		}
		var head resultHead
		if err := wirejson.Unmarshal(raw, &head); err != nil {
			return nil, &ProtocolError{Op: method, Reason: "malformed result", Err: err}
		}
		if head.ResultType != mcp.ResultInputRequired {
			return raw, nil
		}
		if round+1 >= c.opts.MaxInputRounds {
			return nil, &ProtocolError{Op: method, Reason: fmt.Sprintf("server still requires input after %d rounds (limit MaxInputRounds)", round+1)}
		}
		responses, err := c.answerInputs(ctx, method, head.InputRequests)
		if err != nil {
			return nil, err
		}
		next := make(map[string]json.RawMessage, len(obj)+2)
		for k, v := range obj {
			if k != "inputResponses" && k != "requestState" {
				next[k] = v
			}
		}
		next["inputResponses"] = responses
		if len(head.RequestState) > 0 && string(head.RequestState) != "null" {
			next["requestState"] = head.RequestState // echoed byte for byte
		}
		obj = next
	}
}

// inputRequest is one entry of an input_required result's inputRequests.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// answerInputs asks the receiving middleware and the RequestHandler for
// every input request; each is presented as a request whose ID is its key.
func (c *Client) answerInputs(ctx context.Context, method string, reqs map[string]json.RawMessage) (json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(reqs))
	for key, raw := range reqs {
		var r inputRequest
		if err := wirejson.Unmarshal(raw, &r); err != nil || r.Method == "" {
			return nil, &ProtocolError{Op: method, Reason: fmt.Sprintf("input request %q is not {method, params}", key), Err: err}
		}
		if c.opts.RequestHandler == nil && len(c.opts.ReceivingMiddleware) == 0 && r.Method != mcp.MethodPing {
			return nil, &ProtocolError{Op: method, Reason: fmt.Sprintf("server requires input %q (%s) but the client has no RequestHandler", key, r.Method)}
		}
		enc, err := c.answer(ctx, &jsonrpc.Request{ID: jsonrpc.StringID(key), Method: r.Method, Params: r.Params})
		if err != nil {
			return nil, fmt.Errorf("client: answering input %q (%s): %w", key, r.Method, err)
		}
		out[key] = enc
	}
	return json.Marshal(out)
}

// roundTrip sends one request through Options.Middleware. The chain sees
// the method and params as the caller gave them; the innermost handler
// adds the id, _meta and headers and does the retries.
func (c *Client) roundTrip(ctx context.Context, method string, obj map[string]json.RawMessage, cc *callConfig) (json.RawMessage, error) {
	if len(c.opts.Middleware) == 0 {
		return c.retrying(ctx, method, obj, cc)
	}
	var params json.RawMessage
	if len(obj) > 0 {
		params = mustJSON(obj)
	}
	base := func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		o, err := paramsObject(req.Params)
		if err != nil {
			return nil, err
		}
		return c.retrying(ctx, req.Method, o, cc)
	}
	res, err := jsonrpc.Chain(base, c.opts.Middleware...)(ctx, &jsonrpc.Request{Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	raw, err := encodeResult(res)
	if err != nil {
		return nil, fmt.Errorf("client: a middleware's result for %s cannot be encoded: %w", method, err)
	}
	return raw, nil
}

// retrying sends one request, retrying once with a version the server
// supports (-32022) and once on a fresh session (HTTP 404).
func (c *Client) retrying(ctx context.Context, method string, obj map[string]json.RawMessage, cc *callConfig) (json.RawMessage, error) {
	versionRetried, sessionRetried := false, false
	for {
		raw, err := c.exchange(ctx, method, obj, cc)
		var sg *sessionGoneError
		if errors.As(err, &sg) {
			if sessionRetried || method == mcp.MethodInitialize {
				return nil, &SessionInvalidError{Op: method, SessionID: sg.id}
			}
			sessionRetried = true
			c.opts.Logger.Info("session lost; re-initializing", "session", sg.id)
			if err := c.reinitialize(ctx, sg.id); err != nil {
				return nil, err
			}
			continue
		}
		var je *JSONRPCError
		if errors.As(err, &je) && je.Code == mcp.CodeUnsupportedProtocolVersion && !versionRetried && c.state().era == mcp.EraModern {
			var d mcp.UnsupportedVersionData
			if derr := wirejson.Unmarshal(je.Data, &d); len(je.Data) > 0 && derr != nil {
				c.opts.Logger.Debug("unreadable -32022 data", "error", derr)
			}
			if v := pickVersion(d.Supported, mcp.ModernVersions()); v != "" {
				versionRetried = true
				c.setState(func(s *state) { s.version = v })
				continue
			}
		}
		return raw, err
	}
}

// pickVersion returns the first of ours (newest first) that theirs lists.
func pickVersion(theirs, ours []string) string {
	for _, v := range ours {
		for _, t := range theirs {
			if t == v {
				return v
			}
		}
	}
	return ""
}

type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string        { return fmt.Sprintf("no response within %v", e.d) }
func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// exchange sends one request and waits for its response.
func (c *Client) exchange(ctx context.Context, method string, obj map[string]json.RawMessage, cc *callConfig) (json.RawMessage, error) {
	st := c.state()
	modern := st.era == mcp.EraModern
	var onProgress func(json.RawMessage)
	if cc.progress != nil {
		onProgress = c.progressFunc(cc.progress)
	}
	p, err := c.peer.Start(onProgress)
	if err != nil {
		return nil, err // the transport is gone: err is why
	}
	defer c.peer.Finish(p)

	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok && string(raw) != "null" {
		if err := wirejson.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("client: params._meta must be a JSON object: %w", err)
		}
	}
	if modern {
		meta[mcp.MetaProtocolVersion] = mustJSON(st.version)
		meta[mcp.MetaClientCapabilities] = mustJSON(c.opts.Capabilities)
		meta[mcp.MetaClientInfo] = mustJSON(c.opts.ClientInfo)
	}
	if p.Token != "" {
		meta[mcp.MetaProgressToken] = mustJSON(p.Token)
	}
	send := obj
	if len(meta) > 0 {
		send = make(map[string]json.RawMessage, len(obj)+1)
		for k, v := range obj {
			send[k] = v
		}
		send["_meta"] = mustJSON(meta)
	}
	var params json.RawMessage
	if len(send) > 0 || method != mcp.MethodPing {
		params = mustJSON(send)
	}
	req := &jsonrpc.Request{ID: p.ID, Method: method, Params: params}
	w := &wireInfo{method: method, version: st.version, modern: modern, call: p}
	w.name, w.params = c.nameHeaders(method, obj, modern)

	// The send ends with the exchange: a stream still open once the
	// response came some other way must not outlive it.
	sendCtx, cancelSend := context.WithCancel(ctx)
	defer cancelSend()
	errc := make(chan error, 1)
	go func() { errc <- c.conn.send(sendCtx, req, w) }()
	for {
		select {
		case o := <-p.Wait():
			return c.finish(method, o)
		case err := <-errc:
			if err != nil {
				select {
				case o := <-p.Wait():
					return c.finish(method, o)
				default:
				}
				if ctx.Err() != nil {
					c.cancelRequest(p.ID, w)
					return nil, &TransportError{Op: method, Err: ctxErr(ctx)}
				}
				return nil, err
			}
			errc = nil // sent; the response comes by dispatch
		case <-ctx.Done():
			c.cancelRequest(p.ID, w)
			return nil, &TransportError{Op: method, Err: ctxErr(ctx)}
		}
	}
}

// ctxErr is ctx's error, with our timeout's wording when it was ours.
func ctxErr(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return ctx.Err()
}

// finish turns an outcome into the result bytes as received, or an error:
// a JSON-RPC error keeps its code, message and data as sent.
func (c *Client) finish(method string, o jsonrpc.Outcome) (json.RawMessage, error) {
	if o.Err != nil {
		return nil, o.Err
	}
	if e := o.Response.Error; e != nil {
		return nil, &JSONRPCError{Method: method, Code: e.Code, Message: e.Message, Data: e.Data}
	}
	return o.Response.Result, nil
}

// cancelRequest tells the server to stop: notifications/cancelled on stdio,
// on a Conn and on legacy HTTP; over modern HTTP closing the stream
// (already done by the cancelled context) is the cancellation.
func (c *Client) cancelRequest(id jsonrpc.ID, w *wireInfo) {
	if w.method == mcp.MethodInitialize {
		return // initialize is never cancelled
	}
	if _, isHTTP := c.conn.(*httpConn); isHTTP && w.modern {
		return
	}
	n, err := jsonrpc.NewNotification(mcp.NotificationCancelled, mcp.CancelledParams{RequestID: &id, Reason: "cancelled by the client"})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.bg, 2*time.Second)
	defer cancel()
	nw := *w
	nw.method, nw.name, nw.params, nw.call = mcp.NotificationCancelled, "", nil, nil
	if err := c.conn.notify(ctx, n, &nw); err != nil {
		c.opts.Logger.Debug("cannot send notifications/cancelled", "error", err)
	}
}

// nameHeaders returns the Mcp-Name value and the Mcp-Param-* headers
// (2026-07-28) for a request's params.
func (c *Client) nameHeaders(method string, obj map[string]json.RawMessage, modern bool) (string, map[string]string) {
	var key string
	switch method {
	case mcp.MethodCallTool, "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		key = "taskId"
	default:
		return "", nil
	}
	var name string
	if raw, ok := obj[key]; ok {
		_ = wirejson.Unmarshal(raw, &name) // not a string: no header, the server refuses the body
	}
	var params map[string]string
	if method == mcp.MethodCallTool && modern {
		if t := c.tools.get(name); t != nil {
			params = paramHeaderValues(t.headers, obj["arguments"])
		}
	}
	return mcp.EncodeHeaderValue(name), params
}

// paramHeaderValues returns the Mcp-Param-* headers for one call's
// arguments: absent and null arguments, objects and arrays get no header.
func paramHeaderValues(hs []mcp.ParamHeader, args json.RawMessage) map[string]string {
	if len(hs) == 0 || len(args) == 0 {
		return nil
	}
	var root any
	if wirejson.UnmarshalUseNumber(args, &root) != nil {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		v := root
		for _, k := range h.Path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		if s, ok := mcp.HeaderValueOf(v); ok {
			out[mcp.HeaderParamPrefix+h.Name] = mcp.EncodeHeaderValue(s)
		}
	}
	return out
}
