package auth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// DefaultMaxPeekBytes bounds how much of a request body Require reads to
// learn its JSON-RPC method and params.name (WithScopesFor) when the
// request does not name them in headers.
const DefaultMaxPeekBytes = 4 << 20

type requireConfig struct {
	metadataURL string
	scopes      []string
	scopesFor   func(method, name string) []string
	maxPeek     int64
	logger      *slog.Logger
}

// RequireOption configures Require.
type RequireOption interface{ applyRequire(*requireConfig) }

type requireOption func(*requireConfig)

func (f requireOption) applyRequire(c *requireConfig) { f(c) }

// WithResourceMetadata sets the URL of this resource's RFC 9728 Protected
// Resource Metadata, sent as resource_metadata in every WWW-Authenticate
// challenge so that clients find the authorization server (see
// MetadataURL). Without it challenges name no metadata.
func WithResourceMetadata(u string) RequireOption {
	return requireOption(func(c *requireConfig) { c.metadataURL = u })
}

// WithScopes sets scopes every request's token must carry; a token without
// one of them gets 403 with error="insufficient_scope". They are also
// advertised as scope= in 401 challenges.
func WithScopes(scopes ...string) RequireOption {
	return requireOption(func(c *requireConfig) { c.scopes = append([]string(nil), scopes...) })
}

// WithScopesFor sets a function naming the scopes a request needs beyond
// WithScopes, given its JSON-RPC method and the name it is about
// (params.name of tools/call and prompts/get, params.uri of resources/read;
// "" when there is none, and both "" for GET and DELETE). The
// middleware knows nothing of tools; the function does.
//
// A 2026-07-28 request (an MCP-Protocol-Version header of that era) is
// judged by its Mcp-Method and Mcp-Name headers, which the Streamable HTTP
// handler checks against the body. Any other POST is judged by its body:
// up to Limits.MaxPeekBytes of it is read and then handed on unchanged. A body
// that is not a single JSON object with a string "method" (or is larger
// than the limit) is refused (400, 413), since what it asks cannot be told.
func WithScopesFor(f func(method, name string) []string) RequireOption {
	return requireOption(func(c *requireConfig) { c.scopesFor = f })
}

// WithRequireLogger sets where refusals are logged (default: nowhere).
// Tokens are never logged.
func WithRequireLogger(l *slog.Logger) RequireOption {
	return requireOption(func(c *requireConfig) { c.logger = l })
}

