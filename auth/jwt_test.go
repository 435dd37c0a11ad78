package auth_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testclock"
)

const testAudience = "https://mcp.example.com/mcp"

func newTestVerifier(t testing.TB, iss *testIssuer, clock *testclock.Clock, opts ...auth.JWTOption) *auth.JWTVerifier {
	t.Helper()
	v, err := auth.NewJWTVerifier(iss.url, testAudience, append([]auth.JWTOption{auth.WithClock(clock.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestJWTVerifierAccepts(t *testing.T) {
	iss := newTestIssuer(t)
	v := newTestVerifier(t, iss, newClock())
	ctx := context.Background()
	p, err := v.Verify(ctx, iss.mint(t, "k1", "", iss.claims(testAudience)))
	if err != nil {
		t.Fatal(err)
	}
	if p.Issuer != iss.url || p.Subject != "ada" || !slices.Equal(p.Scopes, []string{"tools:call", "files:read"}) || p.Claims["sub"] != "ada" {
		t.Fatalf("principal = %+v", p)
	}
	// scp as an array, aud as an array, typ JWT.
	c := oauthtest.WithClaims(iss.claims(testAudience), "scope", nil, "scp", []string{"a", "b"}, "aud", []string{"other", testAudience})
	tok := oauthtest.SignJWT(t, jose.RS256, oauthtest.RSAKeys(t)[0], "k1", "JWT", c)
	if p, err = v.Verify(ctx, tok); err != nil || !slices.Equal(p.Scopes, []string{"a", "b"}) {
		t.Fatalf("scp token: %+v, %v", p, err)
	}
	// No typ at all, no kid: every key of the set is tried.
	tok = oauthtest.SignJWT(t, jose.RS256, oauthtest.RSAKeys(t)[0], "", "", iss.claims(testAudience))
	if _, err = v.Verify(ctx, tok); err != nil {
		t.Fatalf("token without typ and kid: %v", err)
	}
	// An EC key.
	iss.addKey("ec", newECKey(t), true)
	v2 := newTestVerifier(t, iss, newClock())
	if _, err := v2.Verify(ctx, iss.mint(t, "ec", "ES256", iss.claims(testAudience))); err != nil {
		t.Fatalf("ES256: %v", err)
	}
}

func TestJWTVerifierRefuses(t *testing.T) {
	iss := newTestIssuer(t)
	good := iss.claims(testAudience)
	skew := auth.DefaultClockSkew
	pub := &oauthtest.RSAKeys(t)[0].PublicKey
	other := oauthtest.RSAKeys(t)[1]
	cases := []struct {
		name, token, want string
	}{
		{"expired", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "exp", testNow.Add(-skew-time.Second).Unix())), "expired"},
		{"not yet valid", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "nbf", testNow.Add(skew+time.Second).Unix())), "not valid yet"},
		{"issued in the future", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "iat", testNow.Add(skew+time.Second).Unix())), "future"},
		{"wrong issuer", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "iss", "https://evil.example.com")), "another issuer"},
		{"wrong audience", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "aud", "https://other.example.com/mcp")), "not meant for this resource"},
		{"no audience", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "aud", nil)), "not meant for this resource"},
		{"no subject", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "sub", nil)), "no subject"},
		{"no expiry", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "exp", nil)), "no expiry"},
		{"scope not a string", iss.mint(t, "k1", "", oauthtest.WithClaims(good, "scope", []string{"a"})), "scope claim"},
		{"alg none", unsignedJWT(good), "accepted algorithm"},
		{"HS256 with the public key", hmacWithPublicKey(t, pub, good), "accepted algorithm"},
		{"signed by another key", oauthtest.SignJWT(t, jose.RS256, other, "k1", "at+jwt", good), "does not verify"},
		{"id token typ", oauthtest.SignJWT(t, jose.RS256, oauthtest.RSAKeys(t)[0], "k1", "id_token+jwt", good), "typ"},
		{"garbage", "abc.def.ghi", "accepted algorithm"},
		{"tampered payload", tamper(iss.mint(t, "k1", "", good)), "does not verify"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newTestVerifier(t, iss, newClock())
			p, err := v.Verify(context.Background(), tc.token)
			if !errors.Is(err, auth.ErrInvalidToken) || p != nil {
				t.Fatalf("Verify = %+v, %v; want auth.ErrInvalidToken", p, err)
			}
			var te *auth.TokenError
			if !errors.As(err, &te) || !strings.Contains(te.Description, tc.want) {
				t.Fatalf("error %q, want it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), tc.token) {
				t.Fatal("the error contains the token")
			}
		})
	}
}

