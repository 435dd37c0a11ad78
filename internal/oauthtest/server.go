// Package oauthtest is a fake OAuth 2.1 authorization server and a bearer
// check for tests of the OAuth client (package oauth): RFC 8414 metadata,
// a JWKS, an authorization endpoint that approves at once and checks PKCE,
// a token endpoint for authorization_code, refresh_token (rotating),
// client_credentials and RFC 8693 token exchange (of an access token it
// issued for one of another audience, the same subject), RFC 7591
// registration, RFC 7009 revocation, and options to misbehave.
// Tokens are opaque random strings bound to the resource they were
// requested for, or (Options.JWT) RFC 9068 JWT access tokens signed with
// the key the JWKS publishes, for a resource server that verifies JWTs.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// Options shape the server; the zero value is a well-behaved server with
// dynamic registration and public clients.
type Options struct {
	ScopesSupported   []string      // scopes_supported in the metadata
	AuthMethods       []string      // token_endpoint_auth_methods_supported; nil: ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
	TokenTTL          time.Duration // expires_in; 0: one hour
	NoRefreshTokens   bool          // issue no refresh tokens
	NoRotation        bool          // refresh keeps the same refresh token
	NoRegistration    bool          // no registration_endpoint
	CIMD              bool          // client_id_metadata_document_supported
	NoPKCEAdvertised  bool          // omit code_challenge_methods_supported
	IssSupported      bool          // authorization_response_iss_parameter_supported
	IssInRedirect     string        // "" or "correct": the issuer; "omit"; "wrong"; "slash": issuer + "/"
	MetadataIssuer    string        // issuer in the metadata, when it must lie
	EchoSecretsInErrs bool          // error_description repeats the request's secrets (for redaction tests)
	NoRevocation      bool          // no revocation_endpoint
	// RevocationStatus, when set, is the status every revocation request
	// gets (with error server_error), and nothing is revoked.
	RevocationStatus int
	// JWT issues access tokens as ES256 JWTs (typ at+jwt, kid k1) with iss
	// (the issuer), sub and client_id (the client), aud (the resource),
	// scope, iat, exp and jti, verifiable with the JWKS; Verify still
	// knows them.
	JWT bool
	// Clients are pre-registered: id → secret ("" for a public client).
	Clients map[string]string
	// ClientKeys are the public keys of private_key_jwt clients, by id.
	ClientKeys map[string]*ecdsa.PublicKey
	// GrantScopes, when set, decides the scopes granted for those
	// requested (to grant fewer).
	GrantScopes func(requested []string) []string
	Now         func() time.Time
}

// Server is the fake authorization server. Its issuer is URL.
type Server struct {
	*httptest.Server
	URL  string
	opts Options
	key  *ecdsa.PrivateKey

	mu             sync.Mutex
	clients        map[string]string // id → secret
	codes          map[string]*grant
	access         map[string]*TokenInfo
	refresh        map[string]*TokenInfo
	Authorizations []url.Values // query of every authorization request
	TokenRequests  []url.Values // form of every token request
	Registrations  int
	exchanges      int
	revocations    []url.Values // form of every revocation request
	revoked        []string     // tokens revoked, in order
}

type grant struct {
	client, redirect, challenge, resource string
	scopes                                []string
}

// TokenInfo is what an access token was issued for.
type TokenInfo struct {
	// Subject is whom the token names (sub): the client, or for a token
	// exchange the subject token's subject.
	Subject  string
	Client   string
	Resource string
	Scopes   []string
	Expiry   time.Time
}

