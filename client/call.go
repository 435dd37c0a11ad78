package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Call sends any request and returns its result exactly as the server sent
// it: the bytes of the response's "result" member, member order and
// whitespace included. It handles what every request shares: _meta, headers,
// timeouts, cancellation, progress, the version retry, the session retry,
// input_required rounds and the WithMiddleware chain. params is anything
// that encodes to a JSON object (or nil).
func (c *Client) Call(ctx context.Context, method string, params any, opts ...CallOption) (json.RawMessage, error) {
	cc := newCallConfig(opts)
	out, err := newOutgoing(method, params)
	if err != nil {
		return nil, err
	}
	return c.call(ctx, out, cc, false)
}

// resultHead is what the client reads of every result: whether the server
// needs input first (2026-07-28 multi round-trip requests).
type resultHead struct {
	ResultType    mcp.ResultType             `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage            `json:"requestState"`
}

// resultHeadNames are resultHead's members.
var resultHeadNames = []string{"resultType", "inputRequests", "requestState"}

// readHead reads the head of a result; nil means the result is complete.
// The whole result is read exactly, unless skim is set because the caller
// reads it exactly itself (CallTool): then a result whose only head member
// is a resultType other than input_required is told apart by a scan that
// refuses what the decoder would (a duplicate or case variant of a head
// member, malformed JSON) by leaving it to the decoder.
func readHead(method string, raw json.RawMessage, skim bool) (*resultHead, error) {
	if skim && jsonscan.Members(raw, resultHeadNames, func(name, value []byte) bool {
		if string(name) != "resultType" {
			return false // input requests: read in full
		}
		s, ok := jsonscan.PlainString(value)
		return ok && string(s) != string(mcp.ResultInputRequired)
	}) {
		return nil, nil
	}
	var head resultHead
	if err := wirejson.Unmarshal(raw, &head); err != nil {
		return nil, &ProtocolError{Op: method, Reason: "malformed result", Err: err}
	}
	if head.ResultType != mcp.ResultInputRequired {
		return nil, nil
	}
	return &head, nil
}

// call runs input_required rounds around roundTrip (2026-07-28 MRTR). skim
// says the caller reads the result exactly itself (see readHead).
func (c *Client) call(ctx context.Context, out outgoing, cc callConfig, skim bool) (json.RawMessage, error) {
	d, cause := c.cfg.timeout, c.timeoutErr
	if cc.hasTimeout && cc.timeout != d {
		d, cause = cc.timeout, &timeoutError{cc.timeout}
	}
	var cancel context.CancelFunc
	if d > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, d, cause)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	n := c.callStarted(cancel) // Close ends the call with it
	defer c.callEnded(n)
	if cc.inputs != nil || cc.requestState != nil {
		var err error
		if out, err = nextRound(out, cc.inputs, cc.requestState); err != nil {
			return nil, err
		}
	}
	for round := 0; ; round++ {
		raw, err := c.roundTrip(ctx, &out, cc)
		if err != nil {
			return nil, err
		}
		head, err := readHead(out.method, raw, skim)
		if err != nil {
			return nil, err
		}
		if head == nil || cc.noRounds {
			return raw, nil
		}
		if round+1 >= c.cfg.limits.MaxInputRounds {
			return nil, &ProtocolError{Op: out.method, Reason: fmt.Sprintf("the server still requires input after %d rounds, the client's limit", round+1)}
		}
		responses, err := c.answerInputs(ctx, out.method, head.InputRequests)
		if err != nil {
			return nil, err
		}
		if out, err = nextRound(out, responses, head.RequestState); err != nil {
			return nil, err
		}
	}
}

// inputRequest is one entry of an input_required result's inputRequests.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// answerInputs asks the receiving middleware and the handlers (typed, or
// the RequestHandler) for every input request; each is presented as a
// request whose ID is its key. An input request for a capability the
// client did not declare fails the call.
func (c *Client) answerInputs(ctx context.Context, method string, reqs map[string]json.RawMessage) (json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(reqs))
	for key, raw := range reqs {
		var r inputRequest
		if err := wirejson.Unmarshal(raw, &r); err != nil || r.Method == "" {
			return nil, &ProtocolError{Op: method, Reason: fmt.Sprintf("input request %q is not {method, params}", key), Err: err}
		}
		if cp := capabilityOf(r.Method); cp != "" && !c.cfg.capabilities.Has(cp) {
			return nil, &ProtocolError{Op: method, Reason: fmt.Sprintf("the server requires input %q (its %s request), which needs the %s capability the client did not declare", key, r.Method, cp)}
		}
		if c.cfg.requestHandler == nil && len(c.cfg.receiving) == 0 && r.Method != mcp.MethodPing && !c.hasTyped(r.Method) {
			return nil, &ProtocolError{Op: method, Reason: fmt.Sprintf("the server requires input %q (its %s request), which this client does not answer", key, r.Method)}
		}
		enc, err := c.answer(ctx, &jsonrpc.Request{ID: jsonrpc.StringID(key), Method: r.Method, Params: r.Params})
		if err != nil {
			return nil, fmt.Errorf("client: answering input %q (%s): %w", key, r.Method, err)
		}
		out[key] = enc
	}
	return encodeObject(out), nil
}

// roundTrip sends one request through the WithMiddleware chain, which sees
// the method and params as the caller gave them; the innermost handler
// adds the id, _meta and headers and does the retries.
func (c *Client) roundTrip(ctx context.Context, out *outgoing, cc callConfig) (json.RawMessage, error) {
	if len(c.cfg.middleware) == 0 {
		return c.retrying(ctx, out, cc)
	}
	base := func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		o, err := newOutgoing(req.Method, req.Params)
		if err != nil {
			return nil, err
		}
		return c.retrying(ctx, &o, cc)
	}
	res, err := jsonrpc.Chain(base, c.cfg.middleware...)(ctx, &jsonrpc.Request{Method: out.method, Params: out.params})
	if err != nil {
		return nil, err
	}
	raw, err := encodeResult(res)
	if err != nil {
		return nil, fmt.Errorf("client: a middleware's result for %s cannot be encoded: %w", out.method, err)
	}
	return raw, nil
}

// retrying sends one request, retrying once with a version the server
// supports (-32022) and once on a fresh session (the server does not know
// the session: HTTP 404, or 400 with -32000 naming it). When an earlier
// re-initialization failed, the client has no session: the request
// re-initializes first, which is then its one re-initialization.
func (c *Client) retrying(ctx context.Context, out *outgoing, cc callConfig) (json.RawMessage, error) {
	versionRetried, sessionRetried := false, false
	for {
		if lost := c.lostSession(); lost != "" && out.method != mcp.MethodInitialize {
			if sessionRetried {
				return nil, &SessionInvalidError{Op: out.method, SessionID: lost}
			}
			sessionRetried = true
			if err := c.reinitialize(ctx, lost); err != nil {
				return nil, err
			}
			continue
		}
		raw, err := c.exchange(ctx, out, cc)
		if err == nil {
			return raw, nil
		}
		var sg *sessionGoneError
		if errors.As(err, &sg) {
			if sessionRetried || out.method == mcp.MethodInitialize {
				return nil, &SessionInvalidError{Op: out.method, SessionID: sg.id, StatusCode: sg.status}
			}
			sessionRetried = true
			c.cfg.logger.Info("session lost; re-initializing", "session", sg.id)
			if err := c.reinitialize(ctx, sg.id); err != nil {
				return nil, err
			}
			continue
		}
		var je *JSONRPCError
		if errors.As(err, &je) && je.Code == mcp.CodeUnsupportedProtocolVersion && !versionRetried && c.state().era == mcp.EraModern {
			var d mcp.UnsupportedVersionData
			if derr := wirejson.Unmarshal(je.Data, &d); len(je.Data) > 0 && derr != nil {
				c.cfg.logger.Debug("unreadable -32022 data", "error", derr)
			}
			if v := pickVersion(d.Supported, mcp.ModernVersions()); v != "" {
				versionRetried = true
				c.setState(func(s *state) { s.version = v })
				continue
			}
		}
		return nil, err
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

// exchange sends one request and waits for its response: over HTTP on the
// caller's goroutine, which sends the POST and reads the reply carrying the
// response; over stdio and a Conn, whose reader hands the response over,
// by writing the request and waiting.
func (c *Client) exchange(ctx context.Context, out *outgoing, cc callConfig) (json.RawMessage, error) {
	st := c.state()
	var onProgress func(json.RawMessage)
	if cc.progress != nil {
		onProgress = c.progressFunc(cc.progress)
	}
	p, err := c.peer.Start(onProgress)
	if err != nil {
		return nil, err // the transport is gone: err is why
	}
	defer c.peer.Finish(p)
	if cc.onStart != nil {
		cc.onStart(p.ID)
	}
	if cc.onLog != nil {
		c.mu.Lock()
		if c.logs == nil {
			c.logs = map[jsonrpc.ID]func(LogMessage){}
		}
		c.logs[p.ID] = cc.onLog
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.logs, p.ID)
			c.mu.Unlock()
		}()
	}
	if cc.onToken != nil && p.Token != "" {
		cc.onToken(p.Token)
	}
	params, err := c.wireParams(out, &st, p.Token, cc.caps)
	if err != nil {
		return nil, err
	}
	modern := st.era == mcp.EraModern
	if h, ok := c.conn.(*httpConn); ok {
		w := wireInfo{method: out.method, version: st.version, modern: modern, call: p}
		if modern {
			w.name, w.params = c.nameHeaders(out)
		}
		err := h.send(ctx, &jsonrpc.Request{ID: p.ID, Method: out.method, Params: params}, &w)
		return c.awaitHTTP(ctx, p, &w, err)
	}
	req := &jsonrpc.Request{ID: p.ID, Method: out.method, Params: params}
	return c.awaitSend(ctx, req, &wireInfo{method: out.method, version: st.version, modern: modern, call: p})
}

// awaitHTTP ends an exchange over HTTP. The POST was sent and its reply
// read on the caller's goroutine, and returned with err: the response, once
// handed over (in that reply or, meanwhile, on another stream), is the
// outcome; else a failure (the context's when it ended, after telling a
// legacy server to stop); else the server accepted the request to answer
// it on another stream (202), where the response is awaited.
func (c *Client) awaitHTTP(ctx context.Context, p *jsonrpc.Pending, w *wireInfo, err error) (json.RawMessage, error) {
	select {
	case o := <-p.Wait():
		return c.finish(w.method, o)
	default:
	}
	if err != nil {
		if ctx.Err() != nil {
			c.cancelRequest(p.ID, w)
			return nil, &TransportError{Op: w.method, Err: ctxErr(ctx)}
		}
		return nil, err
	}
	select {
	case o := <-p.Wait():
		return c.finish(w.method, o)
	case <-ctx.Done():
		c.cancelRequest(p.ID, w)
		return nil, &TransportError{Op: w.method, Err: ctxErr(ctx)}
	}
}

// awaitSend sends a request over a link that carries messages both ways
// (stdio, a Conn) and waits for its response, which the link's reader
// hands over. The write runs on its own goroutine, so that a write stuck on
// a full pipe still ends with the context.
func (c *Client) awaitSend(ctx context.Context, req *jsonrpc.Request, w *wireInfo) (json.RawMessage, error) {
	p := w.call
	errc := make(chan error, 1)
	// The link is read here, not on the writer goroutine: a probe that
	// ends a stdio child may have its link replaced (restartAfterProbe)
	// while that goroutine is still returning.
	conn := c.conn
	go func() { errc <- conn.send(ctx, req, w) }()
	for {
		select {
		case o := <-p.Wait():
			return c.finish(w.method, o)
		case err := <-errc:
			if err != nil {
				select {
				case o := <-p.Wait():
					return c.finish(w.method, o)
				default:
				}
				if ctx.Err() != nil {
					c.cancelRequest(p.ID, w)
					return nil, &TransportError{Op: w.method, Err: ctxErr(ctx)}
				}
				return nil, err
			}
			errc = nil // sent; the response comes by dispatch
		case <-ctx.Done():
			c.cancelRequest(p.ID, w)
			return nil, &TransportError{Op: w.method, Err: ctxErr(ctx)}
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
		c.cfg.logger.Debug("cannot send notifications/cancelled", "error", err)
	}
}
