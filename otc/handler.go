package otc

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// DefaultMaxRequestBytes bounds a POST /tools/call body.
const DefaultMaxRequestBytes = 1 << 20

// DefaultWriteTimeout bounds the writing of one response (see
// Limits.WriteTimeout).
const DefaultWriteTimeout = 30 * time.Second

// HeaderOXPVersion is the OXP version header; a request that sends it is
// answered in the OXP spelling.
const HeaderOXPVersion = "OXP-Version"

// Handler serves a Backend's tools as Open Tool Calling 1.0:
//
//	GET  /health      200 {"status":"ok"} (503 when the health check fails); no auth
//	GET  /tools       200 {"$schema","tools":[ToolDefinition...]}
//	POST /tools/call  200 {"$schema","result":CallToolResponse}, also when the tool fails;
//	                  400 ServerErrorResponse, 422 ValidationErrorResponse, 401
//
// POST /call, which some OTC examples show, is accepted as an alias.
//
// Before anything else, every request's Host and Origin are checked as on
// the MCP endpoint (loopback only unless WithAllowedHosts and
// WithAllowedOrigins say otherwise; 403), so that neither a page on another
// site nor a DNS-rebound name can reach a local listener through the user's
// browser; a POST must carry Content-Type application/json (415), which a
// browser cannot send cross-origin without a CORS preflight, and this
// handler answers no preflight.
type Handler struct {
	backend  Backend
	naming   Naming
	auth     authConfig
	now      func() time.Time
	dialect  Dialect
	maxBody  int64
	writeTO  time.Duration
	hosts    []string
	origins  []string
	policy   *httpguard.Policy
	logger   *slog.Logger
	newID    func() string
	health   func(context.Context) error
	mu       sync.Mutex
	lastCat  *catalog
	infoName string
}

// Option configures a Handler (NewHandler). Options apply in order (a
// later one wins), nil options are ignored and defaults fill in the rest,
// as everywhere in the project; an option given a value it cannot use
// makes NewHandler fail.
type Option interface{ applyHandler(*Handler) error }

type handlerOption func(*Handler) error

func (f handlerOption) applyHandler(h *Handler) error { return f(h) }

// WithNaming sets how MCP tool names map to OTC ids (see Naming).
func WithNaming(n Naming) Option {
	return handlerOption(func(h *Handler) error {
		if err := n.check(); err != nil {
			return err
		}
		h.naming = n
		return nil
	})
}

// WithAPIKeys turns auth on and accepts each key in the OTC-API-Key (or
// OXP-API-Key) header. Keys must not be empty.
func WithAPIKeys(keys ...string) Option {
	return handlerOption(func(h *Handler) error {
		for i, k := range keys {
			if k == "" {
				return fmt.Errorf("otc: API key %d is empty", i)
			}
			h.auth.keys = append(h.auth.keys, sha256.Sum256([]byte(k)))
		}
		return nil
	})
}

// WithJWT turns auth on and accepts HS256 bearer tokens signed with secret
// (at least 32 bytes): exp required and at most 15 minutes ahead; aud, when
// the token has one, must include audience.
func WithJWT(secret []byte, audience string) Option {
	return handlerOption(func(h *Handler) error {
		if len(secret) < 32 {
			return fmt.Errorf("otc: JWT secret is %d bytes; HS256 needs at least 32", len(secret))
		}
		h.auth.secret = append([]byte(nil), secret...)
		h.auth.audience = audience
		return nil
	})
}

// WithClock sets the clock used for token expiry and call durations.
func WithClock(now func() time.Time) Option {
	return handlerOption(func(h *Handler) error {
		if now == nil {
			return errors.New("otc: clock is nil")
		}
		h.now = now
		return nil
	})
}

// WithDialect sets the spelling of responses to requests that do not ask
// for one (default OTC).
func WithDialect(d Dialect) Option {
	return handlerOption(func(h *Handler) error { h.dialect = d; return nil })
}