// New starts a server, closed when the test ends.
func New(t testing.TB, opts Options) *Server {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{opts: opts, key: key, clients: map[string]string{}, codes: map[string]*grant{},
		access: map[string]*TokenInfo{}, refresh: map[string]*TokenInfo{}}
	for id, sec := range opts.Clients {
		s.clients[id] = sec
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("GET /jwks", s.jwks)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	if !opts.NoRegistration {
		mux.HandleFunc("POST /register", s.register)
	}
	if !opts.NoRevocation {
		mux.HandleFunc("POST /revoke", s.revoke)
	}
	// URL is set before the server starts: handlers read it, and a
	// request may come from another process, with no ordering the race
	// detector could see.
	s.Server = httptest.NewUnstartedServer(mux)
	s.URL = "http://" + s.Server.Listener.Addr().String()
	s.Server.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	methods := s.opts.AuthMethods
	if methods == nil {
		methods = []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"}
	}
	iss := s.URL
	if s.opts.MetadataIssuer != "" {
		iss = s.opts.MetadataIssuer
	}
	md := map[string]any{
		"issuer":                                iss,
		"authorization_endpoint":                s.URL + "/authorize",
		"token_endpoint":                        s.URL + "/token",
		"jwks_uri":                              s.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"token_endpoint_auth_methods_supported": methods,
	}
	if !s.opts.NoRegistration {
		md["registration_endpoint"] = s.URL + "/register"
	}
	if !s.opts.NoRevocation {
		md["revocation_endpoint"] = s.URL + "/revoke"
		md["revocation_endpoint_auth_methods_supported"] = methods
	}
	if !s.opts.NoPKCEAdvertised {
		md["code_challenge_methods_supported"] = []string{"S256"}
	}
	if s.opts.ScopesSupported != nil {
		md["scopes_supported"] = s.opts.ScopesSupported
	}
	if s.opts.IssSupported {
		md["authorization_response_iss_parameter_supported"] = true
	}
	if s.opts.CIMD {
		md["client_id_metadata_document_supported"] = true
	}
	writeJSON(w, http.StatusOK, md)
}

func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &s.key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}}
	writeJSON(w, http.StatusOK, set)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) knownClient(id string) bool {
	_, ok := s.clients[id]
	return ok || (s.opts.CIMD && strings.HasPrefix(id, "https://"))
}

// authorize approves at once: it checks the client, PKCE (S256) and the
// redirect URI, and redirects with a code, the state and iss.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	s.Authorizations = append(s.Authorizations, q)
	known := s.knownClient(q.Get("client_id"))
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	ru, err := url.Parse(redirect)
	if err != nil || redirect == "" || !known {
		http.Error(w, "unknown client or bad redirect_uri", http.StatusBadRequest)
		return
	}
	back := ru.Query()
	back.Set("state", q.Get("state"))
	switch s.opts.IssInRedirect {
	case "", "correct":
		back.Set("iss", s.URL)
	case "wrong":
		back.Set("iss", "https://evil.example.com")
	case "slash":
		back.Set("iss", s.URL+"/")
	}
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		back.Set("error", "invalid_request")
		back.Set("error_description", "PKCE S256 is required")
	} else {
		code := random()
		s.mu.Lock()
		s.codes[code] = &grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
			resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
		s.mu.Unlock()
		back.Set("code", code)
	}
	ru.RawQuery = back.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

// clientAuth authenticates the client of a token request; "" when it
// fails (the error is written).
func (s *Server) clientAuth(w http.ResponseWriter, r *http.Request) string {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if a := r.PostForm.Get("client_assertion"); a != "" {
		tok, err := jwt.ParseSigned(a, []jose.SignatureAlgorithm{jose.ES256})
		var c jwt.Claims
		s.mu.Lock()
		pub := s.opts.ClientKeys[id]
		s.mu.Unlock()
		if err != nil || pub == nil || tok.Claims(pub, &c) != nil || c.Issuer != id || c.Subject != id ||
			c.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{s.URL}, Time: s.now()}, time.Minute) != nil {
			oauthError(w, http.StatusUnauthorized, "invalid_client", "bad client assertion")
			return ""
		}
		return id
	}
	s.mu.Lock()
	want, ok := s.clients[id]
	s.mu.Unlock()
	if !ok && !(s.opts.CIMD && strings.HasPrefix(id, "https://")) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client")
		return ""
	}
	if want != "" && secret != want {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "bad client secret")
		return ""
	}
	return id
}

