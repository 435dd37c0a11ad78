package oauthtest

import (
	"crypto/rand"
	"crypto/rsa"
	"maps"
	"sync"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// SignJWT signs claims as a JWT (compact serialization) with alg and key,
// naming kid in its header when kid is not empty and typ as its "typ"
// when typ is not empty ("at+jwt" for an RFC 9068 access token): the
// tokens, good and bad, that a resource server's verifier is tested with.
// A signing error fails the test.
func SignJWT(t testing.TB, alg jose.SignatureAlgorithm, key any, kid, typ string, claims map[string]any) string {
	t.Helper()
	if kid != "" {
		key = jose.JSONWebKey{Key: key, KeyID: kid}
	}
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// WithClaims returns a copy of claims changed by kv, pairs of a claim
// name and its value; a nil value deletes the claim. Tests make each bad
// token from good claims this way.
func WithClaims(claims map[string]any, kv ...any) map[string]any {
	c := maps.Clone(claims)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

var (
	rsaOnce sync.Once
	rsaKeys [2]*rsa.PrivateKey
	rsaErr  error
)

// RSAKeys returns two 2048-bit RSA keys, generated once per test binary
// (generating one takes long enough to matter): an issuer's signing key
// and a key it never published, for the tokens a verifier must refuse.
func RSAKeys(t testing.TB) [2]*rsa.PrivateKey {
	t.Helper()
	rsaOnce.Do(func() {
		for i := range rsaKeys {
			if rsaKeys[i], rsaErr = rsa.GenerateKey(rand.Reader, 2048); rsaErr != nil {
				return
			}
		}
	})
	if rsaErr != nil {
		t.Fatal(rsaErr)
	}
	return rsaKeys
}
