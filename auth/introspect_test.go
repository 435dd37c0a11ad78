package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testclock"
)

// testIntrospector is an RFC 7662 endpoint answering from a table.
type testIntrospector struct {
	srv *httptest.Server
	mu  sync.Mutex
	ans map[string]map[string]any // token -> answer
	hit map[string]int
	bad bool // answer 500
}

func newTestIntrospector(t *testing.T) *testIntrospector {
	ti := &testIntrospector{ans: map[string]map[string]any{}, hit: map[string]int{}}
	ti.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != "rs%3Aclient" || secret != "s%26cret" {
			// RFC 6749 2.3.1: both form-urlencoded before Basic.
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		tok := r.PostFormValue("token")
		ti.mu.Lock()
		defer ti.mu.Unlock()
		ti.hit[tok]++
		if ti.bad {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		a, ok := ti.ans[tok]
		if !ok {
			a = map[string]any{"active": false}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(ti.srv.Close)
	return ti
}

func (ti *testIntrospector) set(tok string, a map[string]any) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.ans[tok] = a
}

func (ti *testIntrospector) hits(tok string) int {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return ti.hit[tok]
}

func activeAnswer(kv ...any) map[string]any {
	return oauthtest.WithClaims(map[string]any{"active": true, "sub": "ada", "scope": "tools:call", "iss": "https://as.example.com",
		"aud": testAudience, "exp": testNow.Add(time.Hour).Unix(), "client_id": "app"}, kv...)
}

func newTestIntrospection(t *testing.T, ti *testIntrospector, clock *testclock.Clock, opts ...auth.IntrospectionOption) *auth.IntrospectionVerifier {
	t.Helper()
	v, err := auth.NewIntrospectionVerifier(ti.srv.URL, testAudience, append([]auth.IntrospectionOption{
		auth.WithClientCredentials("rs:client", "s&cret"), auth.WithIssuer("https://as.example.com"), auth.WithClock(clock.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestIntrospectionAcceptsAndCaches(t *testing.T) {
	ti := newTestIntrospector(t)
	ti.set("tok-a", activeAnswer())
	clock := newClock()
	v := newTestIntrospection(t, ti, clock)
	ctx := context.Background()
	for range 3 {
		p, err := v.Verify(ctx, "tok-a")
		if err != nil {
			t.Fatal(err)
		}
		if p.Subject != "ada" || p.Issuer != "https://as.example.com" || !p.HasScope("tools:call") || p.Claims["client_id"] != "app" {
			t.Fatalf("principal = %+v", p)
		}
	}
	if n := ti.hits("tok-a"); n != 1 {
		t.Fatalf("introspected %d times within the TTL", n)
	}
	clock.Advance(auth.DefaultIntrospectionTTL)
	if _, err := v.Verify(ctx, "tok-a"); err != nil {
		t.Fatal(err)
	}
	if n := ti.hits("tok-a"); n != 2 {
		t.Fatalf("introspected %d times; want 2 after the TTL", n)
	}
	// Revoked: the cached answer holds until the TTL, then it is refused.
	ti.set("tok-a", map[string]any{"active": false})
	if _, err := v.Verify(ctx, "tok-a"); err != nil {
		t.Fatalf("within the TTL: %v", err)
	}
	clock.Advance(auth.DefaultIntrospectionTTL)
	if _, err := v.Verify(ctx, "tok-a"); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("revoked: %v", err)
	}
}

func TestIntrospectionCacheNeverOutlivesExp(t *testing.T) {
	ti := newTestIntrospector(t)
	ti.set("short", activeAnswer("exp", testNow.Add(10*time.Second).Unix()))
	clock := newClock()
	v := newTestIntrospection(t, ti, clock, auth.WithLimits(auth.Limits{ClockSkew: -1}))
	ctx := context.Background()
	if _, err := v.Verify(ctx, "short"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(9 * time.Second)
	if _, err := v.Verify(ctx, "short"); err != nil || ti.hits("short") != 1 {
		t.Fatalf("before exp: %v, %d requests", err, ti.hits("short"))
	}
	clock.Advance(time.Second)
	if _, err := v.Verify(ctx, "short"); !errors.Is(err, auth.ErrInvalidToken) || ti.hits("short") != 2 {
		t.Fatalf("at exp: %v, %d requests (want the cache entry gone)", err, ti.hits("short"))
	}
}

func TestIntrospectionInactiveCachedBriefly(t *testing.T) {
	ti := newTestIntrospector(t)
	clock := newClock()
	v := newTestIntrospection(t, ti, clock)
	ctx := context.Background()
	for range 5 {
		if _, err := v.Verify(ctx, "nope"); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatal(err)
		}
	}
	if n := ti.hits("nope"); n != 1 {
		t.Fatalf("inactive introspected %d times", n)
	}
	ti.set("nope", activeAnswer())
	clock.Advance(auth.DefaultInactiveTTL)
	if _, err := v.Verify(ctx, "nope"); err != nil {
		t.Fatalf("after the inactive TTL: %v", err)
	}
}

func TestIntrospectionRefuses(t *testing.T) {
	cases := []struct {
		name string
		ans  map[string]any
		want string
	}{
		{"inactive", map[string]any{"active": false, "sub": "ada"}, "not active"},
		{"wrong audience", activeAnswer("aud", "https://other.example.com"), "not meant for this resource"},
		{"wrong audience array", activeAnswer("aud", []string{"a", "b"}), "not meant for this resource"},
		{"wrong issuer", activeAnswer("iss", "https://evil.example.com"), "another issuer"},
		{"expired", activeAnswer("exp", testNow.Add(-2*time.Minute).Unix()), "expired"},
		{"not yet valid", activeAnswer("nbf", testNow.Add(2*time.Minute).Unix()), "not valid yet"},
		{"no subject", activeAnswer("sub", nil), "no subject"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ti := newTestIntrospector(t)
			ti.set("t", tc.ans)
			_, err := newTestIntrospection(t, ti, newClock()).Verify(context.Background(), "t")
			if !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify: %v; want invalid token saying %q", err, tc.want)
			}
		})
	}
	// Without aud or iss in the answer, the token is accepted.
	ti := newTestIntrospector(t)
	ti.set("t", activeAnswer("aud", nil, "iss", nil))
	if _, err := newTestIntrospection(t, ti, newClock()).Verify(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
}

func TestIntrospectionUnavailableNotCached(t *testing.T) {
	ti := newTestIntrospector(t)
	ti.set("t", activeAnswer())
	ti.bad = true
	v := newTestIntrospection(t, ti, newClock())
	for range 2 {
		if _, err := v.Verify(context.Background(), "t"); !errors.Is(err, auth.ErrUnavailable) {
			t.Fatalf("endpoint down: %v", err)
		}
	}
	if n := ti.hits("t"); n != 2 {
		t.Fatalf("a failure was cached: %d requests", n)
	}
	// Wrong client credentials: the endpoint says 401, which is ours to fix.
	v2, _ := auth.NewIntrospectionVerifier(ti.srv.URL, testAudience, auth.WithClientCredentials("x", "y"))
	if _, err := v2.Verify(context.Background(), "t"); !errors.Is(err, auth.ErrUnavailable) {
		t.Fatalf("bad client credentials: %v", err)
	}
	// An answer without "active" is not an answer.
	ti.bad = false
	ti.set("t2", map[string]any{"sub": "ada"})
	if _, err := v.Verify(context.Background(), "t2"); !errors.Is(err, auth.ErrUnavailable) {
		t.Fatalf("no active member: %v", err)
	}
	// Nor is one naming a member twice: which "active" would count?
	rawSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"active":false,"sub":"ada","active":true}`))
	}))
	t.Cleanup(rawSrv.Close)
	vd, err := auth.NewIntrospectionVerifier(rawSrv.URL, testAudience)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vd.Verify(context.Background(), "t"); !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), `duplicate member name "active"`) {
		t.Fatalf("duplicate active member: %v", err)
	}
	// Nor is one past the size limit.
	ti.set("t3", activeAnswer("pad", strings.Repeat("x", 3000)))
	v3 := newTestIntrospection(t, ti, newClock(), auth.WithLimits(auth.Limits{MaxResponseBytes: 2048}))
	if _, err := v3.Verify(context.Background(), "t3"); !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), "larger than 2048") {
		t.Fatalf("oversized answer: %v", err)
	}
}

func TestIntrospectionCacheBounded(t *testing.T) {
	ti := newTestIntrospector(t)
	for i := range 4 {
		ti.set(fmt.Sprint("t", i), activeAnswer())
	}
	v := newTestIntrospection(t, ti, newClock(), auth.WithLimits(auth.Limits{MaxIntrospections: 2}))
	ctx := context.Background()
	for _, tok := range []string{"t0", "t1", "t2", "t1", "t0"} {
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	// t0 was evicted by t2 (least recently used), t1 was not.
	if ti.hits("t0") != 2 || ti.hits("t1") != 1 || ti.hits("t2") != 1 {
		t.Fatalf("hits t0=%d t1=%d t2=%d", ti.hits("t0"), ti.hits("t1"), ti.hits("t2"))
	}
	if n, _ := auth.CachedTokens(v); n != 2 {
		t.Fatalf("%d entries cached, limit 2", n)
	}
	_, keys := auth.CachedTokens(v)
	for _, k := range keys {
		if strings.Contains(string(k[:]), "t0") {
			t.Fatal("the cache keeps the token")
		}
	}
}
