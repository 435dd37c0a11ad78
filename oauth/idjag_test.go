package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/auth"
)

const (
	idToken = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIiwiYXVkIjoiaWRwLWNsaWVudCJ9.aWQtdG9rZW4tc2lnbmF0dXJl"
	idJAG   = "eyJ0eXAiOiJvYXV0aC1pZC1qYWcrand0In0.eyJjbGllbnRfaWQiOiJ4YWEtY2xpZW50In0.amFnLXNpZ25hdHVyZQ"
)

// enterprise is a fake IdP and authorization server as the conformance
// suite's auth/enterprise-managed-authorization sets them up.
type enterprise struct {
	t        *testing.T
	idp, as  *httptest.Server
	mu       sync.Mutex
	order    []string
	idpReply string
}

func newEnterprise(t *testing.T) *enterprise {
	e := &enterprise{t: t, idpReply: `{"access_token":"` + idJAG + `","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`}
	e.as = httptest.NewServer(http.HandlerFunc(e.token))
	e.idp = httptest.NewServer(http.HandlerFunc(e.exchange))
	t.Cleanup(e.as.Close)
	t.Cleanup(e.idp.Close)
	return e
}

func (e *enterprise) exchange(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.order = append(e.order, "idp")
	e.mu.Unlock()
	r.ParseForm()
	want := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
		"subject_token":        {idToken},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:id_token"},
		"audience":             {e.as.URL},
		"resource":             {e.as.URL + "/mcp"},
		"client_id":            {"idp-client"},
	}
	if r.PostForm.Encode() != want.Encode() {
		e.t.Errorf("IdP form\n%s\nwant\n%s", r.PostForm.Encode(), want.Encode())
	}
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(e.idpReply, `"error"`) {
		w.WriteHeader(http.StatusBadRequest)
	}
	w.Write([]byte(e.idpReply))
}

func (e *enterprise) token(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.order = append(e.order, "as")
	e.mu.Unlock()
	r.ParseForm()
	id, secret, ok := r.BasicAuth()
	if !ok || id != "xaa-client" || secret != "xaa-secret" {
		e.t.Errorf("AS basic auth %q %q %v", id, secret, ok)
	}
	want := url.Values{
		"grant_type": {GrantTypeJWTBearer},
		"assertion":  {idJAG},
		"resource":   {e.as.URL + "/mcp"},
	}
	if r.PostForm.Encode() != want.Encode() {
		e.t.Errorf("AS form\n%s\nwant\n%s", r.PostForm.Encode(), want.Encode())
	}
	json.NewEncoder(w).Encode(map[string]any{"access_token": "mcp-token", "token_type": "Bearer", "expires_in": 3600})
}

func (e *enterprise) grant() (IDJAGGrant, *TokenEndpoint, GrantParams) {
	g := IDJAGGrant{
		IdPTokenEndpoint: e.idp.URL + "/token",
		IdPClient:        ClientInfo{ID: "idp-client"},
		SubjectToken:     StaticAssertion(idToken),
	}
	te := &TokenEndpoint{URL: e.as.URL + "/token", Issuer: e.as.URL, HTTP: e.as.Client(),
		Client: ClientInfo{ID: "xaa-client", Secret: "xaa-secret", AuthMethod: "client_secret_basic"}}
	p := GrantParams{Resource: e.as.URL + "/mcp", Metadata: &auth.AuthServerMetadata{Issuer: e.as.URL}}
	return g, te, p
}

func TestIDJAGGrant(t *testing.T) {
	e := newEnterprise(t)
	g, te, p := e.grant()
	var _ Grant = g
	tok, err := g.Token(context.Background(), te, p)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "mcp-token" || tok.TokenType != "Bearer" {
		t.Errorf("token %v", tok)
	}
	if strings.Join(e.order, ",") != "idp,as" {
		t.Errorf("requests %v, want the IdP's exchange then the AS's grant", e.order)
	}
}

func TestIDJAGRefusals(t *testing.T) {
	for name, reply := range map[string]string{
		"not an ID-JAG":  `{"access_token":"` + idJAG + `","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer"}`,
		"not a JWT":      `{"access_token":"opaque","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`,
		"no issued type": `{"access_token":"` + idJAG + `","token_type":"N_A"}`,
		"IdP error":      `{"error":"invalid_grant","error_description":"bad subject_token ` + idToken + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnterprise(t)
			e.idpReply = reply
			g, te, p := e.grant()
			_, err := g.Token(context.Background(), te, p)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), idToken) || strings.Contains(err.Error(), idJAG) {
				t.Errorf("error carries a token: %v", err)
			}
			if len(e.order) != 1 {
				t.Errorf("requests %v, want the IdP's only", e.order)
			}
		})
	}
}