// Require returns an HTTP middleware making the wrapped handler an OAuth 2.1
// protected resource (RFC 6750, MCP authorization):
//
//   - The token comes from the Authorization header only ("Bearer", any
//     case). A request carrying access_token in its query string or a form
//     body is refused with 400 error="invalid_request", and that token is
//     not used.
//   - No token: 401 with WWW-Authenticate: Bearer resource_metadata="...",
//     scope="..." (the WithScopes scopes, when there are any).
//   - A token v refuses: 401 with error="invalid_token" and a short
//     error_description; a verifier that cannot decide (ErrUnavailable): 503.
//   - A token lacking a needed scope (WithScopes, WithScopesFor): 403 with
//     error="insufficient_scope" and scope= naming every scope the request
//     needs.
//   - Otherwise the next handler runs with the principal on the request's
//     context (WithPrincipal).
//
// Refusals carry a JSON-RPC error body with a null id. The token never
// appears in a response or a log.
func Require(v TokenVerifier, opts ...RequireOption) func(http.Handler) http.Handler {
	c := requireConfig{}
	for _, o := range opts {
		if o != nil {
			o.applyRequire(&c)
		}
	}
	if c.maxPeek < 1 {
		c.maxPeek = DefaultMaxPeekBytes
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return func(next http.Handler) http.Handler {
		return &guard{v: v, c: c, next: next}
	}
}

type guard struct {
	v    TokenVerifier
	c    requireConfig
	next http.Handler
}

// challenge is one WWW-Authenticate: Bearer value's parameters.
type challenge struct {
	scope        []string
	err, errDesc string
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if queryHasToken(r.URL.RawQuery) {
		g.refuse(w, http.StatusBadRequest, challenge{err: "invalid_request", errDesc: "access tokens are accepted in the Authorization header only"},
			jsonrpc.CodeInvalidRequest, "bad request: access tokens are accepted in the Authorization header only, never in the URL")
		return
	}
	if formHasToken(r, g.c.maxPeek) {
		g.refuse(w, http.StatusBadRequest, challenge{err: "invalid_request", errDesc: "access tokens are accepted in the Authorization header only"},
			jsonrpc.CodeInvalidRequest, "bad request: access tokens are accepted in the Authorization header only, never in the body")
		return
	}
	token, problem := bearerToken(r.Header)
	switch {
	case problem == "" && token == "":
		g.refuse(w, http.StatusUnauthorized, challenge{scope: g.c.scopes},
			jsonrpc.CodeInvalidRequest, "unauthorized: this resource requires a bearer token")
		return
	case problem != "":
		g.refuse(w, http.StatusUnauthorized, challenge{scope: g.c.scopes, err: "invalid_token", errDesc: problem},
			jsonrpc.CodeInvalidRequest, "unauthorized: "+problem)
		return
	}
	p, err := g.v.Verify(r.Context(), token)
	if err == nil && (p == nil || p.Subject == "") {
		err = unavailable("the verifier returned no subject", nil)
	}
	if err != nil {
		var te *TokenError
		if errors.Is(err, ErrInvalidToken) {
			desc := "the token is invalid"
			if errors.As(err, &te) && te.Description != "" {
				desc = te.Description
			}
			g.c.logger.Info("request refused: invalid token", "reason", desc, "remote", r.RemoteAddr)
			g.refuse(w, http.StatusUnauthorized, challenge{scope: g.c.scopes, err: "invalid_token", errDesc: desc},
				jsonrpc.CodeInvalidRequest, "unauthorized: "+desc)
			return
		}
		g.c.logger.Warn("request refused: the token could not be verified", "error", err)
		w.Header().Set("Retry-After", "5")
		g.writeError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "the access token could not be verified for now; try again later")
		return
	}
	needed := g.c.scopes
	if g.c.scopesFor != nil {
		method, name, status, msg := g.requestTarget(r)
		if status != 0 {
			g.writeError(w, status, jsonrpc.CodeInvalidRequest, msg)
			return
		}
		for _, s := range g.c.scopesFor(method, name) {
			if !slices.Contains(needed, s) {
				needed = append(slices.Clip(needed), s)
			}
		}
	}
	for _, s := range needed {
		if !p.HasScope(s) {
			g.c.logger.Info("request refused: insufficient scope", "subject", p.Subject, "needed", strings.Join(needed, " "))
			g.refuse(w, http.StatusForbidden, challenge{scope: needed, err: "insufficient_scope", errDesc: "the token lacks a scope this request needs"},
				jsonrpc.CodeInvalidRequest, "forbidden: this request needs the scopes "+strings.Join(needed, " "))
			return
		}
	}
	g.next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
}

// bearerToken returns the token of the Authorization header: "" and no
// problem when there is no bearer credential (no header, another scheme),
// or a problem for a malformed one.
func bearerToken(h http.Header) (token, problem string) {
	vals := h.Values("Authorization")
	if len(vals) == 0 {
		return "", ""
	}
	if len(vals) > 1 {
		return "", "more than one Authorization header"
	}
	scheme, rest, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", ""
	}
	token = strings.TrimLeft(rest, " ")
	if !isB64Token(token) {
		return "", "malformed bearer token"
	}
	return token, ""
}

// isB64Token matches RFC 6750's b64token: 1*( ALPHA / DIGIT / "-" / "." /
// "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for i < len(s) {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0 {
			i++
			continue
		}
		break
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// queryHasToken reports whether a query string has an access_token
// parameter (RFC 6750 section 2.3, which MCP forbids), however malformed
// the rest of it or its value.
func queryHasToken(rawQuery string) bool {
	for seg := range strings.SplitSeq(rawQuery, "&") {
		k, _, _ := strings.Cut(seg, "=")
		if k == "access_token" {
			return true
		}
		if u, err := url.QueryUnescape(k); err == nil && u == "access_token" {
			return true
		}
	}
	return false
}

