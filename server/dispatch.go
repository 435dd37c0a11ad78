package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/transport"
)

// HandleRequest implements jsonrpc.Session: it decides the request's era,
// runs the server's middleware and the method from the table, and encodes the
// result for the era (2026-07-28 results are stamped with resultType, the
// server's identity and, for lists, cache hints).
func (ss *Session) HandleRequest(ctx context.Context, req *jsonrpc.Request, w jsonrpc.Sender) *jsonrpc.Response {
	if ctx.Err() != nil {
		// Cancelled before it began (the client's cancellation was read
		// first): nothing runs and, as for any cancelled request, nothing
		// is answered.
		return nil
	}
	peer, perr := ss.peerOf(req)
	if perr != nil {
		return &jsonrpc.Response{ID: req.ID, Error: perr}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &call{Request: Request{Method: req.Method, ID: req.ID, Params: req.Params, Peer: peer, session: ss, sender: w,
		http: transport.HTTPRequest(ctx), principal: auth.PrincipalFrom(ctx)},
		cancel: cancel, listen: req.Method == mcp.MethodSubscriptionListen}
	if req.Method == mcp.MethodInitialize {
		// initialize is never cancelled (clients must not), so it takes no
		// in-flight entry: an idle session keeps no in-flight table.
		return ss.serve(ctx, r, req)
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session is closed")}
	}
	if _, dup := ss.inflight.Get(req.ID); dup {
		ss.mu.Unlock()
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request id %s is already in use by a request in flight", req.ID)}
	}
	ss.inflight.Put(r)
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		ss.inflight.Delete(req.ID)
		logs := r.endLogsLocked()
		ss.mu.Unlock()
		logs.end() // no log message after the response (logging.go)
	}()
	return ss.serve(ctx, r, req)
}

// serve runs a request through the middleware and the method table and
// encodes its answer; nil when the client cancelled it.
func (ss *Session) serve(ctx context.Context, r *call, req *jsonrpc.Request) *jsonrpc.Response {
	ctx = context.WithValue(ctx, requestKey{}, r)
	if err := ss.srv.checkHeaders(r, req); err != nil {
		return &jsonrpc.Response{ID: req.ID, Error: err}
	}
	result, err := ss.srv.handler(ctx, req)
	if ctx.Err() != nil && context.Cause(ctx) != ErrTimeout {
		// Cancelled by the client or the connection is gone: no reply.
		return nil
	}
	if err != nil {
		return &jsonrpc.Response{ID: req.ID, Error: errorOf(err)}
	}
	raw, err := ss.srv.encodeFor(r, result)
	if err != nil {
		ss.srv.cfg.logger.Error("cannot encode result", "method", req.Method, "error", err)
		return &jsonrpc.Response{ID: req.ID, Error: jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot encode the %s result: %v", req.Method, err)}
	}
	return &jsonrpc.Response{ID: req.ID, Result: raw}
}

// call is the engine's own state of a request in flight, beside what
// handlers see; the context carries it under requestKey.
type call struct {
	Request
	cancel context.CancelCauseFunc // cancels the request's context
	listen bool                    // a subscription: answered gracefully on Close
	m      *method                 // set once routed
}

// Key is the request's id, which names it among the session's requests
// in flight.
func (c *call) Key() jsonrpc.ID { return c.ID }

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(requestKey{}).(*call)
	return c
}

// errorOf turns a handler error into the JSON-RPC error to answer with.
func errorOf(err error) *jsonrpc.Error {
	if je, ok := jsonrpc.AsError(err); ok {
		return je
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "%s", err.Error())
}

