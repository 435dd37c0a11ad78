package gateway

import (
	clist "container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/oauth"
	"github.com/toolwire/toolwire/server"
)

// TokenExchange makes an HTTP upstream act as each caller (RFC 8693 token
// exchange): for every request forwarded to it, the caller's validated
// OAuth access token is sent, as the subject_token, to the authorization
// server's token endpoint, which answers with a token of its own for the
// upstream (audience and resource the upstream, the caller still its
// subject). That token, never the caller's, goes upstream as
// "Authorization: Bearer". Tokens are cached per caller (subject and a hash
// of its token) until shortly before they expire.
//
// The upstream must take each request on its own authority: a 2026-07-28
// upstream does (no session), and so does a 2025-11-25 one that does not
// bind a session to whoever opened it.
type TokenExchange struct {
	// TokenEndpoint is the authorization server's token endpoint; when
	// empty, Issuer's RFC 8414 metadata names it (read on first use).
	TokenEndpoint string
	Issuer        string
	// ClientID and ClientSecret authenticate the gateway at the token
	// endpoint with AuthMethod: "client_secret_basic" (the default with a
	// secret), "client_secret_post" or "none".
	ClientID, ClientSecret string
	AuthMethod             string
	// Audience and Resource name the upstream in the request (RFC 8693
	// section 2.1); both empty sends the upstream's URL as the resource.
	Audience, Resource string
	// Scopes are requested for the exchanged token (nil: none named).
	Scopes []string
	// OnAPIKey says what a caller without an OAuth token (an API key, an
	// anonymous or in-process caller) gets: APIKeyRefuse, an isError
	// result, or APIKeyStatic, the upstream's own credentials (Header,
	// Auth).
	OnAPIKey APIKeyMode
}

// APIKeyMode is TokenExchange.OnAPIKey.
type APIKeyMode string

// The ways of serving a caller that has no token to exchange.
const (
	APIKeyRefuse APIKeyMode = "refuse"
	APIKeyStatic APIKeyMode = "static"
)

// DefaultMaxExchangedTokens is how many exchanged tokens the gateway keeps
// per upstream unless Limits.MaxExchangedTokens says otherwise.
const DefaultMaxExchangedTokens = 4096

// exchangeSkew is how long before its expiry an exchanged token is no
// longer used; exchangeUnknownTTL is how long one whose expires_in was not
// given is kept.
const (
	tokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"

	exchangeSkew       = 30 * time.Second
	exchangeTimeout    = 30 * time.Second // one exchange, its metadata read included
	exchangeUnknownTTL = time.Minute
)

// ExchangeError is why a request could not be forwarded as its caller: the
// exchange failed, or the caller has no token to exchange. Its text names
// the upstream and never holds a token or a secret.
type ExchangeError struct {
	Upstream string
	Reason   string
}

// Error says which upstream refused to be called as whom it could not
// serve, and why.
func (e *ExchangeError) Error() string {
	return fmt.Sprintf("upstream %q needs the caller's identity: %s", e.Upstream, e.Reason)
}

// exchanger is one upstream's token exchange and its cache.
type exchanger struct {
	spec     TokenExchange
	upstream string
	url      string
	max      int

	mu       sync.Mutex
	endpoint string
	cache    map[[sha256.Size]byte]*clist.Element
	order    *clist.List // of *exchanged, most recently used first
	flights  map[[sha256.Size]byte]*flight
}

type exchanged struct {
	key    [sha256.Size]byte
	token  string
	expiry time.Time
}

// exchangers holds each upstream's exchanger, made on first use: the
// cache lives as long as the upstream's spec is unchanged.
var exchangers sync.Map // *upstream → *exchanger

func (g *Gateway) exchangerOf(u *upstream) *exchanger {
	if x, ok := exchangers.Load(u); ok {
		return x.(*exchanger)
	}
	max := g.opts.limits.MaxExchangedTokens
	if max <= 0 {
		max = DefaultMaxExchangedTokens
	}
	x := &exchanger{spec: *u.spec.TokenExchange, upstream: u.spec.Name, url: u.spec.URL, max: max,
		endpoint: u.spec.TokenExchange.TokenEndpoint}
	x.init()
	v, _ := exchangers.LoadOrStore(u, x)
	return v.(*exchanger)
}

// forgetExchanged drops u's exchanged tokens, and what was kept of its
// pinned tools (the upstream is stopped: removed, or replaced by Reload).
func (u *upstream) forgetExchanged() {
	exchangers.Delete(u)
	u.forgetPins()
}

