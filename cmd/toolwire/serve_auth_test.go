package main

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testhttp"
)

// authIssuer is an OAuth authorization server on loopback for the binary's
// tests: RFC 8414 metadata, a JWKS with one RSA key (kid k1), and a minter.
type authIssuer struct {
	url   string
	key   *rsa.PrivateKey
	other *rsa.PrivateKey // a key the issuer never published
}

func newAuthIssuer(t *testing.T) *authIssuer {
	t.Helper()
	keys := oauthtest.RSAKeys(t)
	a := &authIssuer{key: keys[0], other: keys[1]}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": a.url, "jwks_uri": a.url + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		k := jose.JSONWebKey{Key: &a.key.PublicKey, KeyID: "k1", Use: "sig"}
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k}})
	})
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	a.url = srv.URL
	return a
}

// claims are valid claims for audience, with scopes; kv changes them
// (a nil value deletes the claim).
func (a *authIssuer) claims(audience, sub, scope string, kv ...any) map[string]any {
	now := time.Now()
	return oauthtest.WithClaims(map[string]any{"iss": a.url, "sub": sub, "aud": audience, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}, kv...)
}

func (a *authIssuer) token(t *testing.T, claims map[string]any) string {
	return oauthtest.SignJWT(t, jose.RS256, a.key, "k1", "at+jwt", claims)
}

// algNone is an unsigned token.
func algNone(claims map[string]any) string {
	h, _ := json.Marshal(map[string]any{"alg": "none", "typ": "at+jwt", "kid": "k1"})
	c, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c) + "."
}

// hs256WithPublicKey "signs" with the issuer's public key (PEM) as an HMAC
// secret: the algorithm confusion attack.
func (a *authIssuer) hs256WithPublicKey(t *testing.T, claims map[string]any) string {
	der, err := x509.MarshalPKIXPublicKey(&a.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return oauthtest.SignJWT(t, jose.HS256, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), "k1", "at+jwt", claims)
}

type httpReply struct {
	status int
	header http.Header
	body   string
}

