package oauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/auth"
)

// fakeSigner records the proofs asked of it.
type fakeSigner struct {
	mu    sync.Mutex
	calls []string // "method url token nonce"
}

func (f *fakeSigner) Proof(method, url, token, nonce string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, strings.Join([]string{method, url, token, nonce}, " "))
	return "proof-" + nonce, nil
}

func (f *fakeSigner) Thumbprint() string { return "jkt" }

// The DPoP hook on the resource side: a DPoP token goes out as
// "Authorization: DPoP" with a fresh proof naming the token; a 401
// use_dpop_nonce is retried once per new nonce, which the next proof
// carries.
func TestDPoPResourceRequests(t *testing.T) {
	signer := &fakeSigner{}
	store := &MemoryStore{}
	const endpoint = "https://mcp.example.com/mcp"
	_ = store.Save(context.Background(), endpoint, &Token{AccessToken: "bound", TokenType: "DPoP", Resource: endpoint})
	a, err := NewAuthorizer(Config{Endpoint: endpoint, DPoP: signer, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, endpoint+"?q=1", nil)
	if err := a.Authorize(req); err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Authorization") != "DPoP bound" || req.Header.Get("DPoP") != "proof-" {
		t.Fatalf("headers %v", req.Header)
	}
	if signer.calls[0] != "POST https://mcp.example.com/mcp bound " {
		t.Errorf("proof asked for %q (htu without the query, the token for ath)", signer.calls[0])
	}
	resp := &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{
		"Www-Authenticate": {`DPoP error="use_dpop_nonce", error_description="nonce"`}, "Dpop-Nonce": {"n1"}}}
	retry, err := a.Challenge(context.Background(), req, resp)
	if err != nil || !retry {
		t.Fatalf("nonce challenge: %v, %v", retry, err)
	}
	if err := a.Authorize(req); err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("DPoP") != "proof-n1" {
		t.Errorf("the retry's proof lacks the nonce: %q", req.Header.Get("DPoP"))
	}
	if retry, _ := a.Challenge(context.Background(), req, resp); retry {
		t.Error("the same nonce was retried again")
	}
	// The authorization request names the key.
	raw, _ := authorizationURL(&auth.AuthServerMetadata{AuthorizationEndpoint: "https://as/authorize"}, ClientInfo{ID: "c"}, "http://127.0.0.1:1/cb", nil, "s", newPKCE(), endpoint, signer)
	if !strings.Contains(raw, "dpop_jkt=jkt") {
		t.Errorf("%s", raw)
	}
}

// A DPoP token without a signer is not sent as a bearer token.
func TestDPoPTokenWithoutSigner(t *testing.T) {
	store := &MemoryStore{}
	const endpoint = "https://mcp.example.com/mcp"
	_ = store.Save(context.Background(), endpoint, &Token{AccessToken: "bound", TokenType: "DPoP", Resource: endpoint})
	a, _ := NewAuthorizer(Config{Endpoint: endpoint, Store: store})
	req := httptest.NewRequest(http.MethodPost, endpoint, nil)
	if err := a.Authorize(req); err == nil || req.Header.Get("Authorization") != "" {
		t.Errorf("err %v, Authorization %q", err, req.Header.Get("Authorization"))
	}
}

func TestSelectScopes(t *testing.T) {
	a, _ := NewAuthorizer(Config{Endpoint: "https://m/mcp"})
	md := &auth.AuthServerMetadata{ScopesSupported: []string{"offline_access"}}
	prm := &auth.ResourceMetadata{ScopesSupported: []string{"a", "b"}}
	for _, tc := range []struct {
		challenged string
		prm        *auth.ResourceMetadata
		md         *auth.AuthServerMetadata
		cur        *Token
		stepUp     bool
		want       string
	}{
		{"x y", prm, &auth.AuthServerMetadata{}, nil, false, "x y"},
		{"", prm, &auth.AuthServerMetadata{}, nil, false, "a b"},
		{"", nil, &auth.AuthServerMetadata{}, nil, false, ""},
		{"", &auth.ResourceMetadata{}, md, nil, false, ""},
		{"", prm, md, nil, false, "a b offline_access"},
		{"w", prm, &auth.AuthServerMetadata{}, &Token{Scopes: []string{"r", "w"}}, true, "r w"},
	} {
		got := strings.Join(a.selectScopes(tc.challenged, tc.prm, tc.md, tc.cur, tc.stepUp), " ")
		if got != tc.want {
			t.Errorf("selectScopes(%q) = %q, want %q", tc.challenged, got, tc.want)
		}
	}
}

// An expired token is refreshed before it is sent only when the clock
// says so (no wall-clock assertion: the clock is injected).
func TestExpiry(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tok := &Token{Expiry: now.Add(2 * time.Minute)}
	if tok.expired(now) || !tok.expired(now.Add(time.Minute+time.Second)) || (&Token{}).expired(now) {
		t.Error("expiry margin")
	}
}
