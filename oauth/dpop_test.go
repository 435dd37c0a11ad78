package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// parseProof verifies a proof's signature with the key its own header
// carries (as a server does) and returns the header and the claims.
func parseProof(t *testing.T, proof string) (jose.Header, map[string]any) {
	t.Helper()
	jws, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("proof does not parse: %v", err)
	}
	if len(jws.Signatures) != 1 {
		t.Fatalf("%d signatures", len(jws.Signatures))
	}
	h := jws.Signatures[0].Protected
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		t.Fatalf("header jwk missing or not public: %+v", h.JSONWebKey)
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		t.Fatalf("signature does not verify with the header's jwk: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return h, claims
}

func TestDPoPProofClaims(t *testing.T) {
	fixed := time.Unix(1_700_000_000, 0)
	key, err := NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	key = key.WithClock(func() time.Time { return fixed })
	var _ DPoPSigner = key

	proof, err := key.Proof("POST", "https://mcp.example.com:8443/mcp?session=1#frag", "the-access-token", "server-nonce")
	if err != nil {
		t.Fatal(err)
	}
	h, c := parseProof(t, proof)
	if h.Algorithm != "ES256" {
		t.Errorf("alg %q", h.Algorithm)
	}
	if typ := h.ExtraHeaders[jose.HeaderType]; typ != "dpop+jwt" {
		t.Errorf("typ %v", typ)
	}
	raw, _ := json.Marshal(h.JSONWebKey)
	if strings.Contains(string(raw), `"d"`) {
		t.Errorf("the header jwk has the private key: %s", raw)
	}
	if tp, _ := JWKThumbprint(h.JSONWebKey.Key); tp != key.Thumbprint() {
		t.Errorf("header key thumbprint %q, Thumbprint() %q", tp, key.Thumbprint())
	}
	sum := sha256.Sum256([]byte("the-access-token"))
	want := map[string]any{
		"htm":   "POST",
		"htu":   "https://mcp.example.com:8443/mcp",
		"iat":   float64(fixed.Unix()),
		"ath":   base64.RawURLEncoding.EncodeToString(sum[:]),
		"nonce": "server-nonce",
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("claim %s = %v, want %v", k, c[k], v)
		}
	}
	if jti, _ := c["jti"].(string); len(jti) < 16 {
		t.Errorf("jti %q", c["jti"])
	}
	if len(c) != 6 {
		t.Errorf("claims %v, want exactly jti htm htu iat ath nonce", c)
	}

	// Without a token or a nonce, no ath and no nonce; a fresh jti each time.
	p2, err := key.Proof("GET", "http://127.0.0.1:9/token", "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, c2 := parseProof(t, p2)
	if _, ok := c2["ath"]; ok {
		t.Error("ath without a token")
	}
	if _, ok := c2["nonce"]; ok {
		t.Error("nonce without one")
	}
	if c2["htm"] != "GET" || c2["htu"] != "http://127.0.0.1:9/token" {
		t.Errorf("htm/htu %v %v", c2["htm"], c2["htu"])
	}
	if c2["jti"] == c["jti"] {
		t.Error("jti reused")
	}
}

func TestDPoPProofErrors(t *testing.T) {
	key, err := NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"/relative", "::", ""} {
		if _, err := key.Proof("POST", u, "", ""); err == nil {
			t.Errorf("%q: no error", u)
		}
	}
	if _, err := key.Proof("", "https://x/", "", ""); err == nil {
		t.Error("no method: no error")
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDPoPKey(p384); err == nil {
		t.Error("P-384 key accepted for ES256")
	}
	if _, err := LoadDPoPKey(nil); err == nil {
		t.Error("nil key accepted")
	}
}