// route is the innermost handler: it finds the method in the table and runs
// it. Middleware may have rewritten the request, so it is read again here.
func (s *Server) route(ctx context.Context, req *jsonrpc.Request) (any, error) {
	c := callFrom(ctx)
	if c == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "request served outside the server's dispatch")
	}
	c.Method, c.Params = req.Method, req.Params
	m := (*s.table.Load())[req.Method]
	if m == nil || !m.Eras.Has(c.Peer.Era) {
		era := mcp.Version20251125
		if c.Peer.Era == mcp.EraModern {
			era = c.Peer.ProtocolVersion
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %q is not served in %s", req.Method, era)
	}
	if m.Extension != "" && c.Peer.Era == mcp.EraModern && !c.Peer.ClientCapabilities.HasExtension(m.Extension) {
		return nil, jsonrpc.NewError(mcp.CodeMissingRequiredClientCapability, "%s belongs to the %s extension, which this request did not declare", req.Method, m.Extension).
			WithData(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{m.Extension: map[string]any{}}}})
	}
	c.m = m
	if m.Input && c.Peer.Era == mcp.EraModern {
		return s.handleWithInput(ctx, c, m)
	}
	return m.handle(ctx, &c.Request)
}

// checkHeaders applies the 2026-07-28 rule that the Mcp-Name header mirrors
// the params member the method names its target by, before any middleware
// runs: what a middleware (a gateway's personas, an audit) reads of the
// body is then also what the header said, for whatever routed on it.
func (s *Server) checkHeaders(c *call, req *jsonrpc.Request) *jsonrpc.Error {
	if c.http == nil || c.Peer.Era != mcp.EraModern {
		return nil
	}
	m := (*s.table.Load())[req.Method]
	if m == nil || m.NameParam == "" || !m.Eras.Has(c.Peer.Era) {
		return nil // an unknown method is answered -32601 first, by route
	}
	return checkNameHeader(c.http.Header, req.Params, m.NameParam)
}

