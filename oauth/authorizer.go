package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/internal/httpguard"
)

// Config configures an Authorizer. Only Endpoint is required; an
// interactive client also sets UserAgent and RedirectURI, a machine client
// sets Grant (ClientCredentials) and its credentials.
type Config struct {
	// Endpoint is the MCP endpoint URL: the resource tokens are for.
	Endpoint string

	// UserAgent and RedirectURI run the authorization code flow: the
	// redirect URI is registered and sent; the user agent returns the URL
	// the authorization server redirected to.
	UserAgent   UserAgent
	RedirectURI string

	// Client metadata for dynamic registration (RFC 7591).
	ClientName      string
	ClientURI       string
	SoftwareID      string
	SoftwareVersion string
	ApplicationType string // "native" (the default) or "web"

	// ClientMetadataURL is the https URL of the client's Client ID Metadata
	// Document, used as client_id where the server supports them.
	ClientMetadataURL string

	// Pre-registered credentials. ClientIssuer binds them to one
	// authorization server (they are never presented to another); empty
	// means any. TokenEndpointAuthMethod forces the authentication method
	// ("" picks one the server supports).
	ClientID                string
	ClientSecret            string
	ClientIssuer            string
	TokenEndpointAuthMethod string
	// ClientKey enables private_key_jwt (RFC 7523 client assertions).
	ClientKey *ClientKey

	// Grant, when set, obtains tokens in place of the authorization code
	// flow (ClientCredentials, or another grant).
	Grant Grant

	// NoInteractive keeps a 401 or 403 from ever starting the
	// authorization code flow (nor a registration for it): the stored
	// token is refreshed when it can be, and otherwise Challenge fails
	// with ErrAuthorizationRequired, for a CLI that logs in with a
	// command of its own (Login still runs the flow). No effect with a
	// Grant.
	NoInteractive bool

	// Scopes are requested in addition to those the server asks for.
	Scopes []string
	// NoOfflineAccess stops the client adding offline_access (for a
	// refresh token) when the authorization server lists it.
	NoOfflineAccess bool

	// Store keeps tokens across runs; nil: in memory.
	Store TokenStore

	// DPoP, when set, sender-constrains tokens (see DPoPSigner).
	DPoP DPoPSigner

	// AllowLoopback lets discovery reach loopback addresses even when the
	// MCP endpoint is not loopback (it always can when it is);
	// AllowPrivateNetworks lets it reach private addresses (RFC 1918, RFC
	// 4193, CGNAT). Link-local, multicast and unspecified addresses are
	// always refused.
	AllowLoopback        bool
	AllowPrivateNetworks bool
	// Timeout bounds each request to an authorization server or metadata
	// URL; 0 means 30 seconds.
	Timeout time.Duration
	// MaxResponseBytes bounds each response read from a metadata URL or
	// an authorization server (metadata documents, registration, token,
	// token exchange and revocation responses); a longer one fails the
	// step. 0 means DefaultMaxResponseBytes (256 KiB).
	MaxResponseBytes int
	// MaxRedirects bounds the redirects each of those requests follows
	// (every one checked by the https rule and the address guard); 0
	// means DefaultMaxRedirects (3), a negative number none.
	MaxRedirects int

	// MaxStepUps is how many times one scope set is re-authorized after
	// 403 insufficient_scope; 0 means 1.
	MaxStepUps int

	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger     // nil: no logging
}

// ErrAuthorizationRequired: the server wants a token (or more scopes)
// that only the authorization code flow can get, and Config.NoInteractive
// forbids starting it.
var ErrAuthorizationRequired = errors.New("authorization required")