// tamper changes the payload's subject and keeps the signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	parts[1] = parts[1][:len(parts[1])-2] + "AA"
	return strings.Join(parts, ".")
}

func TestJWTClockSkew(t *testing.T) {
	iss := newTestIssuer(t)
	c := iss.claims(testAudience)
	expired30s := iss.mint(t, "k1", "", oauthtest.WithClaims(c, "exp", testNow.Add(-30*time.Second).Unix()))
	early30s := iss.mint(t, "k1", "", oauthtest.WithClaims(c, "nbf", testNow.Add(30*time.Second).Unix(), "iat", testNow.Add(30*time.Second).Unix()))
	v := newTestVerifier(t, iss, newClock())
	for _, tok := range []string{expired30s, early30s} {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatalf("within the default skew: %v", err)
		}
	}
	strict := newTestVerifier(t, iss, newClock(), auth.WithLimits(auth.Limits{ClockSkew: 10 * time.Second}))
	for _, tok := range []string{expired30s, early30s} {
		if _, err := strict.Verify(context.Background(), tok); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("past a 10 s skew: %v", err)
		}
	}
	clock := newClock()
	v = newTestVerifier(t, iss, clock)
	tok := iss.mint(t, "k1", "", c) // exp at testNow+1h
	clock.Advance(time.Hour + auth.DefaultClockSkew - time.Second)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("just before exp+skew: %v", err)
	}
	clock.Advance(time.Second)
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("at exp+skew: %v", err)
	}
}

func TestJWTAlgorithmsOption(t *testing.T) {
	iss := newTestIssuer(t)
	for _, bad := range []string{"none", "HS256", "HS384", "HS512", "RS1"} {
		if _, err := auth.NewJWTVerifier(iss.url, testAudience, auth.WithAlgorithms(bad)); err == nil {
			t.Errorf("WithAlgorithms(%q) accepted", bad)
		}
	}
	v := newTestVerifier(t, iss, newClock(), auth.WithAlgorithms("ES256"))
	if _, err := v.Verify(context.Background(), iss.mint(t, "k1", "RS256", iss.claims(testAudience))); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("RS256 with only ES256 allowed: %v", err)
	}
	if md, jwks := iss.hits(); md+jwks != 0 {
		t.Fatalf("a token with a refused algorithm made %d fetches", md+jwks)
	}
}

func TestJWKSUnknownKidRefreshIsRateLimited(t *testing.T) {
	iss := newTestIssuer(t)
	clock := newClock()
	v := newTestVerifier(t, iss, clock, auth.WithLimits(auth.Limits{MinJWKSRefreshInterval: time.Minute}))
	ctx := context.Background()
	if _, err := v.Verify(ctx, iss.mint(t, "k1", "", iss.claims(testAudience))); err != nil {
		t.Fatal(err)
	}
	_, jwks0 := iss.hits()
	if jwks0 != 1 {
		t.Fatalf("JWKS fetched %d times for the first token", jwks0)
	}
	// An attacker's random kids, all within the interval: the first one
	// after it has passed refetches, the others are refused from cache.
	for i := range 50 {
		if i == 10 {
			clock.Advance(time.Minute)
		}
		_, err := v.Verify(ctx, iss.mint(t, fmt.Sprintf("random-%d", i), "", iss.claims(testAudience)))
		if !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("random kid %d: %v", i, err)
		}
	}
	if _, jwks := iss.hits(); jwks != 2 {
		t.Fatalf("JWKS fetched %d times; want 2 (the first token, one refresh past the interval)", jwks)
	}
	// A known kid never fetches.
	if _, err := v.Verify(ctx, iss.mint(t, "k1", "", iss.claims(testAudience))); err != nil {
		t.Fatal(err)
	}
	if _, jwks := iss.hits(); jwks != 2 {
		t.Fatalf("a known kid made a fetch")
	}
}

