package oauth_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/oauth"
)

// The SSRF guard and the https rule, with metadata documents that point at
// private, link-local and plain-http addresses: discovery refuses them,
// nothing is fetched there, and the error says why.
func TestSSRFGuardRefusesMetadataPointingAtPrivateAddresses(t *testing.T) {
	for _, tc := range []struct{ name, as string }{
		{"private", "https://10.0.0.1"},
		{"link-local metadata service", "https://169.254.169.254"},
		{"http on a non-loopback host", "http://as.example.com"},
		{"unspecified", "https://0.0.0.0"},
		{"multicast", "https://224.0.0.1"},
		{"private IPv6", "https://[fd00::1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, oauthtest.Options{}, func(rs *oauthtest.Resource) {
				rs.AuthorizationServers = []string{tc.as}
			})
			a := newAuthorizer(t, e.config())
			_, err := connect(t, e.endpoint, a)
			if !errors.Is(err, oauth.ErrUnsafeURL) {
				t.Fatalf("got %v, want a refusal wrapping ErrUnsafeURL", err)
			}
			if n, _, _ := e.as.Counts(); n != 0 {
				t.Error("the flow went on")
			}
		})
	}
}

// An authorization server (on loopback, like the MCP endpoint) whose
// metadata names endpoints at private addresses, or whose PRM URL in the
// challenge points at one.
func TestSSRFGuardRefusesPrivateEndpointsInMetadata(t *testing.T) {
	var asURL string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": asURL, "authorization_endpoint": "https://192.168.1.10/authorize",
			"token_endpoint": "https://169.254.169.254/token", "code_challenge_methods_supported": []string{"S256"},
		})
	}))
	defer as.Close()
	asURL = as.URL
	var mcpURL string
	mcp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": mcpURL, "authorization_servers": []string{asURL}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer mcp.Close()
	mcpURL = mcp.URL + "/mcp"
	a := newAuthorizer(t, oauth.Config{Endpoint: mcpURL, UserAgent: oauth.NoRedirectUserAgent{}, RedirectURI: "http://127.0.0.1:1/cb"})
	_, err := connect(t, mcpURL, a)
	if !errors.Is(err, oauth.ErrUnsafeURL) || !strings.Contains(err.Error(), "192.168.1.10") && !strings.Contains(err.Error(), "169.254.169.254") {
		t.Fatalf("got %v, want the private endpoint refused", err)
	}

	// The challenge's resource_metadata URL pointing at the cloud metadata
	// service.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://169.254.169.254/latest/meta-data/"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer evil.Close()
	a, err = oauth.NewAuthorizer(oauth.Config{Endpoint: evil.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = connect(t, evil.URL+"/mcp", a)
	if !errors.Is(err, oauth.ErrUnsafeURL) {
		t.Fatalf("got %v, want the metadata URL refused", err)
	}
}

func TestEndpointMustBeHTTPSOrLoopback(t *testing.T) {
	if _, err := oauth.NewAuthorizer(oauth.Config{Endpoint: "http://mcp.example.com/mcp"}); !errors.Is(err, oauth.ErrUnsafeURL) {
		t.Errorf("http endpoint accepted: %v", err)
	}
	for _, ok := range []string{"https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://localhost/mcp"} {
		if _, err := oauth.NewAuthorizer(oauth.Config{Endpoint: ok}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestResourceMismatchRefused(t *testing.T) {
	e := newEnv(t, oauthtest.Options{}, func(rs *oauthtest.Resource) { rs.Resource = "https://evil.example.com/mcp" })
	a := newAuthorizer(t, e.config())
	if _, err := connect(t, e.endpoint, a); !errors.Is(err, oauth.ErrResourceMismatch) {
		t.Fatalf("got %v, want ErrResourceMismatch", err)
	}
	if n, _, _ := e.as.Counts(); n != 0 {
		t.Error("authorized against a mismatched resource")
	}
}

func TestIssuerAndIssChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts oauthtest.Options
		want error
	}{
		{"metadata issuer mismatch", oauthtest.Options{MetadataIssuer: "https://attacker.example.com"}, oauth.ErrIssuerMismatch},
		{"iss wrong", oauthtest.Options{IssInRedirect: "wrong"}, oauth.ErrIssMismatch},
		{"iss with a trailing slash", oauthtest.Options{IssSupported: true, IssInRedirect: "slash"}, oauth.ErrIssMismatch},
		{"iss advertised but missing", oauthtest.Options{IssSupported: true, IssInRedirect: "omit"}, oauth.ErrIssMismatch},
		{"no PKCE advertised", oauthtest.Options{NoPKCEAdvertised: true}, oauth.ErrNoPKCE},
		{"iss absent, not advertised", oauthtest.Options{IssInRedirect: "omit"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts, nil)
			a := newAuthorizer(t, e.config())
			_, err := connect(t, e.endpoint, a)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			for _, f := range e.as.TokenRequests {
				if f.Get("grant_type") == "authorization_code" {
					t.Error("the code was exchanged")
				}
			}
		})
	}
}

// Logout reaches the revocation endpoint only through the guard: one at
// the cloud metadata service is refused (nothing is sent there), the
// tokens are deleted all the same, and the error says both.
func TestSSRFGuardRefusesPrivateRevocationEndpoint(t *testing.T) {
	var asURL string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": asURL, "token_endpoint": asURL + "/token", "revocation_endpoint": "https://169.254.169.254/revoke",
		})
	}))
	defer as.Close()
	asURL = as.URL
	endpoint := "http://127.0.0.1:1/mcp"
	store := &oauth.MemoryStore{}
	key, _ := oauth.CanonicalResource(endpoint)
	ctx := t.Context()
	_ = store.Save(ctx, key, &oauth.Token{AccessToken: "at-1234", RefreshToken: "rt-1234", TokenType: "Bearer",
		Resource: endpoint, Issuer: asURL, Client: oauth.ClientInfo{ID: "c", Issuer: asURL}})
	a := newAuthorizer(t, oauth.Config{Endpoint: endpoint, Store: store})
	rep, err := a.LogoutReport(ctx)
	if !errors.Is(err, oauth.ErrNotRevoked) || !errors.Is(err, oauth.ErrUnsafeURL) || rep.Revoked || !strings.Contains(err.Error(), "169.254.169.254") {
		t.Fatalf("got %+v, %v; want the revocation endpoint refused", rep, err)
	}
	if tok, _ := store.Load(ctx, key); tok != nil {
		t.Fatal("the tokens survived Logout")
	}
}
