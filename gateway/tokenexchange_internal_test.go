package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// exchangeEndpoint is a token endpoint answering token exchanges with a
// token naming the subject token and a count, expiring in expiresIn
// seconds; a subject token "refused" gets invalid_grant.
func exchangeEndpoint(t *testing.T, expiresIn int) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var subjects []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" ||
			r.PostForm.Get("subject_token_type") != tokenTypeAccessToken {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		if id, secret, ok := r.BasicAuth(); !ok || id != "gw" || secret != "gw-secret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		sub := r.PostForm.Get("subject_token")
		mu.Lock()
		subjects = append(subjects, sub)
		n := len(subjects)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if sub == "refused" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"bad subject token %s"}`, sub)
			return
		}
		fmt.Fprintf(w, `{"access_token":"x-%s-%d-%s","issued_token_type":%q,"token_type":"Bearer","expires_in":%d}`,
			sub, n, r.PostForm.Get("resource"), tokenTypeAccessToken, expiresIn)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), subjects...)
	}
}

// TestExchangerCachesPerCallerWithinItsBound: a caller's token is
// exchanged once and reused; another token of the same caller, or another
// caller, is exchanged on its own; past the bound the least recently used
// goes; a token too short-lived to outlast the skew is not kept; a refusal
// never quotes the subject token.
func TestExchangerCachesPerCallerWithinItsBound(t *testing.T) {
	srv, subjects := exchangeEndpoint(t, 3600)
	x := &exchanger{spec: TokenExchange{TokenEndpoint: srv.URL, ClientID: "gw", ClientSecret: "gw-secret"},
		upstream: "up", url: "https://up.example.com/mcp", max: 2, endpoint: srv.URL}
	x.init()
	ctx := context.Background()
	get := func(who, tok string) string {
		t.Helper()
		got, err := x.token(ctx, who, tok)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	a1 := get("alice", "ta")
	if a2 := get("alice", "ta"); a2 != a1 || !strings.HasSuffix(a1, "-https://up.example.com/mcp") {
		t.Fatalf("alice's second token %q, first %q", a2, a1)
	}
	get("alice", "ta2") // a new token of hers: exchanged
	get("bob", "tb")    // past the bound of 2: alice's ta (least recently used) goes
	if n := x.cached(); n != 2 {
		t.Fatalf("%d tokens kept, want 2", n)
	}
	get("alice", "ta")
	if got := strings.Join(subjects(), ","); got != "ta,ta2,tb,ta" {
		t.Errorf("exchanged subject tokens: %s", got)
	}

	short, subjects2 := exchangeEndpoint(t, 10)
	y := &exchanger{spec: TokenExchange{TokenEndpoint: short.URL, ClientID: "gw", ClientSecret: "gw-secret"}, max: 4, endpoint: short.URL}
	y.init()
	for range 2 {
		if _, err := y.token(ctx, "carol", "tc"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(subjects2()); n != 2 || y.cached() != 0 {
		t.Errorf("a 10 s token: %d exchanges, %d kept; want 2 and 0", n, y.cached())
	}

	_, err := x.token(ctx, "mallory", "refused")
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") || strings.Contains(err.Error(), "refused") {
		t.Errorf("a refused exchange: %v", err)
	}
}

// staticAuth is an HTTPAuth that sets the upstream's own token.
type staticAuth struct{ challenged int }

func (a *staticAuth) Authorize(req *http.Request) error {
	req.Header.Set("Authorization", "Bearer the-gateways-own")
	return nil
}

func (a *staticAuth) Challenge(context.Context, *http.Request, *http.Response) (bool, error) {
	a.challenged++
	return true, nil
}

// TestExchangeAuthUsesTheExchangedTokenAlone: a request carrying a
// caller's exchanged token is sent with it, whatever the upstream's own
// credentials, and a refusal of it is never answered with them; every
// other request (the gateway's own, an API-key caller's under
// on_api_key: static) goes with the upstream's own.
func TestExchangeAuthUsesTheExchangedTokenAlone(t *testing.T) {
	static := &staticAuth{}
	a := exchangeAuth{static: static}
	req := httptest.NewRequest(http.MethodPost, "http://up/mcp", nil)
	req.Header.Set("Authorization", "Bearer from-headers")
	caller := req.WithContext(context.WithValue(req.Context(), bearerKey{}, "exchanged-for-alice"))
	if err := a.Authorize(caller); err != nil || caller.Header.Get("Authorization") != "Bearer exchanged-for-alice" {
		t.Fatalf("a caller's request: %q %v", caller.Header.Get("Authorization"), err)
	}
	if retry, err := a.Challenge(caller.Context(), caller, &http.Response{StatusCode: http.StatusUnauthorized}); retry || err != nil || static.challenged != 0 {
		t.Fatalf("a refused exchanged token was retried (%v %v, static challenged %d)", retry, err, static.challenged)
	}
	own := httptest.NewRequest(http.MethodPost, "http://up/mcp", nil)
	if err := a.Authorize(own); err != nil || own.Header.Get("Authorization") != "Bearer the-gateways-own" {
		t.Fatalf("the gateway's own request: %q %v", own.Header.Get("Authorization"), err)
	}
	if retry, _ := a.Challenge(own.Context(), own, &http.Response{StatusCode: http.StatusUnauthorized}); !retry || static.challenged != 1 {
		t.Fatal("the gateway's own request's challenge did not reach its own credentials")
	}
	bare := exchangeAuth{}
	plain := httptest.NewRequest(http.MethodPost, "http://up/mcp", nil)
	plain.Header.Set("Authorization", "Bearer from-headers")
	if err := bare.Authorize(plain); err != nil || plain.Header.Get("Authorization") != "Bearer from-headers" {
		t.Fatalf("without an Auth, the configured header stays: %q %v", plain.Header.Get("Authorization"), err)
	}
}

// TestExchangerFindsTheTokenEndpointFromTheIssuer: with an issuer, the
// token endpoint is the one its RFC 8414 metadata names (the well-known
// path before the issuer's own path), read once; metadata naming another
// issuer is refused.
func TestExchangerFindsTheTokenEndpointFromTheIssuer(t *testing.T) {
	tokens, _ := exchangeEndpoint(t, 3600)
	var mu sync.Mutex
	var paths []string
	var issuer string
	md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q,"response_types_supported":["code"]}`, issuer, tokens.URL)
	}))
	t.Cleanup(md.Close)
	issuer = md.URL + "/tenant"
	x := &exchanger{spec: TokenExchange{Issuer: issuer, ClientID: "gw", ClientSecret: "gw-secret"}, max: 4}
	x.init()
	for _, tok := range []string{"t1", "t2"} {
		if _, err := x.token(context.Background(), "alice", tok); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(paths, ",") != "/.well-known/oauth-authorization-server/tenant" {
		t.Errorf("metadata requests: %v", paths)
	}
	y := &exchanger{spec: TokenExchange{Issuer: md.URL + "/other", ClientID: "gw", ClientSecret: "gw-secret"}, max: 4}
	y.init()
	if _, err := y.token(context.Background(), "alice", "t1"); err == nil || !strings.Contains(err.Error(), "another issuer") {
		t.Errorf("metadata of another issuer: %v", err)
	}
}

// TestExchangerOnceForConcurrentCalls: a caller's concurrent calls share
// one exchange.
func TestExchangerOnceForConcurrentCalls(t *testing.T) {
	srv, subjects := exchangeEndpoint(t, 3600)
	x := &exchanger{spec: TokenExchange{TokenEndpoint: srv.URL, ClientID: "gw", ClientSecret: "gw-secret"}, max: 4, endpoint: srv.URL}
	x.init()
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = x.token(context.Background(), "alice", "ta")
		}()
	}
	wg.Wait()
	for _, g := range got {
		if g == "" || g != got[0] {
			t.Fatalf("tokens: %q", got)
		}
	}
	if n := len(subjects()); n != 1 {
		t.Errorf("%d exchanges for one caller's 8 concurrent calls, want 1", n)
	}
}
