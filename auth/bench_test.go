package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/auth"
)

// BenchmarkVerifyJWT is the cost of checking one access token once its
// issuer's keys are cached: in full (signature, iss, aud, exp/nbf/iat,
// scopes: a token seen for the first time) and again (a token verified
// less than the verified-token TTL ago).
// `go test -run XXX -bench 'VerifyJWT|Require' -benchmem ./auth`.
func BenchmarkVerifyJWT(b *testing.B) {
	for _, c := range []struct {
		alg, mode string
		cache     auth.JWTOption
	}{
		{"RS256", "full", auth.WithLimits(auth.Limits{VerifiedTokenTTL: -1})},
		{"RS256", "again", nil},
		{"ES256", "full", auth.WithLimits(auth.Limits{VerifiedTokenTTL: -1})},
		{"ES256", "again", nil},
	} {
		alg := c.alg
		b.Run(alg+"/"+c.mode, func(b *testing.B) {
			iss := newTestIssuer(b)
			kid := "k1"
			if alg == "ES256" {
				kid = "ec"
				iss.addKey(kid, newECKey(b), true)
			}
			v := newTestVerifier(b, iss, newClock(), c.cache)
			tok := iss.mint(b, kid, alg, iss.claims(testAudience))
			ctx := context.Background()
			if _, err := v.Verify(ctx, tok); err != nil { // warms the key cache
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := v.Verify(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRequire is what the bearer middleware adds to one HTTP request
// with a valid RS256 token (header parsing, verification, the principal on
// the context), against the same request with no middleware.
func BenchmarkRequire(b *testing.B) {
	iss := newTestIssuer(b)
	v := newTestVerifier(b, iss, newClock())
	tok := iss.mint(b, "k1", "", iss.claims(testAudience))
	var sawPrincipal bool
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawPrincipal = auth.PrincipalFrom(r.Context()) != nil
		w.WriteHeader(http.StatusNoContent)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"none", next},
		{"bearer", auth.Require(v, auth.WithResourceMetadata("https://mcp.example.com/.well-known/oauth-protected-resource/mcp"), auth.WithScopes("tools:call"))(next)},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			w := httptest.NewRecorder()
			c.h.ServeHTTP(w, req)
			if w.Code != http.StatusNoContent || sawPrincipal != (c.name == "bearer") {
				b.Fatalf("status %d, principal %v: %s", w.Code, sawPrincipal, w.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, req)
			}
		})
	}
}