func TestJWKSKeyRotation(t *testing.T) {
	iss := newTestIssuer(t)
	clock := newClock()
	// Without the verified-token cache: what the key set alone decides.
	v := newTestVerifier(t, iss, clock, auth.WithLimits(auth.Limits{VerifiedTokenTTL: -1}))
	ctx := context.Background()
	if _, err := v.Verify(ctx, iss.mint(t, "k1", "", iss.claims(testAudience))); err != nil {
		t.Fatal(err)
	}
	// The issuer rotates to k2 right away: tokens signed with it are
	// refused until the refresh interval has passed since the last fetch,
	// then the new set is fetched and they pass; k1 is gone.
	iss.addKey("k2", oauthtest.RSAKeys(t)[1], false)
	iss.publish("k2")
	k2 := iss.mint(t, "k2", "", iss.claims(testAudience))
	if _, err := v.Verify(ctx, k2); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("k2 within the interval: %v", err)
	}
	clock.Advance(auth.DefaultJWKSRefreshInterval)
	if _, err := v.Verify(ctx, k2); err != nil {
		t.Fatalf("k2 after the interval: %v", err)
	}
	if _, err := v.Verify(ctx, iss.mint(t, "k1", "", iss.claims(testAudience))); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("k1 after rotation: %v", err)
	}
	// Past the max age the set is fetched again even for a known kid.
	_, before := iss.hits()
	clock.Advance(auth.DefaultJWKSMaxAge)
	c := iss.claims(testAudience)
	c["exp"] = clock.Now().Add(time.Hour).Unix()
	if _, err := v.Verify(ctx, iss.mint(t, "k2", "", c)); err != nil {
		t.Fatal(err)
	}
	if _, after := iss.hits(); after != before+1 {
		t.Fatalf("stale set: %d fetches, want 1", after-before)
	}
}

// A verified token is taken again without its checks for the cache's TTL,
// never past its exp; a withdrawn key stops it once the TTL has passed;
// refused tokens are not remembered; the cache keeps at most its size.
func TestVerifiedTokenCache(t *testing.T) {
	iss := newTestIssuer(t)
	clock := newClock()
	v := newTestVerifier(t, iss, clock, auth.WithLimits(auth.Limits{VerifiedTokenTTL: time.Minute, MaxVerifiedTokens: 2, ClockSkew: time.Second}))
	ctx := context.Background()
	k1 := iss.mint(t, "k1", "", iss.claims(testAudience))
	p, err := v.Verify(ctx, k1)
	if err != nil {
		t.Fatal(err)
	}
	p.Scopes[0] = "changed by a handler"
	// The issuer withdraws k1 (and the set is refetched): the cached
	// answer stands for the TTL, as a copy, then the token is refused.
	iss.addKey("k2", oauthtest.RSAKeys(t)[1], false)
	iss.publish("k2")
	clock.Advance(auth.DefaultJWKSRefreshInterval)
	if _, err := v.Verify(ctx, iss.mint(t, "k2", "", iss.claims(testAudience))); err != nil {
		t.Fatal(err)
	}
	again, err := v.Verify(ctx, k1)
	if err != nil || again.Scopes[0] != "tools:call" {
		t.Fatalf("within the TTL: %v, %+v", err, again)
	}
	clock.Advance(time.Minute - auth.DefaultJWKSRefreshInterval)
	if _, err := v.Verify(ctx, k1); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("past the TTL after the key was withdrawn: %v", err)
	}

	// Never past exp: a token expiring in 10 s is refused 12 s later (the
	// skew is 1 s), well within the cache's minute.
	c := iss.claims(testAudience)
	c["exp"] = clock.Now().Add(10 * time.Second).Unix()
	short := iss.mint(t, "k2", "", c)
	if _, err := v.Verify(ctx, short); err != nil {
		t.Fatal(err)
	}
	clock.Advance(12 * time.Second)
	if _, err := v.Verify(ctx, short); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("an expired token from the cache: %v", err)
	}
	if n, _ := auth.CachedTokens(v); n > 2 {
		t.Fatalf("%d tokens cached, limit 2", n)
	}

	// A refused token is not remembered: once its key is published it passes.
	iss.addKey("k3", newECKey(t), false)
	k3c := iss.claims(testAudience)
	k3c["exp"] = clock.Now().Add(time.Hour).Unix()
	k3 := iss.mint(t, "k3", "ES256", k3c)
	if _, err := v.Verify(ctx, k3); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("unpublished key: %v", err)
	}
	iss.publish("k2", "k3")
	clock.Advance(auth.DefaultJWKSRefreshInterval)
	if _, err := v.Verify(ctx, k3); err != nil {
		t.Fatalf("after publication: %v", err)
	}
	_, keys := auth.CachedTokens(v)
	for _, k := range keys {
		if strings.Contains(string(k[:]), k3[:16]) {
			t.Fatal("the cache keeps the token")
		}
	}
}