// WithLogger sets where the handler logs backend failures (default: nowhere).
func WithLogger(l *slog.Logger) Option {
	return handlerOption(func(h *Handler) error {
		if l != nil {
			h.logger = l
		}
		return nil
	})
}

// WithCallIDs sets the generator of call ids for requests without one
// (default: random UUIDs).
func WithCallIDs(f func() string) Option {
	return handlerOption(func(h *Handler) error {
		if f == nil {
			return errors.New("otc: call id generator is nil")
		}
		h.newID = f
		return nil
	})
}

// WithHealthCheck sets what GET /health asks; an error answers 503.
func WithHealthCheck(f func(context.Context) error) Option {
	return handlerOption(func(h *Handler) error { h.health = f; return nil })
}

// WithAllowedHosts sets the Host header values the handler answers to, as
// "name" (any port) or "name:port"; "*" accepts any Host. Default: the
// loopback names localhost, 127.0.0.1 and ::1, which is what keeps a DNS
// rebinding page (whose requests carry its own name as Host) out. A
// listener reached by other names must list them. Other Hosts get 403.
func WithAllowedHosts(hosts ...string) Option {
	return handlerOption(func(h *Handler) error { return appendNonBlank(&h.hosts, "allowed host", hosts) })
}

// WithAllowedOrigins sets the Origin header values accepted from browsers,
// as "scheme://host[:port]"; "*" accepts any. Default: loopback origins
// (http or https on localhost, 127.0.0.1, ::1). A request with another
// Origin gets 403 before it is read; one with no Origin (not from a
// browser) is checked by Host alone.
func WithAllowedOrigins(origins ...string) Option {
	return handlerOption(func(h *Handler) error { return appendNonBlank(&h.origins, "allowed origin", origins) })
}

// appendNonBlank appends vs to *dst, the allow list of what (hosts or
// origins), unless one of them is blank: an empty entry would match
// nothing, so it is refused as a mistake in the configuration.
func appendNonBlank(dst *[]string, what string, vs []string) error {
	for i, v := range vs {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("otc: %s %d is empty", what, i)
		}
	}
	*dst = append(*dst, vs...)
	return nil
}

// NewHandler returns a handler serving b's tools. It fails on a bad option;
// tool mapping problems show when the tools are read (see Check).
func NewHandler(b Backend, opts ...Option) (*Handler, error) {
	if b == nil {
		return nil, errors.New("otc: backend is nil")
	}
	h := &Handler{backend: b, now: time.Now, maxBody: DefaultMaxRequestBytes, writeTO: DefaultWriteTimeout,
		logger: slog.New(slog.DiscardHandler), newID: NewUUID}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.applyHandler(h); err != nil {
			return nil, err
		}
	}
	h.policy = httpguard.NewPolicy(h.hosts, h.origins)
	if i, ok := b.(interface{ Info() mcp.Implementation }); ok {
		h.infoName = i.Info().Name
	}
	return h, nil
}

// Check reads the backend's tools and maps them, returning a *MappingError
// when they cannot all be offered (for example two with the same id).
func (h *Handler) Check(ctx context.Context) error {
	_, err := h.catalog(ctx)
	return err
}

// Tools returns the tool definitions GET /tools would list.
func (h *Handler) Tools(ctx context.Context) ([]ToolDefinition, error) {
	c, err := h.catalog(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ToolDefinition, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.def
	}
	return out, nil
}