// Authorizer authorizes requests to one MCP endpoint with OAuth 2.1. It
// implements client.HTTPAuth (Authorize, Challenge) without importing
// package client. Safe for concurrent use.
type Authorizer struct {
	cfg      Config
	endpoint *url.URL
	key      string // the store key: the canonical endpoint URI
	pol      netPolicy
	hc       *http.Client
	disc     discoverer
	now      func() time.Time
	log      *slog.Logger
	asNonces NonceCache
	rsNonces NonceCache
	maxBytes int64 // Config.MaxResponseBytes, resolved

	flow sync.Mutex // one discovery/registration/grant at a time

	mu        sync.Mutex
	tok       *Token
	loaded    bool
	clients   map[string]ClientInfo // by issuer
	asCache   map[string]*auth.AuthServerMetadata
	requested map[string]int // authorizations per scope set
}

// NewAuthorizer checks cfg and returns an Authorizer for cfg.Endpoint.
func NewAuthorizer(cfg Config) (*Authorizer, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("oauth: the endpoint %q is not an http or https URL", truncate(cfg.Endpoint, 200))
	}
	key, err := CanonicalResource(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	pol := netPolicy{allowLoopback: cfg.AllowLoopback || isLoopbackHost(u.Hostname()), allowPrivate: cfg.AllowPrivateNetworks}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("oauth: %w: the endpoint %s is not https, so no token is sent to it", ErrUnsafeURL, u.Redacted())
	}
	if cfg.ClientMetadataURL != "" {
		if cu, err := url.Parse(cfg.ClientMetadataURL); err != nil || cu.Scheme != "https" || cu.Path == "" || cu.Path == "/" {
			return nil, errors.New("oauth: ClientMetadataURL must be an https URL with a path")
		}
	}
	if cfg.Store == nil {
		cfg.Store = &MemoryStore{}
	}
	if cfg.MaxStepUps <= 0 {
		cfg.MaxStepUps = 1
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hc := newGuardedClient(pol, cfg.Timeout, cfg.MaxRedirects)
	maxBytes := responseLimit(cfg.MaxResponseBytes)
	return &Authorizer{
		cfg: cfg, endpoint: u, key: key, pol: pol, hc: hc, maxBytes: maxBytes,
		disc: discoverer{hc: hc, pol: pol, maxBytes: maxBytes}, now: now, log: log,
		clients: map[string]ClientInfo{}, asCache: map[string]*auth.AuthServerMetadata{}, requested: map[string]int{},
	}, nil
}

// current returns the token for the endpoint, loading it from the store
// the first time.
func (a *Authorizer) current(ctx context.Context) *Token {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.loaded {
		a.loaded = true
		t, err := a.cfg.Store.Load(ctx, a.key)
		switch {
		case err != nil:
			a.log.Warn("oauth: cannot load the stored token", "error", err)
		case t != nil && resourceCovers(t.Resource, a.endpoint) && t.AccessToken != "":
			a.tok = t
		}
	}
	return a.tok
}

func (a *Authorizer) setToken(ctx context.Context, t *Token) {
	a.mu.Lock()
	a.tok, a.loaded = t, true
	if t != nil && t.Client.ID != "" {
		a.clients[t.Issuer] = t.Client
	}
	a.mu.Unlock()
	var err error
	if t == nil {
		err = a.cfg.Store.Delete(ctx, a.key)
	} else {
		err = a.cfg.Store.Save(ctx, a.key, t)
	}
	if err != nil {
		a.log.Warn("oauth: cannot store the token", "error", err)
	}
}

// Token returns the current token (nil when there is none); its String
// is redacted.
func (a *Authorizer) Token(ctx context.Context) *Token { return a.current(ctx) }

// ErrNotRevoked is wrapped by the error of Logout when the authorization
// server advertises a revocation endpoint but the tokens could not be
// revoked there (or its metadata could not be read to find out): they
// were deleted locally all the same, and may stay valid at the server
// until they expire.
var ErrNotRevoked = errors.New("the tokens were deleted locally but not revoked at the authorization server")

