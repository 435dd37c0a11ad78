package oauthtest

import (
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// RSAKeys gives two distinct keys, the same each call; SignJWT's token
// carries the kid and typ asked for and verifies with the
// public key to the claims given; WithClaims changes a copy only.
func TestSignJWTAndWithClaims(t *testing.T) {
	keys := RSAKeys(t)
	if keys[0] == nil || keys[1] == nil || keys[0].Equal(keys[1]) || RSAKeys(t) != keys {
		t.Fatal("RSAKeys: not two distinct keys, the same each call")
	}
	key := keys[0]
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
