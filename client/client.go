package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Transport says how Connect reaches a server: *Command (a child process on
// stdio) or *HTTP (Streamable HTTP).
type Transport interface {
	dial(ctx context.Context, c *Client) (conn, error)
}

// conn is one transport connection as the client core drives it.
type conn interface {
	// send transmits req. Over HTTP it also reads the reply stream, handing
	// every message to the client, and returns once the response has been
	// handed over or the stream is over.
	send(ctx context.Context, req *jsonrpc.Request, w *wireInfo) error
	// notify transmits a notification.
	notify(ctx context.Context, n *jsonrpc.Notification, w *wireInfo) error
	// reply answers a server request.
	reply(ctx context.Context, r *jsonrpc.Response) error
	close() error
}

// wireInfo is what a transport needs besides the message itself.
type wireInfo struct {
	method  string
	version string
	modern  bool
	name    string            // Mcp-Name, "" for none
	params  map[string]string // Mcp-Param-* headers
	call    *pending          // nil for notifications
}

// Client is a connection to one MCP server. It is safe for concurrent use.
type Client struct {
	opts Options
	conn conn

	nextID atomic.Int64

	mu      sync.Mutex
	pending map[jsonrpc.ID]*pending
	byToken map[string]*pending
	dead    error         // why the transport is gone
	done    chan struct{} // closed when the transport is gone or Close ran
	closed  bool

	bg     context.Context // lives until Close: server requests run under it
	stopBg context.CancelFunc

	stateMu sync.RWMutex
	st      state

	reinitMu sync.Mutex

	tools toolCache
}

// state is what negotiation learned.
type state struct {
	era          mcp.Era
	version      string
	server       mcp.Implementation
	caps         mcp.ServerCapabilities
	instructions string
}

// pending is a request awaiting its response.
type pending struct {
	id       jsonrpc.ID
	token    string // progress token as sent ("" for none)
	progress func(Progress)
	ch       chan outcome // buffered: the first outcome wins
	answered atomic.Bool  // an outcome has been delivered
}

type outcome struct {
	resp *jsonrpc.Response
	err  error
}

func (p *pending) deliver(o outcome) {
	p.answered.Store(true)
	select {
	case p.ch <- o:
	default:
	}
}

// Connect reaches the server through t and negotiates the era; the returned
// client is ready for calls. Close it when done.
func Connect(ctx context.Context, t Transport, opts *Options) (*Client, error) {
	if t == nil {
		return nil, errors.New("client: no transport given")
	}
	c := &Client{opts: opts.withDefaults(), pending: map[jsonrpc.ID]*pending{}, byToken: map[string]*pending{}, done: make(chan struct{})}
	c.bg, c.stopBg = context.WithCancel(context.Background())
	cn, err := t.dial(ctx, c)
	if err != nil {
		c.stopBg()
		return nil, err
	}
	c.conn = cn
	if s, ok := cn.(interface{ start() }); ok {
		s.start()
	}
	if err := c.negotiate(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Close ends the connection: a legacy HTTP session is DELETEd, a stdio child
// is shut down (stdin closed, then SIGTERM, then SIGKILL). In-flight calls
// fail with a transport error.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	err := c.conn.close()
	c.stopBg()
	c.fail(&TransportError{Op: "close", Err: errors.New("client closed")})
	return err
}

// Era returns the negotiated era (mcp.EraModern or mcp.EraLegacy).
func (c *Client) Era() mcp.Era { return c.state().era }

// ProtocolVersion returns the negotiated protocol version.
func (c *Client) ProtocolVersion() string { return c.state().version }

// ServerInfo returns the server's self-description (from initialize, or from
// the server/discover result's _meta).
func (c *Client) ServerInfo() mcp.Implementation { return c.state().server }

// ServerCapabilities returns what the server declared.
func (c *Client) ServerCapabilities() mcp.ServerCapabilities { return c.state().caps }

// Instructions returns the server's instructions, if any.
func (c *Client) Instructions() string { return c.state().instructions }

func (c *Client) state() state {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.st
}

func (c *Client) setState(f func(*state)) {
	c.stateMu.Lock()
	f(&c.st)
	c.stateMu.Unlock()
}

// fail marks the transport gone and fails every pending request with err.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.dead == nil {
		c.dead = err
		close(c.done)
	}
	ps := make([]*pending, 0, len(c.pending))
	for _, p := range c.pending {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	for _, p := range ps {
		p.deliver(outcome{err: err})
	}
}

func (c *Client) deadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// register allocates an id (and a progress token when asked) for a request.
func (c *Client) register(progress func(Progress)) *pending {
	n := c.nextID.Add(1)
	p := &pending{id: jsonrpc.Int64ID(n), progress: progress, ch: make(chan outcome, 1)}
	c.mu.Lock()
	c.pending[p.id] = p
	if progress != nil {
		p.token = "tw-progress-" + strconv.FormatInt(n, 10)
		c.byToken[p.token] = p
	}
	c.mu.Unlock()
	return p
}

func (c *Client) unregister(p *pending) {
	c.mu.Lock()
	delete(c.pending, p.id)
	if p.token != "" {
		delete(c.byToken, p.token)
	}
	c.mu.Unlock()
}

// failPending fails the pending request with the given id, if any.
func (c *Client) failPending(id jsonrpc.ID, err error) bool {
	c.mu.Lock()
	p := c.pending[id]
	c.mu.Unlock()
	if p == nil {
		return false
	}
	p.deliver(outcome{err: err})
	return true
}

// failAllPending fails every pending request but keeps the transport.
func (c *Client) failAllPending(err error) {
	c.mu.Lock()
	ps := make([]*pending, 0, len(c.pending))
	for _, p := range c.pending {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	for _, p := range ps {
		p.deliver(outcome{err: err})
	}
}

// dispatch routes one incoming message: a response to its request, a
// notification to the callbacks, a server request to the handler.
func (c *Client) dispatch(m jsonrpc.Message) {
	switch m := m.(type) {
	case *jsonrpc.Response:
		c.mu.Lock()
		p := c.pending[m.ID]
		c.mu.Unlock()
		if p == nil {
			c.opts.Logger.Debug("dropping a response to no pending request", "id", m.ID.String())
			return
		}
		p.deliver(outcome{resp: m})
	case *jsonrpc.Notification:
		c.notification(m)
	case *jsonrpc.Request:
		go c.serveRequest(m)
	}
}

func (c *Client) notification(n *jsonrpc.Notification) {
	switch n.Method {
	case mcp.NotificationProgress:
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    float64         `json:"total"`
			Message  string          `json:"message"`
		}
		if err := json.Unmarshal(n.Params, &p); err != nil {
			c.opts.Logger.Debug("ignoring malformed progress", "params", string(n.Params))
			return
		}
		var tok string
		if json.Unmarshal(p.Token, &tok) != nil {
			tok = string(bytes.TrimSpace(p.Token))
		}
		c.mu.Lock()
		pd := c.byToken[tok]
		c.mu.Unlock()
		if pd != nil && pd.progress != nil {
			pd.progress(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
		return
	case mcp.NotificationMessage:
		if c.opts.OnLog != nil {
			var lm LogMessage
			if json.Unmarshal(n.Params, &lm) == nil {
				c.opts.OnLog(lm)
			}
		}
		return
	case mcp.NotificationToolsListChanged:
		c.tools.drop()
	}
	if c.opts.OnNotification != nil {
		c.opts.OnNotification(n.Method, n.Params)
	}
}

// serveRequest answers a server-to-client request.
func (c *Client) serveRequest(req *jsonrpc.Request) {
	resp := &jsonrpc.Response{ID: req.ID}
	switch {
	case req.Method == mcp.MethodPing:
		resp.Result = json.RawMessage(`{}`)
	case c.opts.RequestHandler == nil:
		resp.Error = jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "client does not handle %q", req.Method)
	default:
		res, err := c.opts.RequestHandler(c.bg, req.Method, req.Params)
		if err != nil {
			if je, ok := jsonrpc.AsError(err); ok {
				resp.Error = je
			} else {
				resp.Error = jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", err)
			}
			break
		}
		raw, err := json.Marshal(res)
		if err != nil {
			resp.Error = jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot encode the answer: %v", err)
			break
		}
		resp.Result = raw
	}
	ctx, cancel := context.WithTimeout(c.bg, 30*time.Second)
	defer cancel()
	if err := c.conn.reply(ctx, resp); err != nil {
		c.opts.Logger.Warn("cannot answer a server request", "method", req.Method, "error", err)
	}
}

// Call sends any request and returns its raw result. It handles what every
// request shares: _meta, headers, timeouts, cancellation, progress, the
// version retry, the session retry and input_required rounds.
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

// paramsObject turns params into a mutable object of raw members.
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
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("client: params must encode to a JSON object: %w", err)
	}
	return obj, nil
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
		var head struct {
			ResultType    mcp.ResultType             `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  json.RawMessage            `json:"requestState"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, &ProtocolError{Op: method, Reason: "result is not a JSON object", Err: err}
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

// answerInputs asks the RequestHandler for every input request.
func (c *Client) answerInputs(ctx context.Context, method string, reqs map[string]json.RawMessage) (json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(reqs))
	for key, raw := range reqs {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.Method == "" {
			return nil, &ProtocolError{Op: method, Reason: fmt.Sprintf("input request %q is not {method, params}", key), Err: err}
		}
		if c.opts.RequestHandler == nil {
			return nil, &ProtocolError{Op: method, Reason: fmt.Sprintf("server requires input %q (%s) but the client has no RequestHandler", key, r.Method)}
		}
		res, err := c.opts.RequestHandler(ctx, r.Method, r.Params)
		if err != nil {
			return nil, fmt.Errorf("client: answering input %q (%s): %w", key, r.Method, err)
		}
		enc, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("client: encoding the answer to input %q: %w", key, err)
		}
		out[key] = enc
	}
	return json.Marshal(out)
}

