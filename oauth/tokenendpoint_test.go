package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// tokenServer records the last token request and answers with body.
func tokenServer(t *testing.T, status int, body string) (*httptest.Server, *http.Request, *url.Values) {
	var last http.Request
	var form url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		last, form = *r, r.PostForm
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &last, &form
}

func TestClientAuthentication(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	for _, method := range []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"} {
		srv, last, form := tokenServer(t, 200, `{"access_token":"a","token_type":"bearer","expires_in":"60","scope":"x y"}`)
		te := &TokenEndpoint{URL: srv.URL + "/token", Issuer: srv.URL, HTTP: srv.Client(), Now: func() time.Time { return now },
			Client: ClientInfo{ID: "id:1", Secret: "sec ret", AuthMethod: method}, Key: &ClientKey{Signer: key}}
		tok, err := te.Request(context.Background(), url.Values{"grant_type": {"client_credentials"}})
		if err != nil {
			t.Fatal(method, err)
		}
		if tok.TokenType != "Bearer" || !tok.Expiry.Equal(now.Add(time.Minute)) || strings.Join(tok.Scopes, ",") != "x,y" {
			t.Errorf("%s: %v", method, tok)
		}
		id, secret, basic := last.BasicAuth()
		f := *form
		switch method {
		case "none":
			if basic || f.Get("client_id") != "id:1" || f.Get("client_secret") != "" {
				t.Errorf("none: %v", f)
			}
		case "client_secret_basic":
			if !basic || id != url.QueryEscape("id:1") || secret != url.QueryEscape("sec ret") || f.Get("client_secret") != "" {
				t.Errorf("basic: %q %q %v", id, secret, f)
			}
		case "client_secret_post":
			if basic || f.Get("client_id") != "id:1" || f.Get("client_secret") != "sec ret" {
				t.Errorf("post: %v", f)
			}
		case "private_key_jwt":
			if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
				t.Fatalf("assertion type %q", f.Get("client_assertion_type"))
			}
			tk, err := jwt.ParseSigned(f.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
			if err != nil {
				t.Fatal(err)
			}
			var c jwt.Claims
			if err := tk.Claims(&key.PublicKey, &c); err != nil {
				t.Fatal(err)
			}
			if c.Issuer != "id:1" || c.Subject != "id:1" || !c.Audience.Contains(srv.URL) || c.ID == "" ||
				c.Validate(jwt.Expected{Time: now}) != nil {
				t.Errorf("claims %+v", c)
			}
		}
	}
}

func TestTokenErrorsAreRedacted(t *testing.T) {
	body, _ := json.Marshal(map[string]string{"error": "invalid_grant", "error_description": "refresh rt-very-secret for client pw-very-secret is revoked"})
	srv, _, _ := tokenServer(t, 400, string(body))
	te := &TokenEndpoint{URL: srv.URL, HTTP: srv.Client(), Client: ClientInfo{ID: "c", Secret: "pw-very-secret", AuthMethod: "client_secret_post"}}
	_, err := te.Request(context.Background(), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt-very-secret"}})
	var oe *Error
	if !errors.As(err, &oe) || oe.Code != "invalid_grant" {
		t.Fatalf("got %v", err)
	}
	if s := err.Error(); strings.Contains(s, "rt-very-secret") || strings.Contains(s, "pw-very-secret") {
		t.Errorf("error shows a secret: %s", s)
	}
}

func TestTokenResponseChecks(t *testing.T) {
	for _, body := range []string{`{"token_type":"Bearer"}`, `{"access_token":"a","token_type":"mac"}`, `{"access_token":"a","token_type":"DPoP"}`, `not json`} {
		srv, _, _ := tokenServer(t, 200, body)
		te := &TokenEndpoint{URL: srv.URL, HTTP: srv.Client()}
		if _, err := te.Request(context.Background(), url.Values{}); err == nil {
			t.Errorf("accepted %s", body)
		}
	}
}

func TestParsePrivateKeyPEM(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	s, err := ParsePrivateKeyPEM(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil || !s.(*ecdsa.PrivateKey).Equal(key) {
		t.Fatal(err)
	}
	if _, err := ParsePrivateKeyPEM([]byte("nope")); err == nil {
		t.Error("accepted junk")
	}
}

// FuzzDecodeTokenResponse: token and registration responses from an
// authorization server decode without panicking, and what is accepted
// has what the client relies on.
func FuzzDecodeTokenResponse(f *testing.F) {
	for _, s := range []string{
		`{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r","scope":"x y"}`,
		`{"access_token":"a","token_type":"dpop","expires_in":"60"}`,
		`{"access_token":"a","token_type":"mac"}`,
		`{"client_id":"c","client_secret":"s","token_endpoint_auth_method":"client_secret_basic"}`,
		`{"access_token":"a","token_type":"Bearer","expires_in":1e309}`, `[]`, `{"access_token":1}`,
	} {
		f.Add([]byte(s), false)
	}
	now := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte, dpop bool) {
		tok, err := decodeTokenResponse(data, dpop, now)
		if err == nil {
			if tok.AccessToken == "" || (tok.TokenType != "Bearer" && tok.TokenType != "DPoP") || (tok.TokenType == "DPoP" && !dpop) {
				t.Fatalf("accepted %v", tok)
			}
			if !tok.Expiry.IsZero() && tok.Expiry.Before(now) {
				t.Fatalf("expiry %v in the past", tok.Expiry)
			}
		}
		var rr registrationResponse
		_ = decodeObject(data, &rr, DefaultMaxResponseBytes)
	})
}