// formHasToken reports whether r is a form-encoded POST whose body carries
// access_token (RFC 6750 section 2.2, which MCP does not allow). The body
// read is handed on unchanged.
func formHasToken(r *http.Request, limit int64) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/x-www-form-urlencoded" {
		return false
	}
	body, _, err := peekBody(r, limit)
	if err != nil {
		return false
	}
	return queryHasToken(string(body))
}

// peekBody reads up to limit bytes of r.Body and puts back a body that
// yields exactly the bytes the original would have: those read, then the
// rest. over reports a body longer than limit.
func peekBody(r *http.Request, limit int64) (body []byte, over bool, err error) {
	orig := r.Body
	body, err = io.ReadAll(io.LimitReader(orig, limit+1))
	r.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(body), orig), closer: orig}
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > limit {
		return nil, true, nil
	}
	return body, false, nil
}

type replayBody struct {
	io.Reader
	closer io.Closer
}

func (b *replayBody) Close() error { return b.closer.Close() }

// requestTarget finds the JSON-RPC method and params.name of r for
// WithScopesFor; a non-zero status is a refusal.
func (g *guard) requestTarget(r *http.Request) (method, name string, status int, msg string) {
	if r.Method != http.MethodPost {
		return "", "", 0, ""
	}
	if mcp.EraOf(strings.TrimSpace(r.Header.Get(mcp.HeaderProtocolVersion))) == mcp.EraModern {
		methods := r.Header.Values(mcp.HeaderMethod)
		names := r.Header.Values(mcp.HeaderName)
		if len(methods) == 1 && len(names) <= 1 {
			method = strings.TrimSpace(methods[0])
			if len(names) == 1 {
				n, err := mcp.DecodeHeaderValue(names[0])
				if err != nil {
					return "", "", http.StatusBadRequest, "bad request: invalid Mcp-Name header: " + err.Error()
				}
				return method, n, 0, ""
			}
			if !namedMethod(method) {
				return method, "", 0, ""
			}
		}
		// Without the headers the handler refuses the request; the body
		// decides here so that nothing depends on that.
	}
	body, over, err := peekBody(r, g.c.maxPeek)
	switch {
	case err != nil:
		return "", "", http.StatusBadRequest, "bad request: the body could not be read"
	case over:
		return "", "", http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", g.c.maxPeek)
	}
	method, name, perr := peekTarget(body)
	if perr != nil {
		return "", "", http.StatusBadRequest, "bad request: " + perr.Error()
	}
	return method, name, 0, ""
}

// namedMethod reports whether a 2026-07-28 request of method carries
// Mcp-Name.
func namedMethod(method string) bool {
	switch method {
	case "tools/call", "resources/read", "prompts/get":
		return true
	}
	return false
}

func (g *guard) refuse(w http.ResponseWriter, status int, ch challenge, code int64, msg string) {
	w.Header().Set("WWW-Authenticate", g.challenge(ch))
	g.writeError(w, status, code, msg)
}

// challenge formats a WWW-Authenticate: Bearer value (RFC 6750 section 3,
// RFC 9728 section 5.1).
func (g *guard) challenge(ch challenge) string {
	var parts []string
	if g.c.metadataURL != "" {
		parts = append(parts, `resource_metadata="`+quotable(g.c.metadataURL)+`"`)
	}
	if len(ch.scope) > 0 {
		parts = append(parts, `scope="`+quotable(strings.Join(ch.scope, " "))+`"`)
	}
	if ch.err != "" {
		parts = append(parts, `error="`+ch.err+`"`)
	}
	if ch.errDesc != "" {
		parts = append(parts, `error_description="`+quotable(ch.errDesc)+`"`)
	}
	if len(parts) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(parts, ", ")
}

// quotable keeps the characters RFC 6750 allows in a quoted value
// (%x20-21 / %x23-5B / %x5D-7E), replacing others with a space.
func quotable(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b[i] = ' '
		}
	}
	return string(b)
}

func (g *guard) writeError(w http.ResponseWriter, status int, code int64, msg string) {
	body, err := jsonrpc.Encode(&jsonrpc.Response{ID: jsonrpc.ID{}, Error: &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		body = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