func (h *Handler) catalog(ctx context.Context) (*catalog, error) {
	tools, err := h.backend.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("otc: listing the MCP tools: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := buildCatalog(tools, h.naming.withDefaults(h.infoName), h.lastCat)
	if err != nil {
		return nil, err
	}
	h.lastCat = c
	return c, nil
}

// ServeHTTP routes the three OTC endpoints, after the Host and Origin
// checks every endpoint gets.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := h.dialect
	if r.Header.Get(HeaderOXPVersion) != "" {
		d = OXP
	}
	dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: h.writeTO}
	defer dw.finish()
	w = dw
	if msg := h.policy.Refusal(r); msg != "" {
		writeServerError(w, http.StatusForbidden, d, msg, "")
		return
	}
	switch r.URL.Path {
	case "/health":
		if !allow(w, r, d, http.MethodGet, http.MethodHead) {
			return
		}
		h.serveHealth(w, r, d)
	case "/tools":
		if !allow(w, r, d, http.MethodGet) || !h.authorize(w, r, d) {
			return
		}
		h.serveTools(w, r, d)
	case "/tools/call", "/call":
		if !allow(w, r, d, http.MethodPost) || !h.authorize(w, r, d) {
			return
		}
		h.serveCall(w, r, d)
	default:
		writeServerError(w, http.StatusNotFound, d, fmt.Sprintf("no such endpoint: %s (OTC serves GET /health, GET /tools, POST /tools/call)", r.URL.Path), "")
	}
}

func allow(w http.ResponseWriter, r *http.Request, d Dialect, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeServerError(w, http.StatusMethodNotAllowed, d, fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(methods, ", ")), "")
	return false
}