// readForm parses the request's form, answering 400 invalid_request when
// it cannot, and records it in *log (under the server's lock) for the test
// to inspect; false when the request has been answered.
func (s *Server) readForm(w http.ResponseWriter, r *http.Request, log *[]url.Values) bool {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "bad form")
		return false
	}
	s.mu.Lock()
	*log = append(*log, r.PostForm)
	s.mu.Unlock()
	return true
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if !s.readForm(w, r, &s.TokenRequests) {
		return
	}
	client := s.clientAuth(w, r)
	if client == "" {
		return
	}
	f := r.PostForm
	switch f.Get("grant_type") {
	case "authorization_code":
		s.mu.Lock()
		g := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case g == nil:
			desc := "unknown code"
			if s.opts.EchoSecretsInErrs {
				desc += " " + f.Get("code") + " verifier " + f.Get("code_verifier")
			}
			oauthError(w, http.StatusBadRequest, "invalid_grant", desc)
		case g.client != client || g.redirect != f.Get("redirect_uri"):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "client or redirect_uri mismatch")
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
		case g.resource != f.Get("resource"):
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request's")
		default:
			s.issue(w, client, g.resource, g.scopes, true)
		}
	case "refresh_token":
		rt := f.Get("refresh_token")
		s.mu.Lock()
		info := s.refresh[rt]
		if info != nil && !s.opts.NoRotation {
			delete(s.refresh, rt)
		}
		s.mu.Unlock()
		if info == nil || info.Client != client {
			desc := "unknown refresh token"
			if s.opts.EchoSecretsInErrs {
				desc += " " + rt
			}
			oauthError(w, http.StatusBadRequest, "invalid_grant", desc)
			return
		}
		if s.opts.NoRotation {
			s.issueWith(w, client, info.Resource, info.Scopes, rt)
			return
		}
		s.issue(w, client, info.Resource, info.Scopes, true)
	case "client_credentials":
		s.issue(w, client, f.Get("resource"), strings.Fields(f.Get("scope")), false)
	case "urn:ietf:params:oauth:grant-type:token-exchange":
		s.exchange(w, client, f)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "")
	}
}

func (s *Server) issue(w http.ResponseWriter, client, resource string, scopes []string, withRefresh bool) {
	rt := ""
	if withRefresh && !s.opts.NoRefreshTokens {
		rt = random()
	}
	s.issueWith(w, client, resource, scopes, rt)
}

// exchange is RFC 8693 token exchange of an access token this server
// issued (subject_token_type access_token, unexpired and not revoked) for
// a token whose subject is the subject token's, issued to the requesting
// client for the audience (or, without one, the resource) requested, with
// the scopes requested (none: the subject token's). The answer has
// issued_token_type access_token; no refresh token.
func (s *Server) exchange(w http.ResponseWriter, client string, f url.Values) {
	if f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "subject_token_type must be access_token")
		return
	}
	info, ok := s.Verify(f.Get("subject_token"))
	if !ok {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the subject token is unknown, expired or revoked")
		return
	}
	target := f.Get("audience")
	if target == "" {
		target = f.Get("resource")
	}
	scopes := strings.Fields(f.Get("scope"))
	if len(scopes) == 0 {
		scopes = info.Scopes
	}
	s.mu.Lock()
	s.exchanges++
	s.mu.Unlock()
	s.issueFor(w, info.Subject, client, target, scopes, "", true)
}

// Exchanges returns how many token exchanges the server has granted.
func (s *Server) Exchanges() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exchanges
}

func (s *Server) issueWith(w http.ResponseWriter, client, resource string, scopes []string, rt string) {
	s.issueFor(w, client, client, resource, scopes, rt, false)
}