// LogoutReport says what Logout did.
type LogoutReport struct {
	// HadToken: a token was held for the endpoint (in memory or in the
	// store); without one there was nothing to revoke.
	HadToken bool
	// Issuer is the authorization server that issued it.
	Issuer string
	// RevocationEndpoint is the one the authorization server advertises
	// (RFC 7009); "" when it advertises none, or its metadata could not be
	// read (then RevokeErr says why).
	RevocationEndpoint string
	// Revoked: every token held (the refresh token, the access token) was
	// revoked at RevocationEndpoint.
	Revoked bool
	// RevokeErr is why revoking failed; nil when it succeeded or was not
	// possible (no revocation endpoint). It wraps ErrNotRevoked.
	RevokeErr error
}

// Logout revokes the endpoint's tokens at the authorization server when
// its metadata advertises a revocation_endpoint (RFC 7009: the refresh
// token, then the access token, each with its token_type_hint, the client
// authenticated as at the token endpoint, through the guarded client with
// Config's timeout and bounds), then forgets them, in memory and in the
// store, whether or not they could be revoked. A failure to revoke is
// logged (Warn) and returned wrapping ErrNotRevoked, joined with a failure
// to delete from the store; an authorization server without a revocation
// endpoint is no error. LogoutReport says which happened.
func (a *Authorizer) Logout(ctx context.Context) error {
	_, err := a.LogoutReport(ctx)
	return err
}

// LogoutReport is Logout, also returning what it did.
func (a *Authorizer) LogoutReport(ctx context.Context) (LogoutReport, error) {
	a.flow.Lock() // no refresh while the tokens are revoked
	defer a.flow.Unlock()
	// The token held, and the one in the store when another process
	// stored a newer one since (its refresh token is the live one).
	var held []*Token
	t := a.current(ctx)
	if t != nil {
		held = append(held, t)
	}
	if st, err := a.cfg.Store.Load(ctx, a.key); err == nil && st != nil && st.AccessToken != "" && resourceCovers(st.Resource, a.endpoint) &&
		(t == nil || st.AccessToken != t.AccessToken || st.RefreshToken != t.RefreshToken) {
		held = append(held, st)
	}
	var rep LogoutReport
	for i, t := range held {
		r := a.revoke(ctx, t)
		if i == 0 {
			rep = r
			continue
		}
		rep.Revoked = rep.Revoked && r.Revoked
		rep.RevokeErr = errors.Join(rep.RevokeErr, r.RevokeErr)
		if rep.RevocationEndpoint == "" {
			rep.RevocationEndpoint = r.RevocationEndpoint
		}
	}
	if rep.RevokeErr != nil {
		a.log.Warn("oauth: the tokens were not revoked at the authorization server; deleting them locally all the same",
			"issuer", rep.Issuer, "error", rep.RevokeErr)
	}
	a.mu.Lock()
	a.tok, a.loaded = nil, true
	a.mu.Unlock()
	return rep, errors.Join(rep.RevokeErr, a.cfg.Store.Delete(ctx, a.key))
}

// revoke revokes t's refresh and access tokens where the authorization
// server advertises a revocation endpoint.
func (a *Authorizer) revoke(ctx context.Context, t *Token) LogoutReport {
	rep := LogoutReport{HadToken: true, Issuer: t.Issuer}
	if t.Issuer == "" {
		return rep // nothing says where it came from
	}
	legacy := t.Issuer == a.endpoint.Scheme+"://"+a.endpoint.Host
	md, err := a.authServer(ctx, t.Issuer, legacy)
	if err != nil {
		rep.RevokeErr = fmt.Errorf("%w: discovering the revocation endpoint of %s: %w", ErrNotRevoked, t.Issuer, err)
		return rep
	}
	if md.RevocationEndpoint == "" {
		return rep
	}
	rep.RevocationEndpoint = md.RevocationEndpoint
	// Checked here rather than at discovery: an endpoint the login never
	// uses does not fail it.
	if _, err := a.pol.checkURL("revocation endpoint", md.RevocationEndpoint); err != nil {
		rep.RevokeErr = fmt.Errorf("%w: %w", ErrNotRevoked, err)
		return rep
	}
	te := a.tokenEndpoint(md, t.Client)
	var errs []error
	// The refresh token first: revoking it may revoke the access tokens
	// issued with it too (RFC 7009 §2.1), but need not.
	for _, x := range []struct{ tok, hint string }{{t.RefreshToken, "refresh_token"}, {t.AccessToken, "access_token"}} {
		if x.tok == "" {
			continue
		}
		if err := te.Revoke(ctx, md.RevocationEndpoint, x.tok, x.hint); err != nil {
			errs = append(errs, fmt.Errorf("the %s: %w", strings.ReplaceAll(x.hint, "_", " "), err))
		}
	}
	switch len(errs) {
	case 0:
	case 1:
		rep.RevokeErr = fmt.Errorf("%w: %w", ErrNotRevoked, errs[0])
		return rep
	default:
		rep.RevokeErr = fmt.Errorf("%w: %w; %w", ErrNotRevoked, errs[0], errs[1])
		return rep
	}
	rep.Revoked = true
	return rep
}