func (h *Handler) authorize(w http.ResponseWriter, r *http.Request, d Dialect) bool {
	err := h.auth.check(r, h.now())
	if err == nil {
		return true
	}
	if len(h.auth.secret) > 0 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="otc"`)
	}
	writeServerError(w, http.StatusUnauthorized, d, "unauthorized: "+err.Error(), "")
	return false
}

func (h *Handler) serveHealth(w http.ResponseWriter, r *http.Request, d Dialect) {
	if h.health != nil {
		if err := h.health(r.Context()); err != nil {
			writeServerError(w, http.StatusServiceUnavailable, d, "not ready", err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, d, map[string]string{"status": "ok"})
}

func (h *Handler) serveTools(w http.ResponseWriter, r *http.Request, d Dialect) {
	c, err := h.catalog(r.Context())
	if err != nil {
		h.catalogError(w, d, err)
		return
	}
	defs := make([]definitionWire, len(c.entries))
	for i, e := range c.entries {
		defs[i] = e.def.encode(d)
	}
	key := "tools"
	if d == OXP {
		key = "items"
	}
	writeJSON(w, http.StatusOK, d, map[string]any{"$schema": d.SchemaURI(), key: defs})
}

// catalogError answers a failed tool listing: 500 when the tools cannot
// be mapped (a server configuration problem), 502 when the MCP server did
// not answer.
func (h *Handler) catalogError(w http.ResponseWriter, d Dialect, err error) {
	h.logger.Error("otc: cannot list tools", "error", err)
	var me *MappingError
	if errors.As(err, &me) {
		writeServerError(w, http.StatusInternalServerError, d, "the tools cannot be offered over OTC", err.Error())
		return
	}
	writeServerError(w, http.StatusBadGateway, d, "the MCP server behind this endpoint could not be reached", err.Error())
}

// callEnvelope is the POST /tools/call body: {"$schema", "request"}, or a
// bare CallToolRequest (the flattened OXP draft); a body with both
// "request" and a top-level "tool_id" is refused as ambiguous.
type callEnvelope struct {
	Schema  *string          `json:"$schema"`
	Request *CallToolRequest `json:"request"`
	ToolID  *string          `json:"tool_id"`
}

func (h *Handler) serveCall(w http.ResponseWriter, r *http.Request, d Dialect) {
	if ct := r.Header.Get("Content-Type"); !httpguard.MediaTypeIs(ct, "application/json") {
		msg := "Content-Type must be application/json"
		if ct != "" {
			msg = fmt.Sprintf("Content-Type %q is not application/json", ct)
		}
		writeServerError(w, http.StatusUnsupportedMediaType, d, msg, "")
		return
	}
	mw := w // the server's own writer, so that a body too large closes the connection
	if dw, ok := w.(*deadlineWriter); ok {
		mw = dw.ResponseWriter
	}
	body, err := io.ReadAll(http.MaxBytesReader(mw, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeServerError(w, http.StatusRequestEntityTooLarge, d, fmt.Sprintf("request body exceeds the limit of %d bytes", h.maxBody), "")
			return
		}
		writeServerError(w, http.StatusBadRequest, d, "cannot read the request body", err.Error())
		return
	}
	req, rd, err := parseCall(body)
	if rd != nil {
		d = *rd
	}
	if err != nil {
		writeServerError(w, http.StatusBadRequest, d, err.Error(), "")
		return
	}
	c, err := h.catalog(r.Context())
	if err != nil {
		h.catalogError(w, d, err)
		return
	}
	e, err := c.resolve(req.ToolID)
	if err != nil {
		writeServerError(w, http.StatusBadRequest, d, err.Error(), "")
		return
	}
	args, verr := validateInput(e, req.Input)
	if verr != nil {
		verr.Schema = d.SchemaURI()
		writeJSON(w, http.StatusUnprocessableEntity, d, verr)
		return
	}
	callID := req.CallID
	if callID == "" {
		callID = h.newID()
	}
	start := h.now()
	res, err := h.backend.CallTool(traceContext(r.Context(), req.TraceID), e.mcpName, args)
	elapsed := h.now().Sub(start)
	var resp CallToolResponse
	if err != nil {
		je, isRPC := jsonrpc.AsError(err)
		switch {
		case isRPC && je.Code == jsonrpc.CodeInvalidParams:
			writeServerError(w, http.StatusBadRequest, d, je.Message, "")
			return
		case isRPC:
			h.logger.Error("otc: MCP server answered tools/call with an error", "tool", e.mcpName, "error", err)
			resp = CallToolResponse{CallID: callID, Error: &ToolError{Message: "the tool failed with an internal error", DeveloperMessage: je.Message}}
		case r.Context().Err() != nil:
			writeServerError(w, http.StatusServiceUnavailable, d, "the call was cancelled", err.Error())
			return
		default:
			h.logger.Error("otc: MCP server unreachable", "tool", e.mcpName, "error", err)
			writeServerError(w, http.StatusBadGateway, d, "the MCP server behind this endpoint could not be reached", err.Error())
			return
		}
	} else {
		resp = ResponseFromResult(callID, res)
	}
	ms := math.Round(float64(elapsed)/float64(time.Microsecond)) / 1000
	resp.Duration = &ms
	writeJSON(w, http.StatusOK, d, map[string]any{"$schema": d.SchemaURI(), "result": resp})
}

// parseCall reads the POST body. It returns the dialect the body asked for,
// if it named one.
func parseCall(body []byte) (*CallToolRequest, *Dialect, error) {
	var env callEnvelope
	if err := wirejson.Unmarshal(body, &env); err != nil {
		if strings.Contains(err.Error(), "after top-level value") {
			return nil, nil, errors.New("request body has data after the JSON object")
		}
		return nil, nil, fmt.Errorf("request body is not a JSON object (read exactly: member names are case-sensitive and appear once): %v", err)
	}
	var asked *Dialect
	if env.Schema != nil {
		d, err := ParseSchemaURI(*env.Schema)
		if err != nil {
			return nil, nil, err
		}
		asked = &d
	}
	req := env.Request
	if req != nil && env.ToolID != nil {
		// A reader of the bare form would call the top-level tool_id, this
		// one the request's: which is meant cannot be told.
		return nil, asked, errors.New(`request body has both "request" and a top-level "tool_id": send one CallToolRequest, wrapped in "request" or bare`)
	}
	if req == nil {
		if env.ToolID == nil {
			return nil, asked, errors.New(`request body must be {"request": CallToolRequest} (or a CallToolRequest with "tool_id")`)
		}
		req = &CallToolRequest{}
		if err := wirejson.Unmarshal(body, req); err != nil {
			return nil, asked, fmt.Errorf("invalid CallToolRequest: %v", err)
		}
	}
	if req.ToolID == "" {
		return nil, asked, errors.New(`CallToolRequest: "tool_id" is required`)
	}
	in := bytes.TrimSpace(req.Input)
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		req.Input = json.RawMessage("{}")
	} else if in[0] != '{' {
		return nil, asked, errors.New(`CallToolRequest: "input" must be an object`)
	}
	return req, asked, nil
}

// validateInput checks input against the tool's schema, defaults applied,
// and returns the arguments to send.
func validateInput(e *entry, input json.RawMessage) (json.RawMessage, *ValidationErrorResponse) {
	v, err := schema.DecodeValue(input)
	if err != nil {
		return nil, &ValidationErrorResponse{Message: "input is not valid JSON: " + err.Error()}
	}
	if e.input.ApplyDefaults(v) {
		if input, err = json.Marshal(v); err != nil {
			return nil, &ValidationErrorResponse{Message: "cannot apply input defaults: " + err.Error()}
		}
	}
	err = e.input.Validate(v)
	if err == nil {
		return input, nil
	}
	var ve *schema.ValidationError
	if !errors.As(err, &ve) {
		return nil, &ValidationErrorResponse{Message: "input does not match the input schema of " + e.def.ID + ": " + err.Error()}
	}
	params := map[string]string{}
	var root []string
	for _, v := range ve.Violations {
		name, rest := splitPointer(v.Path)
		if name == "" {
			root = append(root, v.Message)
			continue
		}
		msg := v.Message
		if rest != "" {
			msg = rest + ": " + msg
		}
		if prev, ok := params[name]; ok {
			msg = prev + "; " + msg
		}
		params[name] = msg
	}
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := append([]string(nil), root...)
	if len(names) > 0 {
		parts = append(parts, "invalid parameters: "+strings.Join(names, ", "))
	}
	out := &ValidationErrorResponse{Message: "input does not match the input schema of " + e.def.ID + ": " + strings.Join(parts, "; ")}
	if len(params) > 0 {
		out.ParameterErrors = params
	}
	return nil, out
}

// splitPointer splits "/a/b/c" into the parameter "a" (unescaped) and the
// rest "/b/c".
func splitPointer(p string) (string, string) {
	if p == "" || p[0] != '/' {
		return "", ""
	}
	first, rest, _ := strings.Cut(p[1:], "/")
	if rest != "" {
		rest = "/" + rest
	}
	return strings.ReplaceAll(strings.ReplaceAll(first, "~1", "/"), "~0", "~"), rest
}

// deadlineWriter starts the write timeout when the response head is
// written: every OTC response is one JSON body written at once, so one
// deadline per response bounds how long a client that stops reading can
// hold the handler.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	armed   bool
}

func (w *deadlineWriter) WriteHeader(status int) {
	// ErrNotSupported (a writer without deadlines, as in httptest.Recorder)
	// leaves the response unbounded, which is all such a writer can offer.
	w.armed = w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) == nil
	w.ResponseWriter.WriteHeader(status)
}

// finish sends what is buffered while the deadline holds, then lifts it so
// that the next request on a kept-alive connection (an "100 Continue", the
// next response) does not inherit an expired one.
func (w *deadlineWriter) finish() {
	if !w.armed {
		return
	}
	_ = w.rc.Flush()
	_ = w.rc.SetWriteDeadline(time.Time{})
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func writeJSON(w http.ResponseWriter, status int, d Dialect, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		raw, _ = json.Marshal(ServerErrorResponse{Message: "the response could not be encoded", DeveloperMessage: err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	if d == OXP {
		w.Header().Set(HeaderOXPVersion, "1.0")
	}
	w.WriteHeader(status)
	w.Write(append(raw, '\n'))
}

func writeServerError(w http.ResponseWriter, status int, d Dialect, msg, dev string) {
	writeJSON(w, status, d, ServerErrorResponse{Schema: d.SchemaURI(), Message: msg, DeveloperMessage: dev})
}

// NewUUID returns a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
