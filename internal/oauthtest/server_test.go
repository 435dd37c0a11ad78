package oauthtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func TestServerChecksPKCEAndRotates(t *testing.T) {
	s := New(t, Options{Clients: map[string]string{"pub": ""}})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	authorize := func(challenge string) url.Values {
		q := url.Values{"response_type": {"code"}, "client_id": {"pub"}, "redirect_uri": {"http://127.0.0.1:1/cb"}, "state": {"st"},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {"https://m/mcp"}}
		resp, err := noRedirect.Get(s.URL + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := resp.Location()
		return loc.Query()
	}
	token := func(form url.Values) (int, map[string]any) {
		form.Set("client_id", "pub")
		return postForm(t, s.URL+"/token", form, "", "")
	}
	sum := sha256.Sum256([]byte("verifier-verifier-verifier-verifier-verifier"))
	cb := authorize(base64.RawURLEncoding.EncodeToString(sum[:]))
	if cb.Get("iss") != s.URL || cb.Get("state") != "st" {
		t.Fatalf("callback %v", cb)
	}
	if st, m := token(url.Values{"grant_type": {"authorization_code"}, "code": {cb.Get("code")}, "code_verifier": {"wrong"},
		"redirect_uri": {"http://127.0.0.1:1/cb"}, "resource": {"https://m/mcp"}}); st != 400 || m["error"] != "invalid_grant" {
		t.Errorf("wrong verifier: %d %v", st, m)
	}
	cb = authorize(base64.RawURLEncoding.EncodeToString(sum[:]))
	st, m := token(url.Values{"grant_type": {"authorization_code"}, "code": {cb.Get("code")}, "code_verifier": {"verifier-verifier-verifier-verifier-verifier"},
		"redirect_uri": {"http://127.0.0.1:1/cb"}, "resource": {"https://m/mcp"}})
	if st != 200 {
		t.Fatalf("%d %v", st, m)
	}
	if info, ok := s.Verify(m["access_token"].(string)); !ok || info.Resource != "https://m/mcp" {
		t.Errorf("verify: %v %v", info, ok)
	}
	rt := m["refresh_token"].(string)
	st, m = token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	if st != 200 || m["refresh_token"] == rt {
		t.Fatalf("refresh: %d %v", st, m)
	}
	if st, _ := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}); st != 400 {
		t.Error("a rotated refresh token was accepted again")
	}
	if q := authorize(""); q.Get("error") != "invalid_request" || !strings.Contains(q.Get("error_description"), "PKCE") {
		t.Errorf("no challenge accepted: %v", q)
	}
}

func TestServerJWTAccessTokens(t *testing.T) {
	s := New(t, Options{JWT: true, Clients: map[string]string{"m": "sec"}})
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {"https://m/mcp"}, "scope": {"a b"},
		"client_id": {"m"}, "client_secret": {"sec"}}
	resp, err := http.PostForm(s.URL+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	tok, err := jwt.ParseSigned(m.AccessToken, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("not a JWT: %v", err)
	}
	if typ := tok.Headers[0].ExtraHeaders[jose.HeaderType]; typ != "at+jwt" || tok.Headers[0].KeyID != "k1" {
		t.Fatalf("header: typ %v kid %q", typ, tok.Headers[0].KeyID)
	}
	var c struct {
		jwt.Claims
		Scope string `json:"scope"`
	}
	if err := tok.Claims(&s.key.PublicKey, &c); err != nil {
		t.Fatalf("signature: %v", err)
	}
	if c.Issuer != s.URL || c.Subject != "m" || !c.Audience.Contains("https://m/mcp") || c.Scope != "a b" || c.Expiry == nil {
		t.Fatalf("claims: %+v", c)
	}
	if info, ok := s.Verify(m.AccessToken); !ok || info.Resource != "https://m/mcp" {
		t.Fatalf("Verify: %+v %v", info, ok)
	}
}

