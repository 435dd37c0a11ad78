package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testclock"
)

// testNow is the verifiers' clock in these tests; tokens are minted
// relative to it.
var testNow = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

// testIssuer is an authorization server on loopback: RFC 8414 metadata, a
// JWKS, and counters of what was fetched.
type testIssuer struct {
	srv *httptest.Server
	url string

	mu        sync.Mutex
	signers   map[string]any // kid -> private key
	published []string       // kids in the JWKS
	jwksHits  int
	mdHits    int
	jwksBody  []byte // when set, served instead of the keys
	jwksFail  bool   // answer 500
	mdPaths   map[string]bool
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	iss := &testIssuer{signers: map[string]any{}, mdPaths: map[string]bool{
		"/.well-known/oauth-authorization-server": true}}
	keys := oauthtest.RSAKeys(t)
	iss.addKey("k1", keys[0], true)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/", func(w http.ResponseWriter, r *http.Request) {
		iss.mu.Lock()
		ok := iss.mdPaths[r.URL.Path]
		iss.mdHits++
		iss.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss.url, "jwks_uri": iss.url + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.mu.Lock()
		defer iss.mu.Unlock()
		iss.jwksHits++
		if iss.jwksFail {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if iss.jwksBody != nil {
			_, _ = w.Write(iss.jwksBody)
			return
		}
		var set jose.JSONWebKeySet
		for _, kid := range iss.published {
			k := jose.JSONWebKey{Key: iss.signers[kid], KeyID: kid, Use: "sig"}
			set.Keys = append(set.Keys, k.Public())
		}
		_ = json.NewEncoder(w).Encode(set)
	})
	iss.srv = httptest.NewServer(mux)
	iss.url = iss.srv.URL
	t.Cleanup(iss.srv.Close)
	return iss
}

func (iss *testIssuer) addKey(kid string, key any, publish bool) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.signers[kid] = key
	if publish {
		iss.published = append(iss.published, kid)
	}
}

// publish replaces the published kids (a key rotation).
func (iss *testIssuer) publish(kids ...string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.published = kids
}

func (iss *testIssuer) hits() (md, jwks int) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.mdHits, iss.jwksHits
}

// claims returns valid claims for audience at testNow.
func (iss *testIssuer) claims(aud string) map[string]any {
	return map[string]any{
		"iss": iss.url, "sub": "ada", "aud": aud, "scope": "tools:call files:read",
		"iat": testNow.Unix(), "nbf": testNow.Unix(), "exp": testNow.Add(time.Hour).Unix(),
	}
}

// mint signs claims with the key kid, as alg (RS256 when "").
func (iss *testIssuer) mint(t testing.TB, kid, alg string, claims map[string]any) string {
	t.Helper()
	iss.mu.Lock()
	key := iss.signers[kid]
	iss.mu.Unlock()
	if alg == "" {
		alg = "RS256"
	}
	if key == nil {
		key = oauthtest.RSAKeys(t)[1]
	}
	return oauthtest.SignJWT(t, jose.SignatureAlgorithm(alg), key, kid, "at+jwt", claims)
}

// unsignedJWT is an alg "none" token.
func unsignedJWT(claims map[string]any) string {
	h, _ := json.Marshal(map[string]any{"alg": "none", "typ": "at+jwt", "kid": "k1"})
	c, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc(h) + "." + enc(c) + "."
}

// hmacWithPublicKey is the key-confusion attack: HS256 "signed" with the
// RSA public key's PEM bytes as the secret.
func hmacWithPublicKey(t testing.TB, pub *rsa.PublicKey, claims map[string]any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return oauthtest.SignJWT(t, jose.HS256, secret, "k1", "at+jwt", claims)
}

func newECKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newClock() *testclock.Clock { return testclock.New(testNow) }
