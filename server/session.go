package server

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/smallmap"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Session is the protocol state of one connection. A legacy client opens it
// with initialize; a modern client's requests carry everything in _meta and
// may arrive on any session, including a fresh one per HTTP request.
type Session struct {
	srv *Server
	out jsonrpc.Sender // messages that belong to no request

	mu          sync.Mutex
	initialized bool // initialize answered
	ready       bool // notifications/initialized received
	closed      bool
	registered  bool      // in the server's session set, for list changes
	notifier    bool      // a goroutine is sending list changes
	logsSending bool      // a goroutine is draining logs.queue (slog.go)
	changed     changeSet // list changes not yet sent
	version     string
	clientInfo  mcp.Implementation
	clientCaps  *mcp.ClientCapabilities // nil when the client declared none
	inflight    smallmap.Map[jsonrpc.ID, *call]
	listeners   map[*listener]struct{}
	calls       *jsonrpc.Peer // requests this server sent the client
	closing     chan struct{}
	logs        sessionLogs // logging/setLevel and queued server-wide records (logging.go)

	stateRev    atomic.Uint64 // bumped whenever Snapshot changes (session_state.go)
	firstCallID int64         // requests to the client are numbered from firstCallID+1
}

var (
	errPeerCancelled = errors.New("request cancelled by the client")
	errSessionClosed = errors.New("session closed")
)

func newSession(s *Server, out jsonrpc.Sender) *Session {
	// Maps and channels are made on first use: an idle session costs little.
	return &Session{srv: s, out: out}
}

// Peer returns what the session knows of a legacy client (zero before
// initialize).
func (ss *Session) Peer() PeerInfo {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.legacyPeerLocked()
}

func (ss *Session) legacyPeerLocked() PeerInfo {
	return PeerInfo{Era: mcp.EraLegacy, ProtocolVersion: ss.version, ClientInfo: ss.clientInfo, ClientCapabilities: ss.capsLocked()}
}

// capsLocked returns the capabilities the client declared.
func (ss *Session) capsLocked() mcp.ClientCapabilities {
	if ss.clientCaps == nil {
		return mcp.ClientCapabilities{}
	}
	return *ss.clientCaps
}

// keptCaps returns what a session keeps of declared capabilities: nothing
// when the client declared none (capabilities {}), the common case of a
// client that only calls tools, so that its idle session stays small.
func keptCaps(c mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if c.Roots == nil && c.Sampling == nil && c.Elicitation == nil && c.Tasks == nil && c.Experimental == nil && c.Extensions == nil {
		return nil
	}
	return &c
}

// HandleInline implements jsonrpc.InlineHandler: initialize is served before
// anything after it is read, so pipelined requests see the session open.
func (ss *Session) HandleInline(req *jsonrpc.Request) bool {
	return req.Method == mcp.MethodInitialize
}

// initialize opens a legacy session: the server echoes a version it speaks,
// or answers with its newest legacy version for the client to accept or not.
func (ss *Session) initialize(_ context.Context, r *Request, p *initializeParams) (*mcp.InitializeResult, error) {
	if r.Params == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "initialize: params are required")
	}
	if p.ProtocolVersion == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `initialize: "protocolVersion" is required`)
	}
	version := mcp.LatestLegacyVersion
	if mcp.EraOf(p.ProtocolVersion) == mcp.EraLegacy {
		version = p.ProtocolVersion
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.initialized {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session is already initialized")
	}
	ss.initialized, ss.version, ss.clientInfo, ss.clientCaps = true, version, p.ClientInfo, keptCaps(p.Capabilities)
	ss.stateRev.Add(1)
	return &mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    ss.srv.capabilities(mcp.EraLegacy),
		ServerInfo:      ss.srv.info,
		Instructions:    ss.srv.cfg.instructions,
	}, nil
}

// HandleNotification implements jsonrpc.Session.
func (ss *Session) HandleNotification(ctx context.Context, n *jsonrpc.Notification) {
	switch n.Method {
	case mcp.NotificationInitialized:
		ss.mu.Lock()
		if ss.initialized && !ss.ready {
			ss.ready = true
			ss.stateRev.Add(1)
		}
		ss.mu.Unlock()
	case mcp.NotificationCancelled:
		var p cancelledParams
		if err := wirejson.Unmarshal(n.Params, &p); err != nil || p.RequestID == nil {
			ss.srv.cfg.logger.Debug("ignoring malformed cancellation", "params", string(n.Params))
			return
		}
		ss.mu.Lock()
		f, _ := ss.inflight.Get(*p.RequestID)
		ss.mu.Unlock()
		if f != nil {
			f.cancel(errPeerCancelled)
		}
	case mcp.NotificationProgress:
		if calls := ss.peerCalls(false); calls == nil || !calls.Progress(n.Params) {
			ss.srv.cfg.logger.Debug("ignoring progress for no request of ours", "params", string(n.Params))
		}
	case mcp.NotificationRootsListChanged:
		if f := ss.srv.cfg.rootsChanged; f != nil && ss.Peer().ClientCapabilities.Has("roots") {
			f(ctx, ss)
		}
	default:
		ss.srv.cfg.logger.Debug("ignoring notification", "method", n.Method)
	}
}