// peerOf decides the era of one request. A request whose _meta names a
// protocol version is modern and self-describing; anything else belongs to the
// legacy session and needs initialize first (ping excepted).
func (ss *Session) peerOf(req *jsonrpc.Request) (PeerInfo, *jsonrpc.Error) {
	m, perr := ss.srv.requestMetaOf(req.Params)
	if perr != nil {
		return PeerInfo{}, perr
	}
	if m.hasVersion {
		v := m.version
		if mcp.EraOf(v) == mcp.EraModern {
			if m.caps == nil {
				return PeerInfo{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing _meta %q: every %s request must declare its client capabilities", mcp.MetaClientCapabilities, v)
			}
			if err := checkLogLevel(m.logLevel); err != nil {
				return PeerInfo{}, err
			}
			p := PeerInfo{Era: mcp.EraModern, ProtocolVersion: v, ClientCapabilities: *m.caps}
			if m.info != nil {
				p.ClientInfo = *m.info
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
	if m.caps != nil {
		return PeerInfo{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing _meta %q", mcp.MetaProtocolVersion)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.initialized && req.Method != mcp.MethodPing && req.Method != mcp.MethodInitialize {
		return PeerInfo{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"session not initialized: send %q first (2025-11-25 and older), or carry _meta %q and %q (2026-07-28)",
			mcp.MethodInitialize, mcp.MetaProtocolVersion, mcp.MetaClientCapabilities)
	}
	return ss.legacyPeerLocked(), nil
}

// requestMeta is the part of a request's _meta that decides its era.
type requestMeta struct {
	hasVersion bool
	version    string
	caps       *mcp.ClientCapabilities
	info       *mcp.Implementation
	logLevel   []byte // raw _meta logLevel, checked for 2026-07-28 requests
}

var (
	metaMember  = []string{"_meta"}
	metaMembers = []string{mcp.MetaProtocolVersion, mcp.MetaClientCapabilities, mcp.MetaClientInfo, mcp.MetaLogLevel}
)

// requestMetaOf reads the era-deciding members of a request's _meta. The
// common shape is scanned without decoding, and the client capabilities and
// info, which a client sends alike on every request, are decoded once and
// remembered; anything unusual goes through the exact decoder.
func (s *Server) requestMetaOf(params json.RawMessage) (requestMeta, *jsonrpc.Error) {
	var m requestMeta
	// A member name spelled with escapes ("_m\u0065ta") is still _meta:
	// params with any backslash are scanned, and the scanner hands escaped
	// names to the exact decoder.
	if len(params) == 0 || !bytes.Contains(params, []byte(`"_meta"`)) && bytes.IndexByte(params, '\\') < 0 {
		return m, nil
	}
	var meta, version, caps, info []byte
	ok := jsonscan.Members(params, metaMember, func(_, v []byte) bool { meta = v; return true })
	if ok && meta != nil && string(meta) != "null" {
		ok = jsonscan.Members(meta, metaMembers, func(name, v []byte) bool {
			switch string(name) {
			case mcp.MetaProtocolVersion:
				version = v
			case mcp.MetaClientCapabilities:
				caps = v
			case mcp.MetaClientInfo:
				info = v
			case mcp.MetaLogLevel:
				m.logLevel = v
			}
			return true
		})
	}
	if !ok {
		return requestMetaSlow(params)
	}
	if version != nil {
		v, plain := jsonscan.PlainString(version)
		if !plain {
			return requestMetaSlow(params)
		}
		m.hasVersion, m.version = true, string(v)
	}
	var err error
	if caps != nil && string(caps) != "null" {
		if m.caps, err = s.metaCache.caps(caps); err != nil {
			return m, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: _meta %q: %v", mcp.MetaClientCapabilities, err)
		}
	}
	if info != nil && string(info) != "null" {
		if m.info, err = s.metaCache.info(info); err != nil {
			return m, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: _meta %q: %v", mcp.MetaClientInfo, err)
		}
	}
	return m, nil
}

// requestMetaSlow is requestMetaOf through the exact decoder, for params
// the scanner declines.
func requestMetaSlow(params json.RawMessage) (requestMeta, *jsonrpc.Error) {
	var head struct {
		Meta *struct {
			ProtocolVersion    *string                 `json:"io.modelcontextprotocol/protocolVersion"`
			ClientCapabilities *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
			ClientInfo         *mcp.Implementation     `json:"io.modelcontextprotocol/clientInfo"`
			LogLevel           json.RawMessage         `json:"io.modelcontextprotocol/logLevel"`
		} `json:"_meta"`
	}
	if err := wirejson.Unmarshal(params, &head); err != nil {
		return requestMeta{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
	}
	var m requestMeta
	if head.Meta == nil {
		return m, nil
	}
	if head.Meta.ProtocolVersion != nil {
		m.hasVersion, m.version = true, *head.Meta.ProtocolVersion
	}
	m.caps, m.info, m.logLevel = head.Meta.ClientCapabilities, head.Meta.ClientInfo, head.Meta.LogLevel
	return m, nil
}

// checkNameHeader applies the 2026-07-28 rule that the Mcp-Name header
// mirrors a params member (the tool name of tools/call, the URI of
// resources/read): missing or different is -32020. A missing or non-string
// member is left to the method to report.
func checkNameHeader(h http.Header, params json.RawMessage, member string) *jsonrpc.Error {
	body, ok := stringMember(params, member)
	if !ok {
		return nil
	}
	vs := h.Values(mcp.HeaderName)
	switch len(vs) {
	case 0:
		return headerMismatch("the Mcp-Name header is required: the body names %q", body)
	case 1:
	default:
		return headerMismatch("header Mcp-Name appears %d times", len(vs))
	}
	got, err := mcp.DecodeHeaderValue(vs[0])
	if err != nil {
		return headerMismatch("Mcp-Name: %v", err)
	}
	if got != body {
		return headerMismatch("Mcp-Name header value %q does not match body value %q", got, body)
	}
	return nil
}

func headerMismatch(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeHeaderMismatch, "Header mismatch: "+format, args...)
}

// stringMember returns a top-level string member of params.
func stringMember(params json.RawMessage, name string) (string, bool) {
	var raw []byte
	if !jsonscan.Members(params, []string{name}, func(_, v []byte) bool { raw = v; return true }) {
		var m map[string]json.RawMessage
		if wirejson.Unmarshal(params, &m) != nil {
			return "", false
		}
		raw = m[name]
	}
	if raw == nil {
		return "", false
	}
	if v, ok := jsonscan.PlainString(raw); ok {
		return string(v), true
	}
	var s string
	if wirejson.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