func TestIDJAGNeedsAudienceAndResource(t *testing.T) {
	g := IDJAGGrant{IdPTokenEndpoint: "http://127.0.0.1:1/token", SubjectToken: StaticAssertion(idToken)}
	if _, err := g.Exchange(context.Background(), &TokenEndpoint{}, GrantParams{Resource: "http://x/mcp"}); err == nil {
		t.Error("no audience: no error")
	}
	if _, err := g.Exchange(context.Background(), &TokenEndpoint{Issuer: "http://as"}, GrantParams{}); err == nil {
		t.Error("no resource: no error")
	}
}

func TestTokenExchangeClientSecretPost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("client_id") != "c" || r.PostForm.Get("client_secret") != "s3cr3t-value" || r.Header.Get("Authorization") != "" {
			t.Errorf("client auth: %v", r.PostForm)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"invalid_client","error_description":"secret s3cr3t-value rejected\u0007"}`))
	}))
	defer srv.Close()
	x := TokenExchange{Endpoint: srv.URL, Client: ClientInfo{ID: "c", Secret: "s3cr3t-value", AuthMethod: "client_secret_post"},
		SubjectToken: idToken, SubjectTokenType: TokenTypeIDToken}
	_, err := x.Exchange(context.Background(), srv.Client())
	var oe *Error
	if !asError(err, &oe) || oe.StatusCode != 401 || oe.Code != "invalid_client" {
		t.Fatalf("err %#v", err)
	}
	if strings.Contains(err.Error(), "s3cr3t-value") || strings.ContainsRune(err.Error(), 7) {
		t.Errorf("error %q", err)
	}
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

func TestDecodeExchangeResponse(t *testing.T) {
	ok := `{"access_token":"a.b.c","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A","expires_in":300,"scope":"s","unknown":{"x":[1]}}`
	tok, err := DecodeExchangeResponse([]byte(ok))
	if err != nil || tok.AccessToken != "a.b.c" || tok.ExpiresIn != 300 || tok.TokenType != "N_A" || tok.Scope != "s" {
		t.Fatalf("%v %v", tok, err)
	}
	if s := tok.String() + tok.GoString(); strings.Contains(s, "a.b.c") {
		t.Errorf("String leaks the token: %s", s)
	}
	for name, in := range map[string]string{
		"not an object":    `["a"]`,
		"empty":            ``,
		"trailing":         ok + `x`,
		"case folded name": `{"Access_Token":"a","issued_token_type":"t","token_type":"N_A"}`,
		"duplicate name":   `{"access_token":"a","access_token":"b","issued_token_type":"t","token_type":"N_A"}`,
		"no token":         `{"issued_token_type":"t","token_type":"N_A"}`,
		"null token":       `{"access_token":null,"issued_token_type":"t","token_type":"N_A"}`,
		"token not string": `{"access_token":1,"issued_token_type":"t","token_type":"N_A"}`,
		"space in token":   `{"access_token":"a b","issued_token_type":"t","token_type":"N_A"}`,
		"no issued type":   `{"access_token":"a","token_type":"N_A"}`,
		"no token type":    `{"access_token":"a","issued_token_type":"t"}`,
		"expires string":   `{"access_token":"a","issued_token_type":"t","token_type":"N_A","expires_in":"300"}`,
		"expires fraction": `{"access_token":"a","issued_token_type":"t","token_type":"N_A","expires_in":1.5}`,
		"expires negative": `{"access_token":"a","issued_token_type":"t","token_type":"N_A","expires_in":-1}`,
		"scope not string": `{"access_token":"a","issued_token_type":"t","token_type":"N_A","scope":["s"]}`,
		"invalid UTF-8":    "{\"access_token\":\"a\",\"issued_token_type\":\"\xff\",\"token_type\":\"N_A\"}",
	} {
		if tok, err := DecodeExchangeResponse([]byte(in)); err == nil {
			t.Errorf("%s: accepted: %v", name, tok)
		} else if len(in) > 2 && strings.Contains(err.Error(), in) {
			t.Errorf("%s: error quotes the input", name)
		}
	}
}

func FuzzDecodeExchangeResponse(f *testing.F) {
	f.Add([]byte(`{"access_token":"a.b.c","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`))
	f.Add([]byte(`{"access_token":"x","issued_token_type":"t","token_type":"Bearer","expires_in":3600,"scope":"a b","refresh_token":"r"}`))
	f.Add([]byte(`{"access_token":"x","access_token":"y"}`))
	f.Add([]byte(`{"expires_in":-1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := DecodeExchangeResponse(data)
		if err != nil {
			if len(data) >= 8 && strings.Contains(err.Error(), string(data)) {
				t.Fatalf("error quotes the input: %v", err)
			}
			return
		}
		if tok.AccessToken == "" || tok.IssuedTokenType == "" || tok.TokenType == "" || tok.ExpiresIn < 0 {
			t.Fatalf("accepted an incomplete response: %#v", tok)
		}
		for i := 0; i < len(tok.AccessToken); i++ {
			if c := tok.AccessToken[i]; c <= ' ' || c >= 0x7f {
				t.Fatalf("token byte %#x", c)
			}
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON")
		}
	})
}
