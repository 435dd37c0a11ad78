package oauth_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/oauth"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// newClock is a settable clock shared by the authorization server and the
// client.
func newClock() *testclock.Clock { return testclock.New(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)) }

func mcpHandler(t *testing.T) http.Handler {
	srv := server.New(mcp.Implementation{Name: "protected", Version: "1.0.0"})
	type none struct{}
	if err := server.AddTool(srv, &mcp.Tool{Name: "echo"}, func(context.Context, *server.CallRequest, none) (string, error) {
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	h := streamable.NewHandler(srv)
	t.Cleanup(func() { h.Close() })
	return h
}

// env is an MCP server protected by a fake authorization server.
type env struct {
	as       *oauthtest.Server
	rs       *oauthtest.Resource
	endpoint string
	clock    *testclock.Clock
}

func newEnv(t *testing.T, opts oauthtest.Options, setup func(*oauthtest.Resource)) *env {
	t.Helper()
	c := newClock()
	opts.Now = c.Now
	as := oauthtest.New(t, opts)
	rs := &oauthtest.Resource{AS: as, Path: "/mcp", MCP: mcpHandler(t)}
	if setup != nil {
		setup(rs)
	}
	ts := httptest.NewServer(rs.Handler())
	t.Cleanup(ts.Close)
	if rs.Resource == "" {
		rs.Resource = ts.URL + "/mcp"
	}
	return &env{as: as, rs: rs, endpoint: ts.URL + "/mcp", clock: c}
}

func (e *env) config() oauth.Config {
	return oauth.Config{
		Endpoint:    e.endpoint,
		UserAgent:   oauth.NoRedirectUserAgent{},
		RedirectURI: "http://127.0.0.1:8976/callback",
		ClientName:  "oauth-test",
		Now:         e.clock.Now,
	}
}

func connect(t *testing.T, endpoint string, a client.HTTPAuth) (*client.Client, error) {
	t.Helper()
	c, err := client.Connect(testwait.Context(t), &client.HTTP{URL: endpoint, Auth: a}, client.WithTimeout(testwait.Limit))
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func callEcho(t *testing.T, c *client.Client) error {
	t.Helper()
	_, err := c.CallTool(testwait.Context(t), "echo", map[string]any{})
	return err
}

// newAuthorizer is oauth.NewAuthorizer for a configuration the test
// expects to be accepted.
func newAuthorizer(t *testing.T, cfg oauth.Config) *oauth.Authorizer {
	t.Helper()
	a, err := oauth.NewAuthorizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// mustConnect connects to endpoint with a, failing the test when the
// connection, and the authorization it starts with, fails.
func mustConnect(t *testing.T, endpoint string, a client.HTTPAuth) *client.Client {
	t.Helper()
	c, err := connect(t, endpoint, a)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// echoOK calls the endpoint's echo tool, failing the test when the call
// (with any re-authorization it needs) fails.
func echoOK(t *testing.T, c *client.Client) {
	t.Helper()
	if err := callEcho(t, c); err != nil {
		t.Fatal(err)
	}
}

func TestFullFlow(t *testing.T) {
	e := newEnv(t, oauthtest.Options{ScopesSupported: []string{"mcp", "offline_access"}}, func(rs *oauthtest.Resource) {
		rs.ScopesSupported = []string{"mcp"}
	})
	var logs bytes.Buffer
	cfg := e.config()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := newAuthorizer(t, cfg)
	c := mustConnect(t, e.endpoint, a)
	echoOK(t, c)
	auths, tokens, regs := e.as.Counts()
	if auths != 1 || tokens != 1 || regs != 1 {
		t.Fatalf("authorizations %d, token requests %d, registrations %d; want 1 each", auths, tokens, regs)
	}
	q := e.as.Authorizations[0]
	if q.Get("resource") != e.rs.Resource || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" {
		t.Errorf("authorization request %v", q)
	}
	if q.Get("scope") != "mcp offline_access" {
		t.Errorf("scope %q, want the resource's scopes_supported plus offline_access", q.Get("scope"))
	}
	tok := a.Token(context.Background())
	if tok == nil || tok.Resource != e.rs.Resource || tok.Issuer != e.as.URL || tok.RefreshToken == "" {
		t.Fatalf("token %v", tok)
	}
	for _, h := range e.rs.Seen() {
		if h != "" && h != "Bearer "+tok.AccessToken {
			t.Errorf("the endpoint saw %q", h)
		}
	}
	if s := logs.String(); strings.Contains(s, tok.AccessToken) || strings.Contains(s, tok.RefreshToken) {
		t.Error("a token appears in the logs")
	}
	if s := tok.String(); strings.Contains(s, tok.AccessToken) || strings.Contains(s, tok.RefreshToken) {
		t.Error("Token.String shows a token")
	}
}

func TestRefreshRotation(t *testing.T) {
	e := newEnv(t, oauthtest.Options{TokenTTL: time.Hour}, nil)
	a := newAuthorizer(t, e.config())
	c := mustConnect(t, e.endpoint, a)
	first := a.Token(context.Background())
	seen := map[string]bool{first.RefreshToken: true}
	for i := range 2 {
		e.clock.Advance(2 * time.Hour) // the access token has expired
		if err := callEcho(t, c); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		tok := a.Token(context.Background())
		if seen[tok.RefreshToken] {
			t.Fatalf("round %d: the rotated refresh token was not kept", i)
		}
		seen[tok.RefreshToken] = true
	}
	auths, _, _ := e.as.Counts()
	if auths != 1 {
		t.Errorf("%d authorizations; refreshing should need only the first", auths)
	}
	var refreshes int
	for _, f := range e.as.TokenRequests {
		if f.Get("grant_type") == "refresh_token" {
			refreshes++
			if f.Get("resource") != e.rs.Resource {
				t.Errorf("refresh resource %q", f.Get("resource"))
			}
		}
	}
	if refreshes != 2 {
		t.Errorf("%d refreshes, want 2", refreshes)
	}
}

func TestStepUp(t *testing.T) {
	e := newEnv(t, oauthtest.Options{}, func(rs *oauthtest.Resource) {
		rs.ChallengeScope = "tools:read"
		rs.Required = map[string][]string{"tools/call": {"tools:write"}}
	})
	a := newAuthorizer(t, e.config())
	c := mustConnect(t, e.endpoint, a)
	echoOK(t, c)
	if n := len(e.as.Authorizations); n != 2 {
		t.Fatalf("%d authorizations, want 2", n)
	}
	if got := e.as.Authorizations[1].Get("scope"); got != "tools:read tools:write" {
		t.Errorf("step-up scope %q, want the union", got)
	}
}

func TestStepUpLimit(t *testing.T) {
	e := newEnv(t, oauthtest.Options{GrantScopes: func([]string) []string { return []string{"tools:read"} }}, func(rs *oauthtest.Resource) {
		rs.ChallengeScope = "tools:read"
		rs.Required = map[string][]string{"tools/call": {"tools:write"}}
	})
	a := newAuthorizer(t, e.config())
	c := mustConnect(t, e.endpoint, a)
	err := callEcho(t, c)
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusForbidden || !strings.Contains(te.WWWAuthenticate, "insufficient_scope") {
		t.Fatalf("got %v, want a 403 transport error with the challenge", err)
	}
	if n := len(e.as.Authorizations); n > 3 {
		t.Errorf("%d authorizations: the step-up is not limited", n)
	}
	if tok := a.Token(context.Background()); strings.Contains(err.Error(), tok.AccessToken) {
		t.Error("the error shows the token")
	}
}

func TestPreRegisteredAndClientCredentials(t *testing.T) {
	e := newEnv(t, oauthtest.Options{NoRegistration: true, Clients: map[string]string{"machine": "s3cret-value"}}, nil)
	cfg := e.config()
	cfg.UserAgent = nil
	cfg.Grant = oauth.ClientCredentials{}
	cfg.ClientID, cfg.ClientSecret = "machine", "s3cret-value"
	a := newAuthorizer(t, cfg)
	c := mustConnect(t, e.endpoint, a)
	echoOK(t, c)
	f := e.as.TokenRequests[0]
	if f.Get("grant_type") != "client_credentials" || f.Get("resource") != e.rs.Resource || f.Get("client_secret") != "" {
		t.Errorf("token request %v (want basic authentication, not the secret in the body)", f)
	}
}

func TestTokenNotSentToAnotherResource(t *testing.T) {
	e := newEnv(t, oauthtest.Options{}, nil)
	a := newAuthorizer(t, e.config())
	mustConnect(t, e.endpoint, a)
	if a.Token(context.Background()) == nil {
		t.Fatal("no token")
	}
	for _, other := range []string{"http://127.0.0.1:1/mcp", strings.Replace(e.endpoint, "/mcp", "/other", 1), "https://evil.example.com/mcp"} {
		req, _ := http.NewRequest(http.MethodPost, other, nil)
		req.Header.Set("Authorization", "Bearer stale")
		if err := a.Authorize(req); err != nil {
			t.Fatal(err)
		}
		if h := req.Header.Get("Authorization"); h != "" {
			t.Errorf("a request to %s carries %q", other, h)
		}
	}
}

func TestStoredTokenForAnotherResourceIgnored(t *testing.T) {
	e := newEnv(t, oauthtest.Options{}, nil)
	store := &oauth.MemoryStore{}
	key, _ := oauth.CanonicalResource(e.endpoint)
	_ = store.Save(context.Background(), key, &oauth.Token{AccessToken: "foreign-token", TokenType: "Bearer", Resource: "https://other.example.com/mcp"})
	cfg := e.config()
	cfg.Store = store
	a := newAuthorizer(t, cfg)
	mustConnect(t, e.endpoint, a)
	for _, h := range e.rs.Seen() {
		if strings.Contains(h, "foreign-token") {
			t.Fatal("a token bound to another resource was sent")
		}
	}
}

func TestRejectedTokenNotInError(t *testing.T) {
	e := newEnv(t, oauthtest.Options{NoRefreshTokens: true}, nil)
	a := newAuthorizer(t, e.config())
	c := mustConnect(t, e.endpoint, a)
	tok := a.Token(context.Background())
	// Every token is now refused: the client re-authorizes a bounded
	// number of times and fails without showing the token.
	e.rs.SetResource("https://elsewhere.example.com/mcp")
	err := callEcho(t, c)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), tok.AccessToken) {
		t.Errorf("the error %q shows the token", err)
	}
}

func TestLoginAndLogout(t *testing.T) {
	e := newEnv(t, oauthtest.Options{}, nil)
	store := &oauth.FileStore{Dir: t.TempDir() + "/tokens"}
	cfg := e.config()
	cfg.Store = store
	a := newAuthorizer(t, cfg)
	if err := a.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A second Authorizer (the next run of the CLI) uses the stored token.
	b := newAuthorizer(t, cfg)
	c := mustConnect(t, e.endpoint, b)
	echoOK(t, c)
	if n, _, _ := e.as.Counts(); n != 1 {
		t.Errorf("%d authorizations, want 1 (the stored token reused)", n)
	}
	if err := b.Logout(context.Background()); err != nil {
		t.Fatal(err)
	}
	key, _ := oauth.CanonicalResource(e.endpoint)
	if tok, _ := store.Load(context.Background(), key); tok != nil {
		t.Error("the token survived Logout")
	}
}

func TestRegistrationOrder(t *testing.T) {
	// A Client ID Metadata Document where the server accepts them: no
	// dynamic registration.
	e := newEnv(t, oauthtest.Options{CIMD: true}, nil)
	cfg := e.config()
	cfg.ClientMetadataURL = "https://client.example.com/toolwire.json"
	a := newAuthorizer(t, cfg)
	mustConnect(t, e.endpoint, a)
	if _, _, regs := e.as.Counts(); regs != 0 || e.as.Authorizations[0].Get("client_id") != cfg.ClientMetadataURL {
		t.Errorf("registrations %d, client_id %q", regs, e.as.Authorizations[0].Get("client_id"))
	}
	// Pre-registered credentials bound to another issuer are not used.
	e = newEnv(t, oauthtest.Options{}, nil)
	cfg = e.config()
	cfg.ClientID, cfg.ClientSecret, cfg.ClientIssuer = "pre", "pre-secret", "https://other-as.example.com"
	a = newAuthorizer(t, cfg)
	mustConnect(t, e.endpoint, a)
	if _, _, regs := e.as.Counts(); regs != 1 || e.as.Authorizations[0].Get("client_id") == "pre" {
		t.Errorf("pre-registered credentials of another issuer were used")
	}
}
