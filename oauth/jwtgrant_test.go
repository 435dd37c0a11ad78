package oauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeAS is a token endpoint that checks each request with check and
// answers status and body.
func fakeAS(t *testing.T, check func(r *http.Request, form url.Values), status int, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/token" {
			t.Errorf("%s %s", r.Method, r.URL.Path)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
			t.Errorf("Content-Type %q", ct)
		}
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		if r.URL.RawQuery != "" {
			t.Errorf("query %q: parameters belong in the body", r.URL.RawQuery)
		}
		check(r, r.PostForm)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

const workloadJWT = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJlLW9mLXRoZS13b3JrbG9hZA"

func TestJWTBearerGrantRequest(t *testing.T) {
	srv, n := fakeAS(t, func(r *http.Request, f url.Values) {
		want := url.Values{
			"grant_type": {GrantTypeJWTBearer},
			"assertion":  {workloadJWT},
			"resource":   {"http://mcp.example/mcp"},
			"scope":      {"read write"},
			"client_id":  {"conformance-wif-workload"},
		}
		if f.Encode() != want.Encode() {
			t.Errorf("form\n%s\nwant\n%s", f.Encode(), want.Encode())
		}
		if r.Header.Get("Authorization") != "" || r.Header.Get("DPoP") != "" {
			t.Error("a public client without DPoP sent Authorization or DPoP")
		}
	}, 200, `{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"scope":"read"}`)
	te := &TokenEndpoint{URL: srv.URL + "/token", Issuer: srv.URL, Client: ClientInfo{ID: "conformance-wif-workload", AuthMethod: "none"}, HTTP: srv.Client()}
	tok, err := JWTBearerGrant{Assertion: StaticAssertion(workloadJWT)}.Token(context.Background(), te,
		GrantParams{Resource: "http://mcp.example/mcp", Scopes: []string{"read", "write"}})
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "at-1" || tok.TokenType != "Bearer" || len(tok.Scopes) != 1 || tok.Expiry.IsZero() {
		t.Errorf("token %v", tok)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests", n.Load())
	}
}

func TestJWTBearerGrantClientSecretBasic(t *testing.T) {
	srv, _ := fakeAS(t, func(r *http.Request, f url.Values) {
		id, secret, ok := r.BasicAuth()
		// RFC 6749 section 2.3.1: both form-urlencoded before Basic.
		if !ok || id != "client%3Aone" || secret != "s%C3%A9cret+x" {
			t.Errorf("basic %q %q %v", id, secret, ok)
		}
		if f.Has("client_id") || f.Has("client_secret") {
			t.Error("credentials in the form too")
		}
		if f.Has("scope") || f.Has("resource") {
			t.Errorf("empty scope/resource sent: %v", f)
		}
	}, 200, `{"access_token":"at","token_type":"bearer"}`)
	te := &TokenEndpoint{URL: srv.URL + "/token", Client: ClientInfo{ID: "client:one", Secret: "sécret x", AuthMethod: "client_secret_basic"}, HTTP: srv.Client()}
	if _, err := (JWTBearerGrant{Assertion: StaticAssertion(workloadJWT)}).Token(context.Background(), te, GrantParams{}); err != nil {
		t.Fatal(err)
	}
}

// A refusal is returned after one request, with its code, and without the
// assertion even when the server echoes it.
func TestJWTBearerGrantErrorsNoRetryNoSecrets(t *testing.T) {
	for _, code := range []string{"invalid_grant", "invalid_scope", "unauthorized_client"} {
		srv, n := fakeAS(t, func(*http.Request, url.Values) {}, 400,
			`{"error":"`+code+`","error_description":"bad assertion `+workloadJWT+` for client"}`)
		te := &TokenEndpoint{URL: srv.URL + "/token", Client: ClientInfo{ID: "w", Secret: "client-secret-value", AuthMethod: "client_secret_post"}, HTTP: srv.Client()}
		_, err := JWTBearerGrant{Assertion: StaticAssertion(workloadJWT)}.Token(context.Background(), te, GrantParams{})
		if err == nil {
			t.Fatalf("%s: no error", code)
		}
		msg := err.Error()
		if !strings.Contains(msg, code) || strings.Contains(msg, workloadJWT) || strings.Contains(msg, "client-secret-value") {
			t.Errorf("%s: error %q", code, msg)
		}
		if n.Load() != 1 {
			t.Errorf("%s: %d requests, want 1 (no retry)", code, n.Load())
		}
	}
}

func TestJWTBearerGrantSourceErrors(t *testing.T) {
	te := &TokenEndpoint{URL: "http://127.0.0.1:1/token"}
	if _, err := (JWTBearerGrant{}).Token(context.Background(), te, GrantParams{}); err == nil {
		t.Error("no source: no error")
	}
	if _, err := (JWTBearerGrant{Assertion: StaticAssertion("")}).Token(context.Background(), te, GrantParams{}); err == nil {
		t.Error("empty assertion: no error")
	}
}

func TestAssertionSources(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	os.WriteFile(good, []byte("\n  "+workloadJWT+"\n"), 0o600)
	if got, err := AssertionFromFile(good)(context.Background()); err != nil || got != workloadJWT {
		t.Errorf("file: %q %v", got, err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("not a jwt but a secret-ish value"), 0o600)
	if _, err := AssertionFromFile(bad)(context.Background()); err == nil || strings.Contains(err.Error(), "secret-ish") {
		t.Errorf("bad file: %v", err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("a", maxAssertion+10)), 0o600)
	if _, err := AssertionFromFile(big)(context.Background()); err == nil {
		t.Error("oversized file accepted")
	}
	if _, err := AssertionFromFile(filepath.Join(dir, "missing"))(context.Background()); err == nil {
		t.Error("missing file: no error")
	}
	t.Setenv("TOOLWIRE_TEST_WIF_JWT", workloadJWT+"\n")
	if got, err := AssertionFromEnv("TOOLWIRE_TEST_WIF_JWT")(context.Background()); err != nil || got != workloadJWT {
		t.Errorf("env: %q %v", got, err)
	}
	if _, err := AssertionFromEnv("TOOLWIRE_TEST_WIF_UNSET_VARIABLE")(context.Background()); err == nil {
		t.Error("unset variable: no error")
	}
}