// HandleResponse implements jsonrpc.Session: the client's answer to a
// request this server sent. An answer to no such request is logged and
// dropped.
func (ss *Session) HandleResponse(ctx context.Context, r *jsonrpc.Response) {
	if !ss.DeliverResponse(ctx, r) {
		ss.srv.cfg.logger.Warn("dropping a response to no request of ours", "id", r.ID.String())
	}
}

// DeliverResponse implements jsonrpc.ResponseDeliverer: it hands the
// client's answer to the request it answers, reporting false (and doing
// nothing) when no request of this session awaits it.
func (ss *Session) DeliverResponse(_ context.Context, r *jsonrpc.Response) bool {
	calls := ss.peerCalls(false)
	return calls != nil && calls.Deliver(r)
}

// peerCalls returns the table of requests sent to the client, making it
// when asked to.
func (ss *Session) peerCalls(create bool) *jsonrpc.Peer {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.calls == nil && create && !ss.closed {
		ss.calls = jsonrpc.NewPeerAt(ss.firstCallID)
	}
	return ss.calls
}

// Call sends a request to a legacy session's client outside any request
// (over HTTP, on the session's GET stream) and waits for its result within
// ctx. See Request.Call.
func (ss *Session) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	peer := ss.Peer()
	if peer.ProtocolVersion == "" || ss.out == nil {
		return nil, ErrNoBackChannel
	}
	return ss.call(ctx, ss.out, peer, method, params)
}

// outbound is what the base of the sending middleware chain needs.
type outbound struct {
	ss *Session
	w  jsonrpc.Sender
}

type outboundKey struct{}

// call runs a server-to-client request through the sending middleware.
func (ss *Session) call(ctx context.Context, w jsonrpc.Sender, peer PeerInfo, method string, params any) (json.RawMessage, error) {
	if need := clientMethods[method]; need != "" && !peer.ClientCapabilities.Has(need) {
		return nil, &MissingCapabilityError{Method: method, Capability: need}
	}
	if w == nil {
		return nil, ErrNoBackChannel
	}
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = encodeParams(params); err != nil {
			return nil, err
		}
	}
	ctx = context.WithValue(ctx, outboundKey{}, outbound{ss, w})
	res, err := ss.srv.sending(ctx, &jsonrpc.Request{Method: method, Params: raw})
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return nil, &ClientError{Method: method, Code: je.Code, Message: je.Message, Data: je.Data}
		}
		return nil, err
	}
	return encodeResult(res, peer.Era)
}

// sendToClient is the base of the sending chain: it allocates an id, sends,
// and waits; if ctx ends first, the client is told with
// notifications/cancelled.
func (s *Server) sendToClient(ctx context.Context, req *jsonrpc.Request) (any, error) {
	ob, _ := ctx.Value(outboundKey{}).(outbound)
	if ob.ss == nil {
		return nil, ErrNoBackChannel
	}
	calls := ob.ss.peerCalls(true)
	if calls == nil {
		return nil, errSessionClosed
	}
	return calls.Call(ctx, req.Method, req.Params,
		func(ctx context.Context, r *jsonrpc.Request, _ *jsonrpc.Pending) error { return ob.w.Send(ctx, r) },
		&jsonrpc.CallOptions{Cancel: func(id jsonrpc.ID, reason error) {
			n, err := jsonrpc.NewNotification(mcp.NotificationCancelled, mcp.CancelledParams{RequestID: &id, Reason: reason.Error()})
			if err != nil {
				return
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
			defer cancel()
			_ = ob.w.Send(cctx, n)
		}})
}

// Close cancels in-flight requests, fails requests sent to the client, ends
// subscriptions gracefully and forgets the session.
func (ss *Session) Close() {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	ss.closed = true
	if ss.closing != nil {
		close(ss.closing)
	}
	cancels := make([]context.CancelCauseFunc, 0, ss.inflight.Len())
	for _, f := range ss.inflight.All() {
		if !f.listen {
			cancels = append(cancels, f.cancel)
		}
	}
	calls := ss.calls
	ss.mu.Unlock()
	for _, c := range cancels {
		c(errSessionClosed)
	}
	if calls != nil {
		calls.Close(errSessionClosed)
	}
	if ss.registered {
		ss.srv.dropSession(ss)
	}
	ss.srv.dropSubscriptions(ss)
}

// notifyTimeout bounds one delivery of a notification to a slow peer.
const notifyTimeout = 5 * time.Second
