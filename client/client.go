package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Transport says how Connect reaches a server: *Command (a child process on
// stdio), *HTTP (Streamable HTTP, optionally falling back to the older
// transport), *SSE (the 2024-11-05 HTTP+SSE transport) or *Conn (any
// connection carrying whole messages, such as an in-process server).
type Transport interface {
	dial(ctx context.Context, c *Client) (link, error)
}

// link is one transport connection as the client core drives it.
type link interface {
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

// starter is implemented by links that read on their own goroutine; Connect
// starts them once the client holds the link, so that an early server
// request can be answered.
type starter interface{ start() }

// wireInfo is what a transport needs besides the message itself.
type wireInfo struct {
	method  string
	version string
	modern  bool
	name    string            // Mcp-Name, "" for none
	params  map[string]string // Mcp-Param-* headers
	call    *jsonrpc.Pending  // nil for notifications
}

// Client is a connection to one MCP server. It is safe for concurrent use.
type Client struct {
	cfg  config
	conn link

	// peer holds the requests sent and not yet answered: it allocates their
	// ids and progress tokens and matches responses to them.
	peer *jsonrpc.Peer

	mu      sync.Mutex
	dead    error         // why the transport is gone
	done    chan struct{} // closed when dead is set (Done)
	closed  bool
	serving map[jsonrpc.ID]context.CancelCauseFunc // server requests being answered
	logs    map[jsonrpc.ID]func(LogMessage)        // WithCallLog, by the wire request's id
	// slots holds a token per server request being answered; its capacity
	// is the limit (Limits.MaxServerRequests). refused counts those dropped.
	slots   chan struct{}
	refused atomic.Int64

	bg     context.Context // lives until Close: server requests run under it
	stopBg context.CancelFunc

	stateMu sync.RWMutex
	st      state

	reinitMu sync.Mutex

	tools toolCache
	roots rootsState
	tasks taskState

	// logLevel is the _meta member a 2026-07-28 request carries once
	// SetLogLevel has set a level, nil before.
	logLevel atomic.Pointer[[]byte]

	subs subscriptions

	// Made once at Connect for every request: the encoded capabilities and
	// clientInfo of 2026-07-28 _meta, and the cause of the client-wide WithTimeout.
	capsJSON, infoJSON json.RawMessage
	timeoutErr         *timeoutError

	// calls are the calls under way, by number, so that Close can end
	// them: over HTTP a call reads its reply on its own goroutine, under
	// its own context.
	callsMu sync.Mutex
	calls   map[uint64]context.CancelFunc
	callSeq uint64
}

// state is what negotiation learned.
type state struct {
	era          mcp.Era
	version      string
	server       mcp.Implementation
	caps         mcp.ServerCapabilities
	instructions string
}

// Connect reaches the server through t and negotiates the era; the returned
// client is ready for calls. Close it when done.
func Connect(ctx context.Context, t Transport, opts ...Option) (*Client, error) {
	if t == nil {
		return nil, errors.New("client: no transport given")
	}
	c := &Client{cfg: newConfig(opts), peer: jsonrpc.NewPeer(), done: make(chan struct{})}
	c.slots = make(chan struct{}, c.cfg.limits.MaxServerRequests)
	c.capsJSON, c.infoJSON = mustJSON(c.cfg.capabilities), mustJSON(c.cfg.clientInfo)
	c.timeoutErr = &timeoutError{c.cfg.timeout}
	c.roots.roots = c.cfg.roots
	c.bg, c.stopBg = context.WithCancel(context.Background())
	ln, err := t.dial(ctx, c)
	if err != nil {
		c.stopBg()
		return nil, err
	}
	c.conn = ln
	if s, ok := ln.(starter); ok {
		s.start()
	}
	if err := c.negotiate(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Close ends the connection: a legacy HTTP session is DELETEd, a stdio child
// is shut down (stdin closed, then SIGTERM, then SIGKILL), a Conn is closed.
// In-flight calls fail with a transport error.
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
	c.callsMu.Lock()
	for _, cancel := range c.calls {
		cancel() // their requests end; they return the failure above
	}
	c.callsMu.Unlock()
	return err
}

// callStarted registers a call's cancel function for Close; callEnded, with
// the number it returns, forgets it.
func (c *Client) callStarted(cancel context.CancelFunc) uint64 {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if c.calls == nil {
		c.calls = map[uint64]context.CancelFunc{}
	}
	c.callSeq++
	c.calls[c.callSeq] = cancel
	return c.callSeq
}

func (c *Client) callEnded(n uint64) {
	c.callsMu.Lock()
	delete(c.calls, n)
	c.callsMu.Unlock()
}

// Era returns the negotiated era (mcp.EraModern or mcp.EraLegacy).
func (c *Client) Era() mcp.Era { return c.state().era }

// OverSSE reports whether the session runs over the 2024-11-05 HTTP+SSE
// transport: an SSE transport, or Streamable HTTP that fell back to it
// (HTTP.SSEFallback) because the server refused initialize.
func (c *Client) OverSSE() bool {
	_, ok := c.conn.(*sseConn)
	return ok
}

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

// fail marks the transport gone: every pending request fails with err, and
// so does every later one. The first reason wins.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.dead == nil {
		c.dead = err
		close(c.done)
	}
	err = c.dead
	c.mu.Unlock()
	c.peer.Close(err)
}

// Done returns a channel closed when the connection is gone for good: a
// stdio child exited or closed its output, a Conn ended, or Close was
// called. Err then says why. An HTTP connection has no lasting transport
// to lose (each message is its own request, and a lost session is
// re-initialized; over the HTTP+SSE transport a lost event stream is
// reopened and initialized again), so over HTTP Done is closed only by
// Close; a failing HTTP server shows in the errors of calls. Supervisors (a gateway
// keeping a session per upstream) select on it to reconnect.
func (c *Client) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// Err returns why the connection is gone (a *TransportError), or nil
// while it is usable.
func (c *Client) Err() error { return c.deadErr() }

func (c *Client) deadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// dispatch routes one incoming message: a response to its request, a
// notification to the callbacks, a server request to the handler.
func (c *Client) dispatch(m jsonrpc.Message) { c.dispatchFor(context.Background(), m, jsonrpc.ID{}) }

// dispatchFor is dispatch for a message read on the reply stream of the
// client's request call, whose context is callCtx (an invalid ID when it
// came on no such stream): a server request there is part of that
// call, which fails when the answer to it cannot be delivered, and its
// handler sees the call's context values.
func (c *Client) dispatchFor(callCtx context.Context, m jsonrpc.Message, call jsonrpc.ID) {
	switch m := m.(type) {
	case *jsonrpc.Response:
		if !c.peer.Deliver(m) {
			c.cfg.logger.Debug("dropping a response to no pending request", "id", m.ID.String())
		}
	case *jsonrpc.Notification:
		c.notification(m, call)
	case *jsonrpc.Request:
		select {
		case c.slots <- struct{}{}:
			go func() {
				defer func() { <-c.slots }()
				c.serveRequest(callCtx, m, call)
			}()
		default:
			c.refuseRequest(m, call)
		}
	}
}

// refuseRequest drops a server request that came while the client was
// already answering as many as it answers at once (Limits.MaxServerRequests):
// the call whose reply stream it came on (call, when valid) fails, since
// the server waits for an answer that will not come.
func (c *Client) refuseRequest(req *jsonrpc.Request, call jsonrpc.ID) {
	n := cap(c.slots)
	if k := c.refused.Add(1); k&(k-1) == 0 { // the 1st, 2nd, 4th, 8th...: a flood is not logged in full
		c.cfg.logger.Warn("not answering a server request: too many at once", "method", req.Method, "id", req.ID.String(), "limit", n, "dropped", k)
	}
	if call.IsValid() {
		c.failCall(call, &TransportError{Op: "serve " + req.Method,
			Err: fmt.Errorf("the server sent request %s while the client was answering %d of its requests, the client's limit on requests answered at once", req.ID, n)})
	}
}

// progressWire is the part of notifications/progress params a report uses.
type progressWire struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// progressFunc adapts a caller's progress callback to the params the peer
// routes to it by token.
func (c *Client) progressFunc(fn func(Progress)) func(json.RawMessage) {
	return func(params json.RawMessage) {
		var p progressWire
		if err := wirejson.Unmarshal(params, &p); err != nil {
			c.cfg.logger.Debug("ignoring malformed progress", "params", string(params), "error", err)
			return
		}
		fn(Progress(p))
	}
}

// notification acts on a server notification; call is the request whose
// reply stream it came on (an invalid ID when none is known).
func (c *Client) notification(n *jsonrpc.Notification, call jsonrpc.ID) {
	c.subs.route(n, call)
	switch n.Method {
	case mcp.NotificationProgress:
		if !c.peer.Progress(n.Params) && !c.tasks.routeProgress(n.Params) {
			c.cfg.logger.Debug("ignoring progress for no request of ours", "params", string(n.Params))
		}
		return
	case mcp.NotificationMessage:
		var own func(LogMessage)
		if call.IsValid() {
			c.mu.Lock()
			own = c.logs[call]
			c.mu.Unlock()
		}
		if c.cfg.onLog != nil || own != nil {
			var w struct {
				Level  string          `json:"level"`
				Logger string          `json:"logger"`
				Data   json.RawMessage `json:"data"`
			}
			if err := wirejson.Unmarshal(n.Params, &w); err != nil {
				c.cfg.logger.Debug("ignoring malformed log message", "error", err)
				return
			}
			m := LogMessage{Level: mcp.LoggingLevel(w.Level), Logger: w.Logger, Data: w.Data}
			if own != nil {
				own(m)
			}
			if c.cfg.onLog != nil {
				c.cfg.onLog(m)
			}
		}
		return
	case mcp.NotificationResourceUpdated:
		if c.cfg.onUpdated != nil {
			var p mcp.ResourceUpdatedParams
			if err := wirejson.Unmarshal(n.Params, &p); err == nil && p.URI != "" {
				c.cfg.onUpdated(p.URI)
			} else {
				c.cfg.logger.Debug("ignoring malformed resources/updated", "params", string(n.Params))
			}
		}
	case mcp.NotificationToolsListChanged:
		c.tools.drop()
	case mcp.NotificationCancelled:
		c.cancelServing(n.Params)
	case mcp.NotificationTaskStatus, mcp.NotificationTasks:
		c.tasks.routeStatus(n.Params)
	}
	if c.cfg.onNotification != nil {
		c.cfg.onNotification(n.Method, n.Params)
	}
}

// errCancelledByServer ends the context of a server request the server
// cancelled; no answer is sent then.
var errCancelledByServer = errors.New("the server cancelled its request")

// cancelServing cancels the server request a notifications/cancelled names.
func (c *Client) cancelServing(params json.RawMessage) {
	var p mcp.CancelledParams
	if err := wirejson.Unmarshal(params, &p); err != nil || p.RequestID == nil {
		c.cfg.logger.Debug("ignoring malformed cancellation", "params", string(params))
		return
	}
	c.mu.Lock()
	cancel := c.serving[*p.RequestID]
	c.mu.Unlock()
	if cancel != nil {
		cancel(errCancelledByServer)
	}
}

// serveRequest answers a server-to-client request through the receiving
// middleware; the answer goes back over the same transport (over HTTP, a
// POST carrying the session id). When the answer cannot be delivered (the
// server refuses its POST, with 400 say), the server will not go on with
// the call the request came with (call, when valid): that call fails at
// once with why, rather than waiting for its timeout. The handler's
// context carries the values of that call's context (callCtx, when call is
// valid) but ends only with the server's cancellation or the client's
// close.
func (c *Client) serveRequest(callCtx context.Context, req *jsonrpc.Request, call jsonrpc.ID) {
	base := c.bg
	if call.IsValid() {
		base = context.WithoutCancel(callCtx)
	}
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	if call.IsValid() {
		stop := context.AfterFunc(c.bg, func() { cancel(context.Cause(c.bg)) })
		defer stop()
	}
	c.mu.Lock()
	if c.serving == nil {
		c.serving = map[jsonrpc.ID]context.CancelCauseFunc{}
	}
	c.serving[req.ID] = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.serving, req.ID)
		c.mu.Unlock()
	}()

	resp := &jsonrpc.Response{ID: req.ID}
	raw, err := c.answer(ctx, req)
	if context.Cause(ctx) == errCancelledByServer {
		c.cfg.logger.Debug("not answering a request the server cancelled", "method", req.Method, "id", req.ID.String())
		return
	}
	if err != nil {
		if je, ok := jsonrpc.AsError(err); ok {
			resp.Error = je
		} else {
			resp.Error = jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", err)
		}
	} else {
		resp.Result = raw
	}
	rctx, rcancel := context.WithTimeout(c.bg, 30*time.Second)
	defer rcancel()
	if err := c.conn.reply(rctx, resp); err != nil {
		c.cfg.logger.Warn("cannot answer a server request", "method", req.Method, "error", err)
		if call.IsValid() && c.bg.Err() == nil {
			c.failCall(call, answerError(req, err))
		}
	}
}