// mcpPost sends one JSON-RPC message to the endpoint with the given
// headers (pairs) and returns the reply.
func mcpPost(t *testing.T, endpoint, body string, hdr ...string) httpReply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i < len(hdr); i += 2 {
		if hdr[i+1] != "" {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, raw := testhttp.Do(t, nil, req)
	return httpReply{resp.StatusCode, resp.Header, raw}
}

// toggleCall calls toggle-subscriber-updates statelessly (2026-07-28), a
// tool with a server-wide effect: each call that runs flips it and says so.
func toggleCall(t *testing.T, endpoint, token string) httpReply {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"toggle-subscriber-updates","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	authz := ""
	if token != "" {
		authz = "Bearer " + token
	}
	return mcpPost(t, endpoint, body, "Authorization", authz, "MCP-Protocol-Version", "2026-07-28",
		"Mcp-Method", "tools/call", "Mcp-Name", "toggle-subscriber-updates")
}

// TestServeAuthTokenMatrix runs `toolwire serve --auth-issuer` against an
// issuer on loopback and presents every kind of bad token: each is refused
// with the right status and challenge, and the tool does not run.
func TestServeAuthTokenMatrix(t *testing.T) {
	as := newAuthIssuer(t)
	p := startServe(t, nil, "--data-dir", "", "--auth-issuer", as.url, "--auth-scopes", "mcp",
		"--auth-tool-scope", "toggle-subscriber-updates=admin")
	endpoint := p.url // also the default audience
	origin := strings.TrimSuffix(endpoint, "/mcp")
	prm := origin + "/.well-known/oauth-protected-resource/mcp"
	rm := `Bearer resource_metadata="` + prm + `"`

	good := as.claims(endpoint, "ada", "mcp admin")
	valid := as.token(t, good)
	hour := time.Hour
	cases := []struct {
		name      string
		token     string
		query     bool // send the token as ?access_token= instead
		status    int
		challenge string
	}{
		{"no token", "", false, 401, rm + `, scope="mcp"`},
		{"expired", as.token(t, withClaims(good, "exp", time.Now().Add(-hour).Unix(), "iat", time.Now().Add(-2*hour).Unix())), false, 401,
			rm + `, scope="mcp", error="invalid_token", error_description="the token has expired"`},
		{"not yet valid", as.token(t, withClaims(good, "nbf", time.Now().Add(hour).Unix())), false, 401,
			rm + `, scope="mcp", error="invalid_token", error_description="the token is not valid yet (nbf)"`},
		{"wrong issuer", as.token(t, withClaims(good, "iss", "https://evil.example.com")), false, 401,
			rm + `, scope="mcp", error="invalid_token", error_description="the token was issued by another issuer"`},
		{"wrong audience", as.token(t, withClaims(good, "aud", "https://other.example.com/mcp")), false, 401,
			rm + `, scope="mcp", error="invalid_token", error_description="the token is not meant for this resource (aud)"`},
		{"alg none", algNone(good), false, 401,
			rm + `, scope="mcp", error="invalid_token", error_description="not a signed JWT with an accepted algorithm"`},
		{"HS256 with the public key", as.hs256WithPublicKey(t, good), false, 401,
			rm + `, scope="mcp", error="invalid_token", error_description="not a signed JWT with an accepted algorithm"`},
		{"unknown kid", oauthtest.SignJWT(t, jose.RS256, as.other, "not-published", "at+jwt", good), false, 401,
			rm + `, scope="mcp", error="invalid_token", error_description="the token's signing key is not among the issuer's keys"`},
		// scope= names every scope the request needs, not only the missing one.
		{"missing server-wide scope", as.token(t, withClaims(good, "scope", "admin")), false, 403,
			rm + `, scope="mcp admin", error="insufficient_scope", error_description="the token lacks a scope this request needs"`},
		{"missing tool scope", as.token(t, withClaims(good, "scope", "mcp")), false, 403,
			rm + `, scope="mcp admin", error="insufficient_scope", error_description="the token lacks a scope this request needs"`},
		{"token in the query string", valid, true, 400,
			rm + `, error="invalid_request", error_description="access tokens are accepted in the Authorization header only"`},
	}
	var tokens []string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r httpReply
			if tc.query {
				r = toggleCall(t, endpoint+"?access_token="+tc.token, "")
			} else {
				r = toggleCall(t, endpoint, tc.token)
			}
			if tc.token != "" {
				tokens = append(tokens, tc.token)
			}
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if got := r.header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Fatalf("WWW-Authenticate:\n got %s\nwant %s", got, tc.challenge)
			}
			var reply struct {
				ID     json.RawMessage     `json:"id"`
				Result json.RawMessage     `json:"result"`
				Error  *struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.body), &reply); err != nil || string(reply.ID) != "null" || reply.Error == nil || reply.Result != nil {
				t.Fatalf("reply is not a JSON-RPC error with a null id: %s", r.body)
			}
			if tc.token != "" && (strings.Contains(r.body, tc.token) || strings.Contains(r.header.Get("WWW-Authenticate"), tc.token)) {
				t.Fatal("the reply carries the token")
			}
			// The tool did not run: the next call that does starts the
			// updates, and the one after stops them.
			if r := toggleCall(t, endpoint, valid); r.status != 200 || !strings.Contains(r.body, "Started simulated resource updates") {
				t.Fatalf("after the refusal, a valid call: %d %s", r.status, r.body)
			}
			if r := toggleCall(t, endpoint, valid); r.status != 200 || !strings.Contains(r.body, "Stopped simulated resource updates") {
				t.Fatalf("toggling back: %d %s", r.status, r.body)
			}
		})
	}

	// Protected Resource Metadata, path-suffixed and bare.
	for _, u := range []string{prm, origin + "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
			BearerMethods        []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || md.Resource != endpoint || !slices.Equal(md.AuthorizationServers, []string{as.url}) ||
			!slices.Equal(md.ScopesSupported, []string{"mcp", "admin"}) || !slices.Equal(md.BearerMethods, []string{"header"}) {
			t.Fatalf("%s: %d %+v %v", u, resp.StatusCode, md, err)
		}
	}

	// Nothing the server logged carries a token.
	tokens = append(tokens, valid)
	p.interrupt(t)
	logs := p.log.String()
	for _, tok := range tokens {
		sig := tok[strings.LastIndexByte(tok, '.')+1:]
		if strings.Contains(logs, tok) || len(sig) > 16 && strings.Contains(logs, sig) {
			t.Fatalf("the server's log carries a token:\n%s", logs)
		}
	}
	if !strings.Contains(logs, "request refused: invalid token") {
		t.Fatalf("refusals not logged:\n%s", logs)
	}
}