func (s *Server) issueFor(w http.ResponseWriter, subject, client, resource string, scopes []string, rt string, exchanged bool) {
	if s.opts.GrantScopes != nil {
		scopes = s.opts.GrantScopes(scopes)
	}
	ttl := s.opts.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	at := random()
	if s.opts.JWT {
		var err error
		if at, err = s.signJWT(subject, client, resource, scopes, ttl); err != nil {
			oauthError(w, http.StatusInternalServerError, "server_error", "cannot sign the token")
			return
		}
	}
	info := &TokenInfo{Subject: subject, Client: client, Resource: resource, Scopes: slices.Clone(scopes), Expiry: s.now().Add(ttl)}
	s.mu.Lock()
	s.access[at] = info
	if rt != "" {
		s.refresh[rt] = info
	}
	s.mu.Unlock()
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(ttl.Seconds())}
	if rt != "" {
		resp["refresh_token"] = rt
	}
	if exchanged {
		resp["issued_token_type"] = "urn:ietf:params:oauth:token-type:access_token"
	}
	if len(scopes) > 0 {
		resp["scope"] = strings.Join(scopes, " ")
	}
	writeJSON(w, http.StatusOK, resp)
}

// signJWT mints a JWT access token (RFC 9068) with the server's key.
func (s *Server) signJWT(subject, client, resource string, scopes []string, ttl time.Duration) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: s.key, KeyID: "k1"}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		return "", err
	}
	now := s.now()
	claims := map[string]any{"iss": s.URL, "sub": subject, "client_id": client, "iat": now.Unix(),
		"exp": now.Add(ttl).Unix(), "jti": random()}
	if resource != "" {
		claims["aud"] = resource
	}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// revoke is RFC 7009's revocation endpoint: it authenticates the client
// as the token endpoint does, then revokes the token (a refresh token,
// or an access token; token_type_hint says where to look first) if it
// was issued to that client. Revoking a refresh token revokes the access
// tokens issued with it too. An unknown token is answered 200, as RFC
// 7009 §2.2 asks; one issued to another client 400 invalid_grant.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if !s.readForm(w, r, &s.revocations) {
		return
	}
	if s.opts.RevocationStatus != 0 {
		oauthError(w, s.opts.RevocationStatus, "server_error", "revocation is failing")
		return
	}
	client := s.clientAuth(w, r)
	if client == "" {
		return
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "no token")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	type kind struct {
		m       map[string]*TokenInfo
		refresh bool
	}
	kinds := []kind{{s.refresh, true}, {s.access, false}}
	if r.PostForm.Get("token_type_hint") == "access_token" {
		kinds[0], kinds[1] = kinds[1], kinds[0]
	}
	for _, k := range kinds {
		info := k.m[tok]
		if info == nil {
			continue
		}
		if info.Client != client {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the token was issued to another client")
			return
		}
		delete(k.m, tok)
		s.revoked = append(s.revoked, tok)
		if k.refresh {
			for at, ai := range s.access {
				if ai == info {
					delete(s.access, at)
				}
			}
		}
		break
	}
	w.WriteHeader(http.StatusOK)
}

// Revoked returns the tokens revoked at the revocation endpoint so far,
// in order.
func (s *Server) Revoked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.revoked)
}

// RevocationForms returns a copy of the form of every revocation request
// so far.
func (s *Server) RevocationForms() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.revocations)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		Method       string   `json:"token_endpoint_auth_method"`
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	if err == nil {
		err = wirejson.Unmarshal(body, &req)
	}
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "bad JSON")
		return
	}
	id, secret := "dyn-"+random(), ""
	if req.Method != "" && req.Method != "none" {
		secret = random()
	}
	s.mu.Lock()
	s.clients[id] = secret
	s.Registrations++
	s.mu.Unlock()
	resp := map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": orDefault(req.Method, "none")}
	if secret != "" {
		resp["client_secret"] = secret
	}
	writeJSON(w, http.StatusCreated, resp)
}

func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Verify returns what the access token was issued for; false for an
// unknown, expired or revoked token.
func (s *Server) Verify(token string) (TokenInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.access[token]
	if info == nil || !s.now().Before(info.Expiry) {
		return TokenInfo{}, false
	}
	return *info, true
}

// RevokeAccess revokes every access token (refresh tokens stay valid).
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]*TokenInfo{}
}

// Counts returns how many authorization, token and registration requests
// the server has seen.
func (s *Server) Counts() (authorizations, tokens, registrations int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.Authorizations), len(s.TokenRequests), s.Registrations
}

// TokenForms returns a copy of the form of every token request so far,
// safe to call while the server serves.
func (s *Server) TokenForms() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.TokenRequests)
}
