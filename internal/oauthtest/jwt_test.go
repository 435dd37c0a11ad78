package oauthtest

import (
	"crypto/rand"
	"crypto/rsa"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// SignJWT's token carries the kid and typ asked for and verifies with the
// public key to the claims given; WithClaims changes a copy only.
func TestSignJWTAndWithClaims(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]any{"sub": "ada", "scope": "mcp"}
	bad := WithClaims(good, "scope", nil, "aud", "other")
	if len(good) != 2 || good["scope"] != "mcp" || good["aud"] != nil {
		t.Fatalf("WithClaims changed its argument: %v", good)
	}
	if _, ok := bad["scope"]; ok || bad["aud"] != "other" || bad["sub"] != "ada" {
		t.Fatalf("WithClaims: %v", bad)
	}
	tok := SignJWT(t, jose.RS256, key, "k1", "at+jwt", bad)
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	if h := parsed.Headers[0]; h.KeyID != "k1" || h.ExtraHeaders[jose.HeaderType] != "at+jwt" {
		t.Errorf("header: kid %q, extra %v", h.KeyID, h.ExtraHeaders)
	}
	var got map[string]any
	if err := parsed.Claims(&key.PublicKey, &got); err != nil || got["sub"] != "ada" || got["aud"] != "other" || got["scope"] != nil {
		t.Errorf("claims %v (%v)", got, err)
	}
}