// init makes the empty cache.
func (x *exchanger) init() {
	x.cache = map[[sha256.Size]byte]*clist.Element{}
	x.order = clist.New()
	x.flights = map[[sha256.Size]byte]*flight{}
}

// bearerKey carries the exchanged token of a forwarded request to the
// upstream's HTTPAuth (exchangeAuth).
type bearerKey struct{}

// asCaller prepares ctx for a request forwarded to u: for an upstream with
// a TokenExchange, the caller's token exchanged (or the refusal); ctx as
// it is otherwise.
func (g *Gateway) asCaller(ctx context.Context, u *upstream) (context.Context, error) {
	if u.spec.TokenExchange == nil {
		return ctx, nil
	}
	x := g.exchangerOf(u)
	sreq := server.RequestFrom(ctx)
	p := auth.PrincipalFrom(ctx)
	var hr *http.Request
	if sreq != nil {
		p, hr = sreq.Principal(), sreq.HTTPRequest()
	}
	oauthCaller := p != nil && policy.FromPrincipal(p).Kind == policy.KindOAuth
	if !oauthCaller {
		if x.spec.OnAPIKey == APIKeyStatic {
			return ctx, nil
		}
		return ctx, &ExchangeError{Upstream: u.spec.Name, Reason: "the caller has no OAuth access token to exchange (an API key or no credentials), and this upstream takes none"}
	}
	// An OAuth caller is only ever served as itself: never with the
	// upstream's own credentials, even under APIKeyStatic.
	tok := ""
	if hr != nil {
		// The token the gateway verified: its authentication reads the
		// Authorization header only (the scheme's case is free, RFC 6750).
		if h := hr.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
			tok = strings.TrimSpace(h[7:])
		}
	}
	if tok == "" {
		return ctx, &ExchangeError{Upstream: u.spec.Name, Reason: "the caller's access token is not at hand to exchange (a call made after its request ended, such as a task's)"}
	}
	t, err := x.token(ctx, p.Key(), tok)
	if err != nil {
		g.opts.logger.Warn("token exchange failed", "upstream", u.spec.Name, "identity", policy.FromPrincipal(p).String(), "error", err)
		return ctx, &ExchangeError{Upstream: u.spec.Name, Reason: "the token exchange failed: " + err.Error()}
	}
	return context.WithValue(ctx, bearerKey{}, t), nil
}