// TestServerRevokes: the revocation endpoint authenticates the client,
// revokes a refresh token (and the access tokens issued with it) so that
// it can no longer be used, answers 200 for an unknown token and refuses
// another client's token.
func TestServerRevokes(t *testing.T) {
	s := New(t, Options{Clients: map[string]string{"conf": "conf-secret", "other": "other-secret"}})
	post := func(path string, form url.Values, id, secret string) (int, map[string]any) {
		t.Helper()
		return postForm(t, s.URL+path, form, id, secret)
	}
	var md map[string]any
	resp, err := http.Get(s.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if md["revocation_endpoint"] != s.URL+"/revoke" {
		t.Fatalf("revocation_endpoint %v", md["revocation_endpoint"])
	}
	// Tokens to revoke, put in place directly (issuing is tested above).
	rt, at := "rt-to-revoke", "at-to-revoke"
	info := &TokenInfo{Client: "conf", Resource: "https://m/mcp", Expiry: s.now().Add(time.Hour)}
	s.mu.Lock()
	s.refresh[rt], s.access[at] = info, info
	s.mu.Unlock()

	if st, m := post("/revoke", url.Values{"token": {rt}}, "conf", "wrong"); st != 401 || m["error"] != "invalid_client" {
		t.Fatalf("bad secret: %d %v", st, m)
	}
	if st, m := post("/revoke", url.Values{"token": {rt}, "token_type_hint": {"refresh_token"}}, "other", "other-secret"); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("another client's token: %d %v", st, m)
	}
	if st, _ := post("/revoke", url.Values{"token": {rt}, "token_type_hint": {"refresh_token"}}, "conf", "conf-secret"); st != 200 {
		t.Fatalf("revocation: %d", st)
	}
	if _, ok := s.Verify(at); ok {
		t.Error("the access token issued with the revoked refresh token still verifies")
	}
	if st, m := post("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, "conf", "conf-secret"); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("the revoked refresh token: %d %v", st, m)
	}
	if st, _ := post("/revoke", url.Values{"token": {"unknown"}, "token_type_hint": {"access_token"}}, "conf", "conf-secret"); st != 200 {
		t.Fatalf("an unknown token: %d, want 200", st)
	}
	if got := s.Revoked(); len(got) != 1 || got[0] != rt {
		t.Fatalf("Revoked() = %v", got)
	}
	if n := len(s.RevocationForms()); n != 4 {
		t.Fatalf("%d revocation requests recorded, want 4", n)
	}
}

// postForm POSTs form to u, with HTTP Basic client authentication when id
// is set, and returns the status and the JSON body of the answer.
func postForm(t *testing.T, u string, form url.Values, id, secret string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if id != "" {
		req.SetBasicAuth(id, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestServerExchangesTokens: an access token it issued is exchanged for
// one of the audience asked for, the subject kept, the requesting client
// its client_id; an unknown subject token is invalid_grant.
func TestServerExchangesTokens(t *testing.T) {
	s := New(t, Options{JWT: true, Clients: map[string]string{"alice": "a-secret", "gw": "gw-secret"}})
	_, m := postForm(t, s.URL+"/token", url.Values{"grant_type": {"client_credentials"}, "resource": {"https://gw/mcp"}}, "alice", "a-secret")
	subject, _ := m["access_token"].(string)
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {subject},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "audience": {"https://up/mcp"}}
	st, m := postForm(t, s.URL+"/token", form, "gw", "gw-secret")
	tok, _ := m["access_token"].(string)
	info, ok := s.Verify(tok)
	if st != http.StatusOK || !ok || info.Subject != "alice" || info.Client != "gw" || info.Resource != "https://up/mcp" ||
		m["issued_token_type"] != "urn:ietf:params:oauth:token-type:access_token" || s.Exchanges() != 1 {
		t.Fatalf("exchange: %d %v %+v", st, m, info)
	}
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := parsed.UnsafeClaimsWithoutVerification(&c); err != nil || c.Subject != "alice" || !c.Audience.Contains("https://up/mcp") {
		t.Errorf("claims %+v %v", c, err)
	}
	form.Set("subject_token", "unknown")
	if st, m := postForm(t, s.URL+"/token", form, "gw", "gw-secret"); st != http.StatusBadRequest || m["error"] != "invalid_grant" {
		t.Errorf("unknown subject token: %d %v", st, m)
	}
}