func withClaims(claims map[string]any, kv ...any) map[string]any {
	c := maps.Clone(claims)
	for i := 0; i < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

// TestServeAuthSessionBoundToSubject: a 2025-era session opened with
// subject A's token cannot be used with subject B's valid token.
func TestServeAuthSessionBoundToSubject(t *testing.T) {
	as := newAuthIssuer(t)
	p := startServe(t, nil, "--data-dir", "", "--auth-issuer", as.url)
	ada := as.token(t, as.claims(p.url, "ada", ""))
	bob := as.token(t, as.claims(p.url, "bob", ""))

	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	r := mcpPost(t, p.url, init, "Authorization", "Bearer "+ada)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	hdr := func(tok string) []string {
		return []string{"Authorization", "Bearer " + tok, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"}
	}
	if r := mcpPost(t, p.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr(ada)...); r.status != 202 {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
	if r := mcpPost(t, p.url, call, hdr(bob)...); r.status != 403 || strings.Contains(r.body, "Echo: hi") || !strings.Contains(r.body, "another principal") {
		t.Fatalf("bob in ada's session: %d %s", r.status, r.body)
	}
	if r := mcpPost(t, p.url, call, hdr(ada)...); r.status != 200 || !strings.Contains(r.body, "Echo: hi") {
		t.Fatalf("ada in her session: %d %s", r.status, r.body)
	}
	// Without a token the session is not reachable either.
	if r := mcpPost(t, p.url, call, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"); r.status != 401 {
		t.Fatalf("no token in ada's session: %d %s", r.status, r.body)
	}
}

// TestServeAuthFlagErrors: misused --auth-* flags are usage errors (exit 2).
func TestServeAuthFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stdio", "--auth-issuer", "https://as.example.com"}, "drop --stdio"},
		{[]string{"--auth-scopes", "mcp"}, "--auth-issuer is required"},
		{[]string{"--auth-issuer", "http://as.example.com"}, "must use https"},
		{[]string{"--auth-issuer", "https://as.example.com", "--auth-jwks", "http://keys.example.com/jwks"}, "must use https"},
		{[]string{"--auth-issuer", "https://as.example.com", "--auth-tool-scope", "echo"}, "TOOL=SCOPE"},
		{[]string{"--auth-issuer", "https://as.example.com", "--auth-client-id", "x"}, "are for --auth-introspect"},
		{[]string{"--auth-issuer", "https://as.example.com", "--auth-jwks", "https://k/jwks", "--auth-introspect", "https://i"}, "exclude each other"},
		{[]string{"--auth-issuer", "https://as.example.com", "--auth-token-cache", "-1s"}, `"-1s" is not a duration`},
	} {
		r := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", ""}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %s", tc.args, r.code, r.stderr)
		}
	}
}

// echoCall calls echo statelessly (2026-07-28).
func echoCall(t *testing.T, endpoint, token string) httpReply {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	return mcpPost(t, endpoint, body, "Authorization", "Bearer "+token, "MCP-Protocol-Version", "2026-07-28",
		"Mcp-Method", "tools/call", "Mcp-Name", "echo")
}

// TestServeAuthIntrospection: --auth-introspect verifies opaque tokens with
// RFC 7662, authenticating with the client credentials from the
// environment.
func TestServeAuthIntrospection(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		if id, secret, ok := r.BasicAuth(); !ok || id != "toolwire" || secret != "hunter2" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.PostFormValue("token") {
		case "opaque-ada":
			_, _ = io.WriteString(w, `{"active":true,"sub":"ada","scope":"mcp","iss":"https://as.example.com","exp":`+
				strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)+`}`)
		default:
			_, _ = io.WriteString(w, `{"active":false}`)
		}
	}))
	defer ep.Close()
	p := startServe(t, []string{"TOOLWIRE_AUTH_CLIENT_ID=toolwire", "TOOLWIRE_AUTH_CLIENT_SECRET=hunter2"},
		"--data-dir", "", "--auth-issuer", "https://as.example.com", "--auth-introspect", ep.URL, "--auth-scopes", "mcp",
		"--auth-audience", "https://mcp.example.com/tenant/mcp")
	for range 2 {
		if r := echoCall(t, p.url, "opaque-ada"); r.status != 200 || !strings.Contains(r.body, "Echo: hi") {
			t.Fatalf("active token: %d %s", r.status, r.body)
		}
	}
	r := echoCall(t, p.url, "opaque-other")
	want := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp", scope="mcp", ` +
		`error="invalid_token", error_description="the token is not active"`
	if r.status != 401 || r.header.Get("WWW-Authenticate") != want {
		t.Fatalf("inactive token: %d %v", r.status, r.header)
	}
	// The metadata is served at the audience's path and the endpoint's.
	origin := strings.TrimSuffix(p.url, "/mcp")
	for _, path := range []string{"/.well-known/oauth-protected-resource/tenant/mcp", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		var md struct{ Resource string }
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || md.Resource != "https://mcp.example.com/tenant/mcp" {
			t.Fatalf("%s: %+v %v", path, md, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Fatalf("%d introspection requests; want 2 (the active answer cached)", calls)
	}
	if strings.Contains(p.log.String(), "hunter2") {
		t.Fatal("the log carries the client secret")
	}
}

// TestServeAuthIssuerDown: when the issuer's keys cannot be fetched the
// server answers 503 (the token may be good), not 401.
func TestServeAuthIssuerDown(t *testing.T) {
	as := newAuthIssuer(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer down.Close()
	p := startServe(t, nil, "--data-dir", "", "--auth-issuer", as.url, "--auth-jwks", down.URL+"/jwks")
	r := echoCall(t, p.url, as.token(t, as.claims(p.url, "ada", "")))
	if r.status != 503 || r.header.Get("WWW-Authenticate") != "" || r.header.Get("Retry-After") == "" || strings.Contains(r.body, "Echo") {
		t.Fatalf("issuer down: %d %v %s", r.status, r.header, r.body)
	}
}