// Authorize sets the request's credentials: the endpoint's token, if any,
// and only if the token's resource covers the request's URL; a DPoP token
// with a fresh proof. An expired token is refreshed first when it can be.
// Credentials already on the request are removed.
func (a *Authorizer) Authorize(req *http.Request) error {
	req.Header.Del("Authorization")
	req.Header.Del("DPoP")
	ctx := req.Context()
	t := a.current(ctx)
	if t == nil {
		return nil
	}
	if t.expired(a.now()) && t.RefreshToken != "" {
		t = a.refreshExpired(ctx, t)
	}
	if !resourceCovers(t.Resource, req.URL) {
		return nil // never present a token to another resource
	}
	if t.isDPoP() {
		if a.cfg.DPoP == nil {
			return errors.New("oauth: the token is DPoP-bound but no DPoP signer is configured")
		}
		proof, err := a.cfg.DPoP.Proof(req.Method, htu(req.URL.String()), t.AccessToken, a.rsNonces.Get(req.URL.String()))
		if err != nil {
			return fmt.Errorf("oauth: DPoP proof: %w", err)
		}
		req.Header.Set("Authorization", "DPoP "+t.AccessToken)
		req.Header.Set("DPoP", proof)
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+t.AccessToken)
	return nil
}

// sentToken is the access token a request carried, "" when none.
func sentToken(req *http.Request) string {
	h := req.Header.Get("Authorization")
	if i := strings.IndexByte(h, ' '); i > 0 {
		s := strings.ToLower(h[:i])
		if s == "bearer" || s == "dpop" {
			return strings.TrimSpace(h[i+1:])
		}
	}
	return ""
}

// Challenge answers a 401 or 403 from the MCP endpoint: a DPoP nonce
// (retry with it), a missing or rejected token (refresh, or discover,
// register and run the grant), insufficient_scope (re-authorize with the
// union of the scopes, at most MaxStepUps times per scope set). It says
// whether the request is worth sending again.
func (a *Authorizer) Challenge(ctx context.Context, req *http.Request, resp *http.Response) (bool, error) {
	ap := challengeParams(ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")))
	sent := sentToken(req)
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		if ap.err == "use_dpop_nonce" && a.cfg.DPoP != nil {
			return a.rsNonces.Set(req.URL.String(), resp.Header.Get("DPoP-Nonce")), nil
		}
		return a.reauthorize(ctx, ap, sent, false, false)
	case http.StatusForbidden:
		if ap.err != "insufficient_scope" {
			return false, nil
		}
		return a.reauthorize(ctx, ap, sent, true, false)
	}
	return false, nil
}

// Login obtains a token before any request is refused (toolwire login),
// even when one is already held: it sends the endpoint an unauthenticated
// ping to read its challenge (resource_metadata, scope), then discovers,
// registers and runs the grant. A server that does not challenge leaves
// discovery to the well-known URLs.
func (a *Authorizer) Login(ctx context.Context) error {
	_, err := a.reauthorize(ctx, a.probe(ctx), "", false, true)
	return err
}