func TestJWKSUnavailable(t *testing.T) {
	iss := newTestIssuer(t)
	iss.jwksFail = true
	clock := newClock()
	v := newTestVerifier(t, iss, clock)
	ctx := context.Background()
	tok := iss.mint(t, "k1", "", iss.claims(testAudience))
	for range 3 {
		if _, err := v.Verify(ctx, tok); !errors.Is(err, auth.ErrUnavailable) {
			t.Fatalf("JWKS down: %v", err)
		}
	}
	if _, jwks := iss.hits(); jwks != 1 {
		t.Fatalf("JWKS fetched %d times within the interval", jwks)
	}
	iss.mu.Lock()
	iss.jwksFail = false
	iss.mu.Unlock()
	clock.Advance(auth.DefaultJWKSRefreshInterval)
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("JWKS back: %v", err)
	}
	// Down again: an unknown kid past the interval cannot be decided (503),
	// a known one still verifies with the cached keys.
	iss.mu.Lock()
	iss.jwksFail = true
	iss.mu.Unlock()
	clock.Advance(auth.DefaultJWKSRefreshInterval)
	if _, err := v.Verify(ctx, iss.mint(t, "new", "", iss.claims(testAudience))); !errors.Is(err, auth.ErrUnavailable) {
		t.Fatalf("unknown kid, JWKS down: %v", err)
	}
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("known kid, JWKS down: %v", err)
	}
}

func TestJWKSDiscovery(t *testing.T) {
	ctx := context.Background()
	// OpenID configuration only.
	iss := newTestIssuer(t)
	iss.mdPaths = map[string]bool{"/.well-known/openid-configuration": true}
	v := newTestVerifier(t, iss, newClock())
	if _, err := v.Verify(ctx, iss.mint(t, "k1", "", iss.claims(testAudience))); err != nil {
		t.Fatalf("OpenID discovery: %v", err)
	}
	// No metadata at all.
	iss2 := newTestIssuer(t)
	iss2.mdPaths = nil
	v = newTestVerifier(t, iss2, newClock())
	if _, err := v.Verify(ctx, iss2.mint(t, "k1", "", iss2.claims(testAudience))); !errors.Is(err, auth.ErrUnavailable) {
		t.Fatalf("no metadata: %v", err)
	}
	// Explicit JWKS URL: no metadata fetched.
	iss3 := newTestIssuer(t)
	v = newTestVerifier(t, iss3, newClock(), auth.WithJWKSURL(iss3.url+"/jwks"))
	if _, err := v.Verify(ctx, iss3.mint(t, "k1", "", iss3.claims(testAudience))); err != nil {
		t.Fatal(err)
	}
	if md, _ := iss3.hits(); md != 0 {
		t.Fatalf("metadata fetched %d times with auth.WithJWKSURL", md)
	}
	// Metadata naming another issuer is refused.
	iss4 := newTestIssuer(t)
	v, err := auth.NewJWTVerifier(iss4.url+"/", testAudience, auth.WithClock(newClock().Now))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, iss4.mint(t, "k1", "", oauthtest.WithClaims(iss4.claims(testAudience), "iss", iss4.url+"/"))); !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), "names issuer") {
		t.Fatalf("metadata for another issuer: %v", err)
	}
}

func TestJWKSSizeLimit(t *testing.T) {
	iss := newTestIssuer(t)
	iss.jwksBody = []byte(`{"keys":[],"pad":"` + strings.Repeat("x", 5000) + `"}`)
	v := newTestVerifier(t, iss, newClock(), auth.WithLimits(auth.Limits{MaxResponseBytes: 4096}))
	_, err := v.Verify(context.Background(), iss.mint(t, "k1", "", iss.claims(testAudience)))
	if !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), "larger than 4096 bytes") {
		t.Fatalf("oversized JWKS: %v", err)
	}
	// Keys it cannot use are skipped; none usable is an error.
	iss.jwksBody = []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"k1"},{"kty":"weird"}]}`)
	v = newTestVerifier(t, iss, newClock())
	if _, err := v.Verify(context.Background(), hmacWithPublicKey(t, &oauthtest.RSAKeys(t)[0].PublicKey, iss.claims(testAudience))); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("HS256 against a set with an oct key: %v", err)
	}
	if _, err := v.Verify(context.Background(), iss.mint(t, "k1", "", iss.claims(testAudience))); !errors.Is(err, auth.ErrUnavailable) {
		t.Fatalf("set without usable keys: %v", err)
	}
}

func TestJWKSConcurrentLookupsFetchOnce(t *testing.T) {
	iss := newTestIssuer(t)
	v := newTestVerifier(t, iss, newClock())
	tok := iss.mint(t, "k1", "", iss.claims(testAudience))
	random := iss.mint(t, "random", "", iss.claims(testAudience))
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Go(func() {
			tk := tok
			if i%2 == 1 {
				tk = random
			}
			_, err := v.Verify(context.Background(), tk)
			if (i%2 == 0) != (err == nil) {
				errs <- fmt.Errorf("token %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if md, jwks := iss.hits(); md != 1 || jwks != 1 {
		t.Fatalf("40 concurrent verifications fetched metadata %d and the JWKS %d times; want once each", md, jwks)
	}
}