// token returns the cached exchanged token of the caller whose principal
// key and access token are given, or exchanges it.
func (x *exchanger) token(ctx context.Context, who, subject string) (string, error) {
	h := sha256.New()
	io.WriteString(h, who)
	h.Write([]byte{0})
	io.WriteString(h, subject)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	x.mu.Lock()
	if el, ok := x.cache[key]; ok {
		e := el.Value.(*exchanged)
		if time.Now().Before(e.expiry) {
			x.order.MoveToFront(el)
			x.mu.Unlock()
			return e.token, nil
		}
		x.order.Remove(el)
		delete(x.cache, key)
	}
	// One exchange at a time per caller token: the calls that arrive
	// meanwhile wait for its answer.
	if f := x.flights[key]; f != nil {
		x.mu.Unlock()
		select {
		case <-f.done:
			return f.token, f.err
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	}
	f := &flight{done: make(chan struct{})}
	x.flights[key] = f
	x.mu.Unlock()

	// The exchange outlives a caller that gives up: the others waiting
	// for it still get its answer.
	f.token, f.err = x.exchange(context.WithoutCancel(ctx), key, subject)
	x.mu.Lock()
	delete(x.flights, key)
	x.mu.Unlock()
	close(f.done)
	return f.token, f.err
}

// flight is an exchange in progress, which the caller's other requests
// wait for.
type flight struct {
	done  chan struct{}
	token string
	err   error
}

// exchange runs one token exchange of subject and keeps its answer under
// key until shortly before it expires.
func (x *exchanger) exchange(ctx context.Context, key [sha256.Size]byte, subject string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	now := time.Now()
	endpoint, err := x.tokenEndpoint(ctx)
	if err != nil {
		return "", err
	}
	method := x.spec.AuthMethod
	if method == "" {
		method = "none"
		if x.spec.ClientSecret != "" {
			method = "client_secret_basic"
		}
	}
	req := oauth.TokenExchange{
		Endpoint:         endpoint,
		Client:           oauth.ClientInfo{ID: x.spec.ClientID, Secret: x.spec.ClientSecret, AuthMethod: method},
		SubjectToken:     subject,
		SubjectTokenType: tokenTypeAccessToken,
		Audience:         x.spec.Audience,
		Resource:         x.spec.Resource,
		Scope:            strings.Join(x.spec.Scopes, " "),
	}
	if req.Audience == "" && req.Resource == "" {
		req.Resource = x.url
	}
	got, err := req.Exchange(ctx, nil)
	if err != nil {
		return "", err
	}
	if got.TokenType != "" && !strings.EqualFold(got.TokenType, "Bearer") {
		return "", fmt.Errorf("the issued token is of type %q, not Bearer", got.TokenType)
	}
	ttl := exchangeUnknownTTL
	if got.ExpiresIn > 0 {
		ttl = time.Duration(got.ExpiresIn)*time.Second - exchangeSkew
	}
	if ttl <= 0 {
		return got.AccessToken, nil // too short-lived to keep
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if el, ok := x.cache[key]; ok {
		x.order.Remove(el)
	}
	for x.order.Len() >= x.max {
		last := x.order.Back()
		x.order.Remove(last)
		delete(x.cache, last.Value.(*exchanged).key)
	}
	x.cache[key] = x.order.PushFront(&exchanged{key: key, token: got.AccessToken, expiry: now.Add(ttl)})
	return got.AccessToken, nil
}

// cached says how many exchanged tokens are kept (for tests).
func (x *exchanger) cached() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.order.Len()
}

// tokenEndpoint is the configured endpoint, or the one the issuer's
// metadata names (read once, kept once read).
func (x *exchanger) tokenEndpoint(ctx context.Context) (string, error) {
	x.mu.Lock()
	ep := x.endpoint
	x.mu.Unlock()
	if ep != "" {
		return ep, nil
	}
	// RFC 8414 section 3.1: the well-known path goes between the host and
	// the issuer's path.
	iss, err := url.Parse(x.spec.Issuer)
	if err != nil || iss.Host == "" {
		return "", errors.New("the issuer is not a URL")
	}
	md := *iss
	md.Path = "/.well-known/oauth-authorization-server" + strings.TrimSuffix(iss.Path, "/")
	md.RawPath, md.RawQuery, md.Fragment = "", "", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, md.String(), nil)
	if err != nil {
		return "", errors.New("the issuer is not a URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpguard.Outbound{Timeout: 10 * time.Second}.Client().Do(req)
	if err != nil {
		return "", fmt.Errorf("reading the issuer's metadata: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("reading the issuer's metadata: HTTP %d", resp.StatusCode)
	}
	meta, err := oauth.DecodeAuthServerMetadata(body)
	if err != nil {
		return "", fmt.Errorf("the issuer's metadata: %w", err)
	}
	if meta.Issuer != x.spec.Issuer || meta.TokenEndpoint == "" {
		return "", errors.New("the issuer's metadata names another issuer or no token endpoint")
	}
	x.mu.Lock()
	x.endpoint = meta.TokenEndpoint
	x.mu.Unlock()
	return meta.TokenEndpoint, nil
}

// exchangeAuth is the HTTPAuth of an upstream with a TokenExchange: a
// request carrying an exchanged token (bearerKey) is authorized with it
// alone, and a refusal of it is not answered with the upstream's own
// credentials; every other request (the session's own, an API-key
// caller's under APIKeyStatic) goes through static, the upstream's Auth
// (nil: none beyond its Header).
type exchangeAuth struct{ static client.HTTPAuth }

// Authorize sets the exchanged token when the request carries one.
func (a exchangeAuth) Authorize(req *http.Request) error {
	if t, ok := req.Context().Value(bearerKey{}).(string); ok {
		req.Header.Set("Authorization", "Bearer "+t)
		return nil
	}
	if a.static != nil {
		return a.static.Authorize(req)
	}
	return nil
}

// Challenge passes a challenge to static for its own requests only.
func (a exchangeAuth) Challenge(ctx context.Context, req *http.Request, resp *http.Response) (bool, error) {
	if _, ok := req.Context().Value(bearerKey{}).(string); ok || a.static == nil {
		return false, nil
	}
	return a.static.Challenge(ctx, req, resp)
}

// httpAuth is the HTTPAuth of u's HTTP transport.
func (u *upstream) httpAuth() client.HTTPAuth {
	if u.spec.TokenExchange == nil {
		return u.spec.Auth
	}
	return exchangeAuth{static: u.spec.Auth}
}