// answerError is why a call failed when the answer to the server request
// req that came with it could not be delivered (err).
func answerError(req *jsonrpc.Request, err error) error {
	te := &TransportError{Op: "answer to " + req.Method}
	cause := err
	var inner *TransportError
	if errors.As(err, &inner) {
		te.Op = inner.Op + " (answer to " + req.Method + ")"
		te.StatusCode, cause = inner.StatusCode, inner.Err
	}
	te.Err = fmt.Errorf("the server did not take the client's answer to its request %s, so the call cannot go on: %w", req.ID, cause)
	return te
}

// failCall ends the wait of the client's request id with err and closes its
// reply stream, if one is being read.
func (c *Client) failCall(id jsonrpc.ID, err error) {
	if !c.peer.Fail(id, err) {
		return
	}
	if h, ok := c.conn.(interface{ closeStream(jsonrpc.ID) }); ok {
		h.closeStream(id)
	}
}

// answer runs a server request (legacy, or an input request of an
// input_required round) through the receiving middleware to the built-in
// ping answer or the RequestHandler, and returns the answer's JSON.
func (c *Client) answer(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	h := jsonrpc.Chain(c.handleServerRequest, c.cfg.receiving...)
	res, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	raw, err := encodeResult(res)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot encode the answer to %s: %v", req.Method, err)
	}
	return raw, nil
}