// probe POSTs a ping without credentials and returns the parameters of
// the 401 or 403 challenge, if any. The endpoint is the one the user
// chose, so the address guard does not apply; the https rule did in
// NewAuthorizer.
func (a *Authorizer) probe(ctx context.Context) authParams {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.endpoint.String(), strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return authParams{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := httpguard.Outbound{Timeout: defaultTimeout}.Client().Do(req)
	if err != nil {
		return authParams{}
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return authParams{}
	}
	return challengeParams(ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")))
}

// reauthorize gets a new token after a 401 (or a 403 with stepUp).
func (a *Authorizer) reauthorize(ctx context.Context, ap authParams, sent string, stepUp, force bool) (bool, error) {
	a.flow.Lock()
	defer a.flow.Unlock()
	cur := a.current(ctx)
	if !force && cur != nil && cur.AccessToken != sent {
		return true, nil // another request already got a new token
	}
	noFlow := a.cfg.NoInteractive && a.cfg.Grant == nil && !force
	if noFlow && (cur == nil || cur.RefreshToken == "" || stepUp) {
		return false, ErrAuthorizationRequired
	}
	prm, err := a.disc.protectedResource(ctx, a.endpoint, ap.resourceMetadata)
	if err != nil {
		return false, fmt.Errorf("oauth: discovery: %w", err)
	}
	resource, legacy := a.key, prm == nil
	var issuer string
	if prm != nil {
		resource = prm.Resource
		if len(prm.AuthorizationServers) == 0 {
			return false, errors.New("oauth: the protected resource metadata names no authorization server")
		}
		issuer = a.pickIssuer(prm.AuthorizationServers, cur)
	} else {
		issuer = a.endpoint.Scheme + "://" + a.endpoint.Host // 2025-03-26: the server's origin
	}
	md, err := a.authServer(ctx, issuer, legacy)
	if err != nil {
		return false, fmt.Errorf("oauth: discovery: %w", err)
	}
	a.log.Debug("oauth: discovered", "resource", resource, "issuer", md.Issuer, "legacy", legacy)

	if !stepUp && !force && cur != nil && cur.RefreshToken != "" && cur.Issuer == md.Issuer && cur.Resource == resource {
		if _, err := a.refreshShared(ctx, md, cur); err == nil {
			return true, nil
		} else {
			a.log.Debug("oauth: refresh failed; authorizing anew", "error", err)
		}
	}
	if noFlow {
		return false, ErrAuthorizationRequired
	}

	scopes := a.selectScopes(ap.scope, prm, md, cur, stepUp)
	set := strings.Join(scopes, " ")
	a.mu.Lock()
	n := a.requested[set]
	limit := 1 + a.cfg.MaxStepUps
	if stepUp && n >= limit {
		a.mu.Unlock()
		return false, fmt.Errorf("oauth: the server still refuses the scopes %q after %d authorizations; not trying again", set, n)
	}
	a.requested[set] = n + 1
	a.mu.Unlock()

	client, err := a.client(ctx, md, cur)
	if err != nil {
		return false, err
	}
	te := a.tokenEndpoint(md, client)
	var t *Token
	if a.cfg.Grant != nil {
		t, err = a.cfg.Grant.Token(ctx, te, GrantParams{Resource: resource, Scopes: scopes, Metadata: md})
	} else {
		t, err = a.authorizationCode(ctx, te, md, resource, scopes)
	}
	if err != nil {
		var oe *Error
		if client.Kind == "dynamic" && errors.As(err, &oe) && oe.Code == "invalid_client" {
			a.mu.Lock()
			delete(a.clients, md.Issuer) // register again next time
			a.mu.Unlock()
		}
		return false, err
	}
	if t == nil {
		return false, errors.New("oauth: the grant returned no token")
	}
	t.Resource, t.Issuer, t.Client = resource, md.Issuer, client
	if t.Scopes == nil {
		t.Scopes = scopes
	}
	a.setToken(ctx, t)
	a.log.Debug("oauth: authorized", "token", t)
	return true, nil
}

// pickIssuer chooses among the resource's authorization servers: the one
// the current token came from, the pre-registered client's, else the
// first.
func (a *Authorizer) pickIssuer(servers []string, cur *Token) string {
	if cur != nil && slices.Contains(servers, cur.Issuer) {
		return cur.Issuer
	}
	if a.cfg.ClientIssuer != "" && slices.Contains(servers, a.cfg.ClientIssuer) {
		return a.cfg.ClientIssuer
	}
	return servers[0]
}

// authServer returns the issuer's metadata, discovered once.
func (a *Authorizer) authServer(ctx context.Context, issuer string, legacy bool) (*auth.AuthServerMetadata, error) {
	a.mu.Lock()
	md := a.asCache[issuer]
	a.mu.Unlock()
	if md != nil {
		return md, nil
	}
	md, err := a.disc.authServer(ctx, issuer, legacy)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.asCache[issuer] = md
	a.mu.Unlock()
	return md, nil
}

// client returns the registration with md's issuer: one made before (in
// this process, or the stored token's), else a new one. A registration is
// never used with another authorization server.
func (a *Authorizer) client(ctx context.Context, md *auth.AuthServerMetadata, cur *Token) (ClientInfo, error) {
	a.mu.Lock()
	c, ok := a.clients[md.Issuer]
	a.mu.Unlock()
	if ok {
		return c, nil
	}
	if cur != nil && cur.Client.ID != "" && cur.Client.Issuer == md.Issuer {
		return cur.Client, nil
	}
	c, err := a.register(ctx, md)
	if err != nil {
		return ClientInfo{}, fmt.Errorf("oauth: registration: %w", err)
	}
	a.log.Debug("oauth: registered", "client", c)
	a.mu.Lock()
	a.clients[md.Issuer] = c
	a.mu.Unlock()
	return c, nil
}

func (a *Authorizer) tokenEndpoint(md *auth.AuthServerMetadata, c ClientInfo) *TokenEndpoint {
	return &TokenEndpoint{URL: md.TokenEndpoint, Issuer: md.Issuer, Client: c, Key: a.cfg.ClientKey,
		HTTP: a.hc, DPoP: a.cfg.DPoP, Now: a.now, Nonces: &a.asNonces,
		MaxResponseBytes: int(a.maxBytes), MaxRedirects: a.cfg.MaxRedirects}
}

// selectScopes applies MCP's scope selection: the challenge's scope, else
// the resource's scopes_supported, else none (scope omitted); plus
// Config.Scopes; on a step-up, united with the current token's; plus
// offline_access when the authorization server lists it (and scopes are
// requested at all).
func (a *Authorizer) selectScopes(challenged string, prm *auth.ResourceMetadata, md *auth.AuthServerMetadata, cur *Token, stepUp bool) []string {
	var s []string
	if challenged != "" {
		s = strings.Fields(challenged)
	} else if prm != nil {
		s = append(s, prm.ScopesSupported...)
	}
	s = append(s, a.cfg.Scopes...)
	if stepUp && cur != nil {
		s = append(slices.Clone(cur.Scopes), s...)
	}
	if len(s) > 0 && !a.cfg.NoOfflineAccess && a.cfg.Grant == nil && supports(md.ScopesSupported, "offline_access") {
		s = append(s, "offline_access")
	}
	var out []string
	for _, x := range s {
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// refresh uses the refresh token; a response without a new refresh token
// keeps the old one, one with a new one replaces it (rotation).
func (a *Authorizer) refresh(ctx context.Context, md *auth.AuthServerMetadata, cur *Token) (*Token, error) {
	te := a.tokenEndpoint(md, cur.Client)
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {cur.RefreshToken}}
	if cur.Resource != "" {
		form.Set("resource", cur.Resource)
	}
	t, err := te.Request(ctx, form)
	if err != nil {
		return nil, err
	}
	if t.RefreshToken == "" {
		t.RefreshToken = cur.RefreshToken
	}
	t.Resource, t.Issuer, t.Client = cur.Resource, cur.Issuer, cur.Client
	if t.Scopes == nil {
		t.Scopes = cur.Scopes
	}
	return t, nil
}

// refreshExpired refreshes an expired token before it is sent; on failure
// the old one is returned (the server's 401 then starts over).
func (a *Authorizer) refreshExpired(ctx context.Context, t *Token) *Token {
	a.flow.Lock()
	defer a.flow.Unlock()
	if cur := a.current(ctx); cur != t {
		return cur
	}
	legacy := t.Issuer == a.endpoint.Scheme+"://"+a.endpoint.Host
	md, err := a.authServer(ctx, t.Issuer, legacy)
	if err != nil {
		a.log.Debug("oauth: cannot refresh the expired token", "error", err)
		return t
	}
	nt, err := a.refreshShared(ctx, md, t)
	if err != nil {
		a.log.Debug("oauth: cannot refresh the expired token", "error", err)
		return t
	}
	return nt
}

// Waits for the store to show the token of another process (or
// Authorizer) that won a race to rotate the refresh token: the server
// invalidates the old refresh token before that process has stored the
// new one.
var rotationWaits = []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}

// refreshShared refreshes cur, for a store other processes (or other
// Authorizers) may share, and adopts (and stores) the result. A token
// the store holds that differs from cur was stored by another process
// that rotated the refresh token: it is used instead, refreshed first
// when it has expired too. That is checked before the refresh, so as not
// to present a rotated-away refresh token (which some servers take as a
// replay and answer by revoking the whole family), and again when the
// refresh fails, for a race lost at the server: on invalid_grant the
// store is read a few times over a bounded wait (rotationWaits) for the
// winner's token to appear.
func (a *Authorizer) refreshShared(ctx context.Context, md *auth.AuthServerMetadata, cur *Token) (*Token, error) {
	if st := a.storedOther(ctx, cur); st != nil {
		if !st.expired(a.now()) {
			a.adopt(st)
			return st, nil
		}
		if st.RefreshToken != "" && st.Issuer == md.Issuer {
			cur = st // refresh the newer token
		}
	}
	t, err := a.refresh(ctx, md, cur)
	if err == nil {
		a.setToken(ctx, t)
		return t, nil
	}
	var oe *Error
	rotated := errors.As(err, &oe) && oe.Code == "invalid_grant"
	for i, d := range rotationWaits {
		if i > 0 && !rotated {
			break
		}
		if d > 0 && backoff.Sleep(ctx, d) != nil {
			return nil, err
		}
		st := a.storedOther(ctx, cur)
		if st == nil {
			continue
		}
		a.log.Debug("oauth: the refresh failed, but another process stored a new token; using it", "error", err)
		if !st.expired(a.now()) {
			a.adopt(st)
			return st, nil
		}
		if st.RefreshToken == "" || st.Issuer != md.Issuer {
			return nil, err
		}
		t, err2 := a.refresh(ctx, md, st)
		if err2 != nil {
			return nil, err
		}
		a.setToken(ctx, t)
		return t, nil
	}
	return nil, err
}

// storedOther returns the token the store holds for the endpoint when it
// is usable and not cur (another process stored it); nil otherwise.
func (a *Authorizer) storedOther(ctx context.Context, cur *Token) *Token {
	st, err := a.cfg.Store.Load(ctx, a.key)
	if err != nil || st == nil || st.AccessToken == "" || !resourceCovers(st.Resource, a.endpoint) {
		return nil
	}
	if st.AccessToken == cur.AccessToken && st.RefreshToken == cur.RefreshToken {
		return nil
	}
	return st
}

// adopt makes t, read from the store, the current token (it is there
// already: not saved again).
func (a *Authorizer) adopt(t *Token) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tok, a.loaded = t, true
	if t.Client.ID != "" {
		a.clients[t.Issuer] = t.Client
	}
}