func TestDPoPHTU(t *testing.T) {
	for in, want := range map[string]string{
		"https://h.example/mcp?x=1#y":    "https://h.example/mcp",
		"https://user:pw@h.example/a/b?": "https://h.example/a/b",
		"http://127.0.0.1:8080/token":    "http://127.0.0.1:8080/token",
		"https://h.example/p%20q?z#":     "https://h.example/p%20q",
	} {
		got, err := HTU(in)
		if err != nil || got != want {
			t.Errorf("HTU(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// RFC 7638 section 3.1's example RSA key and its thumbprint.
func TestJWKThumbprintRFC7638(t *testing.T) {
	const example = `{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}`
	var jwk jose.JSONWebKey
	if err := json.Unmarshal([]byte(example), &jwk); err != nil {
		t.Fatal(err)
	}
	got, err := JWKThumbprint(jwk.Key)
	if err != nil {
		t.Fatal(err)
	}
	if want := "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"; got != want {
		t.Errorf("thumbprint %q, want %q", got, want)
	}
}

// An EC key's thumbprint is the SHA-256 of {"crv","kty","x","y"} in that
// order without white space (RFC 7638 section 3.2), computed here by hand.
func TestDPoPThumbprintEC(t *testing.T) {
	key, err := NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	p, err := key.Proof("POST", "https://as.example/token", "", "")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := parseProof(t, p)
	pt, err := h.JSONWebKey.Key.(*ecdsa.PublicKey).Bytes() // 0x04 || x || y
	if err != nil || len(pt) != 65 {
		t.Fatalf("public key bytes: %d, %v", len(pt), err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	canon := `{"crv":"P-256","kty":"EC","x":"` + b64(pt[1:33]) + `","y":"` + b64(pt[33:]) + `"}`
	sum := sha256.Sum256([]byte(canon))
	if want := base64.RawURLEncoding.EncodeToString(sum[:]); key.Thumbprint() != want {
		t.Errorf("thumbprint %q, want %q", key.Thumbprint(), want)
	}
}

// A token endpoint that demands a DPoP nonce: the first proof has none,
// the answer is 400 use_dpop_nonce with a DPoP-Nonce, the single retry's
// proof carries it; a server that keeps changing its nonce gets no third
// request.
func TestDPoPTokenRequestNonceRetry(t *testing.T) {
	for _, tc := range []struct {
		name      string
		alwaysNew bool
	}{{"honoured", false}, {"endless", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var proofs []map[string]any
			var srvURL string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				vals := r.Header.Values("DPoP")
				if len(vals) != 1 {
					t.Errorf("%d DPoP headers", len(vals))
				}
				_, c := parseProof(t, vals[0])
				mu.Lock()
				proofs = append(proofs, c)
				n := len(proofs)
				mu.Unlock()
				if c["htm"] != "POST" || c["htu"] != srvURL+"/token" {
					t.Errorf("htm %v htu %v", c["htm"], c["htu"])
				}
				if _, ok := c["ath"]; ok {
					t.Error("ath on a token request")
				}
				if c["nonce"] != "n-1" || tc.alwaysNew {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("DPoP-Nonce", "n-"+string(rune('0'+n)))
					w.WriteHeader(http.StatusBadRequest)
					w.Write([]byte(`{"error":"use_dpop_nonce","error_description":"Authorization server requires a DPoP nonce"}`))
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"access_token":"bound-token","token_type":"DPoP","expires_in":3600}`))
			}))
			defer srv.Close()
			srvURL = srv.URL
			key, err := NewDPoPKey()
			if err != nil {
				t.Fatal(err)
			}
			te := &TokenEndpoint{URL: srv.URL + "/token", Issuer: srv.URL, Client: ClientInfo{ID: "workload"}, HTTP: srv.Client(), DPoP: key, Nonces: &NonceCache{}}
			tok, err := JWTBearerGrant{Assertion: StaticAssertion("aaa.bbb.ccc")}.Token(context.Background(), te, GrantParams{Resource: srv.URL + "/mcp"})
			mu.Lock()
			defer mu.Unlock()
			if len(proofs) != 2 {
				t.Fatalf("%d token requests, want 2", len(proofs))
			}
			if _, ok := proofs[0]["nonce"]; ok {
				t.Error("first proof has a nonce")
			}
			if proofs[0]["jti"] == proofs[1]["jti"] {
				t.Error("the retry reused the jti")
			}
			if tc.alwaysNew {
				// One retry only, and the refusal is an error: a nil token
				// with a nil error would be a grant without a token.
				if err == nil || !strings.Contains(err.Error(), "use_dpop_nonce") {
					t.Fatalf("token %v, err %v; want the use_dpop_nonce refusal", tok, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tok.isDPoP() || tok.AccessToken != "bound-token" {
				t.Errorf("token %v", tok)
			}
		})
	}
}
