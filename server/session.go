package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Session is the protocol state of one connection. A legacy client opens it
// with initialize; a modern client's requests carry everything in _meta and
// may arrive on any session, including a fresh one per HTTP request.
type Session struct {
	srv *Server
	out jsonrpc.Sender

	mu          sync.Mutex
	initialized bool // initialize answered
	ready       bool // notifications/initialized received
	version     string
	clientInfo  mcp.Implementation
	clientCaps  mcp.ClientCapabilities
	inflight    map[jsonrpc.ID]*inflight
	listeners   map[*listener]struct{}
	closed      bool
	closing     chan struct{}
}

var errPeerCancelled = errors.New("request cancelled by the client")

// inflight is a request being served; listen requests outlive Close long
// enough to be answered gracefully.
type inflight struct {
	cancel context.CancelCauseFunc
	listen bool
}

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
	return PeerInfo{Era: mcp.EraLegacy, ProtocolVersion: ss.version, ClientInfo: ss.clientInfo, ClientCapabilities: ss.clientCaps}
}

var metaMember = []string{"_meta"}

// requestMetaOf reads the _meta of request params, nil when there is none.
// Most legacy requests carry no _meta at all; modern ones are scanned for it
// so that only the _meta object is decoded.
func requestMetaOf(params json.RawMessage) (*requestMeta, *jsonrpc.Error) {
	if len(params) == 0 || !bytes.Contains(params, []byte(`"_meta"`)) {
		return nil, nil
	}
	var raw []byte
	if !jsonscan.Members(params, metaMember, func(_, v []byte) bool { raw = v; return true }) {
		return requestMetaSlow(params)
	}
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	m := new(requestMeta)
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: _meta: %v", err)
	}
	return m, nil
}

// requestMetaSlow is requestMetaOf through encoding/json, for params the
// scanner declines.
func requestMetaSlow(params json.RawMessage) (*requestMeta, *jsonrpc.Error) {
	var head struct {
		Meta *requestMeta `json:"_meta"`
	}
	if err := json.Unmarshal(params, &head); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
	}
	return head.Meta, nil
}