// handleServerRequest is the innermost receiving handler: ping is answered
// here; a request for a capability the client did not declare is refused
// (-32601); elicitation/create, sampling/createMessage and roots/list go to
// their typed handlers when set; everything else to the RequestHandler, or
// is refused without one.
func (c *Client) handleServerRequest(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method == mcp.MethodPing {
		return json.RawMessage(`{}`), nil
	}
	if cp := capabilityOf(req.Method); cp != "" && !c.cfg.capabilities.Has(cp) {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "client does not handle %q: it did not declare the %s capability", req.Method, cp)
	}
	if res, ok, err := c.typed(ctx, req); ok {
		return res, err
	}
	if c.cfg.requestHandler == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "client does not handle %q", req.Method)
	}
	return c.cfg.requestHandler(ctx, req.Method, req.Params)
}

// encodeResult turns what a handler returned into result JSON: raw JSON as
// it is, anything else encoded. nil is an empty object.
func encodeResult(res any) (json.RawMessage, error) {
	switch r := res.(type) {
	case nil:
		return json.RawMessage(`{}`), nil
	case json.RawMessage:
		if r == nil {
			return json.RawMessage(`{}`), nil
		}
		return r, nil
	case []byte:
		return json.RawMessage(r), nil
	}
	return json.Marshal(res)
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

// sessionGoneError is what the HTTP transport returns when the server does
// not know the session: a 404, or a 400 with JSON-RPC -32000 naming the
// session (see rejectsSession).
type sessionGoneError struct {
	id     string
	status int
}

func (e *sessionGoneError) Error() string {
	return fmt.Sprintf("session %q not found (HTTP %d)", e.id, e.status)
}