// roundTrip sends one request, retrying once with a version the server
// supports (-32022) and once on a fresh session (HTTP 404).
func (c *Client) roundTrip(ctx context.Context, method string, obj map[string]json.RawMessage, cc *callConfig) (json.RawMessage, error) {
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
			_ = json.Unmarshal(je.Data, &d)
			if v := pickVersion(d.Supported, mcp.ModernVersions); v != "" {
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
	if err := c.deadErr(); err != nil {
		return nil, err
	}
	st := c.state()
	modern := st.era == mcp.EraModern
	p := c.register(cc.progress)
	defer c.unregister(p)

	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	if modern {
		meta[mcp.MetaProtocolVersion] = mustJSON(st.version)
		meta[mcp.MetaClientCapabilities] = mustJSON(c.opts.Capabilities)
		meta[mcp.MetaClientInfo] = mustJSON(c.opts.ClientInfo)
	}
	if p.token != "" {
		meta[mcp.MetaProgressToken] = mustJSON(p.token)
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
	req := &jsonrpc.Request{ID: p.id, Method: method, Params: params}
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
		case o := <-p.ch:
			return c.finish(method, o)
		case err := <-errc:
			if err != nil {
				select {
				case o := <-p.ch:
					return c.finish(method, o)
				default:
				}
				if ctx.Err() != nil {
					c.cancelRequest(p, w)
					return nil, &TransportError{Op: method, Err: ctxErr(ctx)}
				}
				return nil, err
			}
			errc = nil // sent; the response comes by dispatch
		case <-ctx.Done():
			c.cancelRequest(p, w)
			return nil, &TransportError{Op: method, Err: ctxErr(ctx)}
		case <-c.done:
			select {
			case o := <-p.ch:
				return c.finish(method, o)
			default:
			}
			return nil, c.deadErr()
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

func (c *Client) finish(method string, o outcome) (json.RawMessage, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.resp.Error != nil {
		e := o.resp.Error
		return nil, &JSONRPCError{Method: method, Code: e.Code, Message: e.Message, Data: e.Data}
	}
	return o.resp.Result, nil
}

// cancelRequest tells the server to stop: notifications/cancelled on stdio
// and on legacy HTTP; over modern HTTP closing the stream (already done by
// the cancelled context) is the cancellation.
func (c *Client) cancelRequest(p *pending, w *wireInfo) {
	if w.method == mcp.MethodInitialize {
		return // initialize is never cancelled
	}
	if _, isHTTP := c.conn.(*httpConn); isHTTP && w.modern {
		return
	}
	id := p.id
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

// nameHeaders returns the Mcp-Name value and the Mcp-Param-* headers.
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
		_ = json.Unmarshal(raw, &name)
	}
	var params map[string]string
	if method == mcp.MethodCallTool && modern {
		if t := c.tools.get(name); t != nil {
			params = paramHeaderValues(t.headers, obj["arguments"])
		}
	}
	return encodeHeaderValue(name), params
}

// notify sends a notification with the current era's wire details.
func (c *Client) notify(ctx context.Context, method string, params any) error {
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		return err
	}
	st := c.state()
	return c.conn.notify(ctx, n, &wireInfo{method: method, version: st.version, modern: st.era == mcp.EraModern})
}

func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("client: encoding %T: %v", v, err)) // only called on values that always encode
	}
	return raw
}

// sessionGoneError is what the HTTP transport returns on a 404 for a session.
type sessionGoneError struct{ id string }

func (e *sessionGoneError) Error() string {
	return fmt.Sprintf("session %q not found (HTTP 404)", e.id)
}