// requestMeta is the part of a request's _meta the dispatcher reads.
type requestMeta struct {
	ProtocolVersion    *string                 `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
	ClientInfo         *mcp.Implementation     `json:"io.modelcontextprotocol/clientInfo"`
}

// HandleInline implements jsonrpc.InlineHandler: initialize is served before
// anything after it is read, so pipelined requests see the session open.
func (ss *Session) HandleInline(req *jsonrpc.Request) bool {
	return req.Method == mcp.MethodInitialize
}

// HandleRequest implements jsonrpc.Session.
func (ss *Session) HandleRequest(ctx context.Context, req *jsonrpc.Request, w jsonrpc.Sender) *jsonrpc.Response {
	if req.Method == mcp.MethodInitialize {
		res, err := ss.initialize(req.Params)
		return ss.reply(req.ID, res, err)
	}
	peer, perr := ss.peerOf(req)
	if perr != nil {
		return &jsonrpc.Response{ID: req.ID, Error: perr}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session is closed")}
	}
	if ss.inflight == nil {
		ss.inflight = map[jsonrpc.ID]*inflight{}
	}
	if _, dup := ss.inflight[req.ID]; dup {
		ss.mu.Unlock()
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request id %s is already in use by a request in flight", req.ID)}
	}
	ss.inflight[req.ID] = &inflight{cancel: cancel, listen: req.Method == mcp.MethodSubscriptionListen}
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.inflight, req.ID)
		ss.mu.Unlock()
	}()

	result, rerr := ss.dispatch(ctx, cancel, req, peer, w)
	if ctx.Err() != nil && context.Cause(ctx) != ErrTimeout {
		// Cancelled by the client or the connection is gone: no reply.
		return nil
	}
	if rerr != nil {
		return &jsonrpc.Response{ID: req.ID, Error: rerr}
	}
	return ss.reply(req.ID, result, nil)
}

func (ss *Session) reply(id jsonrpc.ID, result any, rerr *jsonrpc.Error) *jsonrpc.Response {
	if rerr != nil {
		return &jsonrpc.Response{ID: id, Error: rerr}
	}
	var raw []byte
	var err error
	if a, ok := result.(mcp.Appender); ok {
		raw, err = a.AppendJSON(nil)
	} else {
		raw, err = json.Marshal(result)
	}
	if err != nil {
		ss.srv.cfg.logger.Error("cannot encode result", "error", err)
		return &jsonrpc.Response{ID: id, Error: jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot encode result: %v", err)}
	}
	return &jsonrpc.Response{ID: id, Result: raw}
}

// peerOf decides the era of one request. A request whose _meta names a
// protocol version is modern and self-describing; anything else belongs to the
// legacy session and needs initialize first (ping excepted).
func (ss *Session) peerOf(req *jsonrpc.Request) (PeerInfo, *jsonrpc.Error) {
	m, perr := requestMetaOf(req.Params)
	if perr != nil {
		return PeerInfo{}, perr
	}
	if m != nil && m.ProtocolVersion != nil {
		v := *m.ProtocolVersion
		if mcp.EraOf(v) == mcp.EraModern {
			if m.ClientCapabilities == nil {
				return PeerInfo{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing _meta %q: every %s request must declare its client capabilities", mcp.MetaClientCapabilities, v)
			}
			p := PeerInfo{Era: mcp.EraModern, ProtocolVersion: v, ClientCapabilities: *m.ClientCapabilities}
			if m.ClientInfo != nil {
				p.ClientInfo = *m.ClientInfo
			}
			return p, nil
		}
		ss.mu.Lock()
		same := ss.initialized && v == ss.version
		p := ss.legacyPeerLocked()
		ss.mu.Unlock()
		if same {
			return p, nil
		}
		return PeerInfo{}, jsonrpc.NewError(mcp.CodeUnsupportedProtocolVersion, "unsupported protocol version %q", v).
			WithData(mcp.UnsupportedVersionData{Supported: mcp.SupportedVersions(), Requested: v})
	}
	if m != nil && m.ClientCapabilities != nil {
		return PeerInfo{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing _meta %q", mcp.MetaProtocolVersion)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.initialized && req.Method != mcp.MethodPing {
		return PeerInfo{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"session not initialized: send %q first (2025-11-25 and older), or carry _meta %q and %q (2026-07-28)",
			mcp.MethodInitialize, mcp.MetaProtocolVersion, mcp.MetaClientCapabilities)
	}
	return ss.legacyPeerLocked(), nil
}

func (ss *Session) dispatch(ctx context.Context, cancel context.CancelCauseFunc, req *jsonrpc.Request, peer PeerInfo, w jsonrpc.Sender) (any, *jsonrpc.Error) {
	modern := peer.Era == mcp.EraModern
	switch req.Method {
	case mcp.MethodPing:
		if !modern {
			return &mcp.EmptyResult{}, nil
		}
	case mcp.MethodDiscover:
		if modern {
			return ss.discover(), nil
		}
	case mcp.MethodListTools:
		res, err := ss.listTools(req.Params, peer)
		if err != nil {
			return nil, err
		}
		if modern {
			res.ResultType, res.Meta = mcp.ResultComplete, ss.srv.withServerInfo(res.Meta)
		}
		return res, nil
	case mcp.MethodCallTool:
		res, err := ss.callTool(ctx, cancel, req.Params, peer, w)
		if err != nil {
			return nil, err
		}
		if modern {
			c := *res
			c.ResultType, c.Meta = mcp.ResultComplete, ss.srv.withServerInfo(res.Meta)
			return &c, nil
		}
		if len(res.StructuredContent) > 0 && res.StructuredContent[0] != '{' {
			// 2025-11-25 requires an object; the text block still carries the value.
			c := *res
			c.StructuredContent = nil
			return &c, nil
		}
		return res, nil
	case mcp.MethodSubscriptionListen:
		if modern {
			return ss.listen(ctx, req, w)
		}
	}
	era := "2025-11-25"
	if modern {
		era = peer.ProtocolVersion
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %q is not served in %s", req.Method, era)
}

// withServerInfo returns meta plus the server's identity, leaving the
// caller's map untouched.
func (s *Server) withServerInfo(meta mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out[mcp.MetaServerInfo] = s.info
	return out
}

func (ss *Session) discover() *mcp.DiscoverResult {
	srv := ss.srv
	ttl := srv.cfg.listTTL.Milliseconds()
	return &mcp.DiscoverResult{
		SupportedVersions: mcp.SupportedVersions(),
		Capabilities:      srv.capabilities(),
		Instructions:      srv.cfg.instructions,
		TTLMs:             &ttl,
		CacheScope:        srv.cfg.cacheScope,
		ResultType:        mcp.ResultComplete,
		Meta:              srv.withServerInfo(nil),
	}
}

// initialize opens a legacy session: the server echoes a version it speaks,
// or answers with its newest legacy version for the client to accept or not.
func (ss *Session) initialize(params json.RawMessage) (any, *jsonrpc.Error) {
	var p mcp.InitializeParams
	if len(params) == 0 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "initialize: params are required")
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "initialize: invalid params: %v", err)
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
	ss.initialized, ss.version, ss.clientInfo, ss.clientCaps = true, version, p.ClientInfo, p.Capabilities
	return &mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    ss.srv.capabilities(),
		ServerInfo:      ss.srv.info,
		Instructions:    ss.srv.cfg.instructions,
	}, nil
}

// HandleNotification implements jsonrpc.Session.
func (ss *Session) HandleNotification(ctx context.Context, n *jsonrpc.Notification) {
	switch n.Method {
	case mcp.NotificationInitialized:
		ss.mu.Lock()
		if ss.initialized {
			ss.ready = true
		}
		ss.mu.Unlock()
	case mcp.NotificationCancelled:
		var p mcp.CancelledParams
		if err := json.Unmarshal(n.Params, &p); err != nil || p.RequestID == nil {
			ss.srv.cfg.logger.Debug("ignoring malformed cancellation", "params", string(n.Params))
			return
		}
		ss.mu.Lock()
		f := ss.inflight[*p.RequestID]
		ss.mu.Unlock()
		if f != nil {
			f.cancel(errPeerCancelled)
		}
	}
}

// HandleResponse implements jsonrpc.Session. The server sends no requests of
// its own yet, so a response is unexpected and dropped.
func (ss *Session) HandleResponse(ctx context.Context, r *jsonrpc.Response) {
	ss.srv.cfg.logger.Debug("dropping unexpected response", "id", r.ID.String())
}

// Close cancels in-flight requests, ends subscriptions gracefully and
// forgets the session.
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
	cancels := make([]context.CancelCauseFunc, 0, len(ss.inflight))
	for _, f := range ss.inflight {
		if !f.listen {
			cancels = append(cancels, f.cancel)
		}
	}
	ss.mu.Unlock()
	for _, c := range cancels {
		c(errSessionClosed)
	}
	ss.srv.dropSession(ss)
}

var errSessionClosed = errors.New("session closed")
