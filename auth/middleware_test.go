package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

const (
	prmURL      = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	secretToken = "s3cr3t-T0KEN.value_~+/=="
)

// stubVerifier knows a few tokens.
func stubVerifier(calls *atomic.Int32) TokenVerifier {
	return TokenVerifierFunc(func(ctx context.Context, token string) (*Principal, error) {
		calls.Add(1)
		switch token {
		case secretToken:
			return &Principal{Issuer: "https://as.example.com", Subject: "ada", Scopes: []string{"mcp", "tools:call"}}, nil
		case "narrow":
			return &Principal{Issuer: "https://as.example.com", Subject: "bob", Scopes: []string{"mcp"}}, nil
		case "down":
			return nil, unavailable("JWKS unreachable", errors.New("dial tcp: refused"))
		}
		return nil, invalidToken("the token has expired")
	})
}

type recorded struct {
	ran       bool
	principal *Principal
	body      []byte
}

func guarded(t *testing.T, calls *atomic.Int32, opts ...RequireOption) (http.Handler, *recorded) {
	rec := &recorded{}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.ran = true
		rec.principal = PrincipalFrom(r.Context())
		var err error
		rec.body, err = io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the body after the middleware: %v", err)
		}
		w.WriteHeader(http.StatusOK)
	})
	opts = append([]RequireOption{WithResourceMetadata(prmURL)}, opts...)
	return Require(stubVerifier(calls), opts...)(next), rec
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func post(body string, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	return r
}

// checkRefusal asserts the status, the WWW-Authenticate header and a
// JSON-RPC error body with a null id, none of which carries the token.
func checkRefusal(t *testing.T, w *httptest.ResponseRecorder, status int, challenge string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
	if got := w.Header().Get("WWW-Authenticate"); got != challenge {
		t.Fatalf("WWW-Authenticate:\n got %s\nwant %s", got, challenge)
	}
	var body struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.JSONRPC != "2.0" || string(body.ID) != "null" || body.Error == nil {
		t.Fatalf("body is not a JSON-RPC error with a null id: %s", w.Body)
	}
	for k, vs := range w.Header() {
		for _, v := range vs {
			if strings.Contains(v, secretToken) {
				t.Fatalf("header %s carries the token", k)
			}
		}
	}
	if strings.Contains(w.Body.String(), secretToken) || strings.Contains(w.Body.String(), "s3cr3t") {
		t.Fatal("the body carries the token")
	}
}

func TestRequireNoToken(t *testing.T) {
	var calls atomic.Int32
	h, rec := guarded(t, &calls, WithScopes("mcp"))
	for _, auth := range []string{"", "Basic YTpi", "Bearer", "Bearer "} {
		r := post(`{}`)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := serve(h, r)
		want := `Bearer resource_metadata="` + prmURL + `", scope="mcp"`
		if auth == "Bearer" || auth == "Bearer " {
			want += `, error="invalid_token", error_description="malformed bearer token"`
		}
		checkRefusal(t, w, http.StatusUnauthorized, want)
	}
	if rec.ran || calls.Load() != 0 {
		t.Fatalf("ran=%v verifier calls=%d", rec.ran, calls.Load())
	}
	// Without scopes or metadata the challenge is bare.
	h2 := Require(stubVerifier(&calls))(http.NotFoundHandler())
	checkRefusal(t, serve(h2, post(`{}`)), http.StatusUnauthorized, "Bearer")
}

func TestRequireInvalidToken(t *testing.T) {
	var calls atomic.Int32
	h, rec := guarded(t, &calls)
	w := serve(h, post(`{}`, "Authorization", "Bearer expired-token"))
	checkRefusal(t, w, http.StatusUnauthorized,
		`Bearer resource_metadata="`+prmURL+`", error="invalid_token", error_description="the token has expired"`)
	for _, bad := range []string{"Bearer a b", "Bearer tok\"en", "Bearer ==abc"} {
		w := serve(h, post(`{}`, "Authorization", bad))
		checkRefusal(t, w, http.StatusUnauthorized,
			`Bearer resource_metadata="`+prmURL+`", error="invalid_token", error_description="malformed bearer token"`)
	}
	r := post(`{}`, "Authorization", "Bearer "+secretToken, "Authorization", "Bearer "+secretToken)
	checkRefusal(t, serve(h, r), http.StatusUnauthorized,
		`Bearer resource_metadata="`+prmURL+`", error="invalid_token", error_description="more than one Authorization header"`)
	if rec.ran {
		t.Fatal("the next handler ran for an invalid token")
	}
}

func TestRequireUnavailable(t *testing.T) {
	var calls atomic.Int32
	h, rec := guarded(t, &calls)
	w := serve(h, post(`{}`, "Authorization", "Bearer down"))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("WWW-Authenticate") != "" || w.Header().Get("Retry-After") == "" || rec.ran {
		t.Fatalf("status %d, headers %v, ran %v", w.Code, w.Header(), rec.ran)
	}
	if strings.Contains(w.Body.String(), "dial tcp") {
		t.Fatal("the body shows the internal error")
	}
}

func TestRequireTokenInQueryOrForm(t *testing.T) {
	var calls atomic.Int32
	h, rec := guarded(t, &calls)
	want := `Bearer resource_metadata="` + prmURL + `", error="invalid_request", error_description="access tokens are accepted in the Authorization header only"`
	r := httptest.NewRequest(http.MethodPost, "/mcp?access_token="+secretToken, strings.NewReader(`{}`))
	checkRefusal(t, serve(h, r), http.StatusBadRequest, want)
	// Even with a good header, the query token makes it a bad request.
	r = httptest.NewRequest(http.MethodGet, "/mcp?x=1&access_token="+secretToken, nil)
	r.Header.Set("Authorization", "Bearer "+secretToken)
	checkRefusal(t, serve(h, r), http.StatusBadRequest, want)
	for _, q := range []string{"access_token=%zz", "acc%65ss_token=x", "a=%zz&access_token"} {
		r = httptest.NewRequest(http.MethodPost, "/mcp?"+q, strings.NewReader(`{}`))
		checkRefusal(t, serve(h, r), http.StatusBadRequest, want)
	}
	r = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("a=1&access_token="+secretToken))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	checkRefusal(t, serve(h, r), http.StatusBadRequest, want)
	if rec.ran || calls.Load() != 0 {
		t.Fatalf("ran=%v, verifier called %d times", rec.ran, calls.Load())
	}
	// A form body without a token is handed on whole.
	r = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("a=1&b=2"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Authorization", "bearer "+secretToken)
	if w := serve(h, r); w.Code != http.StatusOK || string(rec.body) != "a=1&b=2" {
		t.Fatalf("status %d, body seen %q", w.Code, rec.body)
	}
}

func TestRequireSuccessCarriesPrincipal(t *testing.T) {
	var calls atomic.Int32
	h, rec := guarded(t, &calls, WithScopes("mcp"))
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		rec.ran = false
		w := serve(h, post(`{"jsonrpc":"2.0"}`, "Authorization", scheme+"  "+secretToken))
		if w.Code != http.StatusOK || !rec.ran || rec.principal.Subject != "ada" || string(rec.body) != `{"jsonrpc":"2.0"}` {
			t.Fatalf("%s: status %d, ran %v, principal %+v", scheme, w.Code, rec.ran, rec.principal)
		}
	}
}

func TestRequireServerWideScope(t *testing.T) {
	var calls atomic.Int32
	h, rec := guarded(t, &calls, WithScopes("mcp", "tools:call"))
	w := serve(h, post(`{}`, "Authorization", "Bearer narrow"))
	checkRefusal(t, w, http.StatusForbidden, `Bearer resource_metadata="`+prmURL+`", scope="mcp tools:call", error="insufficient_scope", error_description="the token lacks a scope this request needs"`)
	if rec.ran {
		t.Fatal("ran without the scope")
	}
}

func toolScopes(method, name string) []string {
	if method == "tools/call" && name == "delete-everything" {
		return []string{"admin"}
	}
	if method == "resources/read" && name == "secret://x" {
		return []string{"secrets"}
	}
	return nil
}

func TestRequireScopesForLegacyBody(t *testing.T) {
	var calls atomic.Int32
	h, rec := guarded(t, &calls, WithScopes("mcp"), WithScopesFor(toolScopes))
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete-everything","arguments":{"pad":"` + strings.Repeat("é", 1000) + `"}}}`
	w := serve(h, post(call, "Authorization", "Bearer "+secretToken, "Mcp-Protocol-Version", "2025-11-25"))
	checkRefusal(t, w, http.StatusForbidden, `Bearer resource_metadata="`+prmURL+`", scope="mcp admin", error="insufficient_scope", error_description="the token lacks a scope this request needs"`)
	if rec.ran {
		t.Fatal("the tool call ran without its scope")
	}
	// Another tool passes, and the next handler reads the body unchanged.
	other := strings.Replace(call, "delete-everything", "echo", 1)
	w = serve(h, post(other, "Authorization", "Bearer "+secretToken))
	if w.Code != http.StatusOK || !bytes.Equal(rec.body, []byte(other)) {
		t.Fatalf("status %d; body seen by next differs (%d bytes, want %d)", w.Code, len(rec.body), len(other))
	}
	// resources/read is judged by its uri.
	read := `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"secret://x"}}`
	if w := serve(h, post(read, "Authorization", "Bearer "+secretToken)); w.Code != http.StatusForbidden {
		t.Fatalf("resources/read secret: %d", w.Code)
	}
	// Escaped names are what the server reads too.
	esc := `{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call","params":{"n\u0061me":"delete-everything"}}`
	if w := serve(h, post(esc, "Authorization", "Bearer "+secretToken)); w.Code != http.StatusForbidden {
		t.Fatalf("escaped member names: %d", w.Code)
	}
	// What cannot be told is refused: duplicates, arrays, wrong case is
	// another member, non-JSON.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"delete-everything"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"delete-everything"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete-everything"}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"tools/list","params":{"name":"delete-everything"}}`,
		`not json`,
	} {
		rec.ran = false
		w := serve(h, post(body, "Authorization", "Bearer "+secretToken))
		if w.Code != http.StatusBadRequest || rec.ran {
			t.Fatalf("%s: status %d, ran %v", body, w.Code, rec.ran)
		}
	}
}

func TestRequirePeekLimit(t *testing.T) {
	var calls atomic.Int32
	h, rec := guarded(t, &calls, WithScopesFor(toolScopes), WithLimits(Limits{MaxPeekBytes: 100}))
	small := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if w := serve(h, post(small, "Authorization", "Bearer "+secretToken)); w.Code != http.StatusOK || string(rec.body) != small {
		t.Fatalf("small body: %d %q", w.Code, rec.body)
	}
	rec.ran = false
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":"` + strings.Repeat("x", 100) + `"}}}`
	if w := serve(h, post(big, "Authorization", "Bearer "+secretToken)); w.Code != http.StatusRequestEntityTooLarge || rec.ran {
		t.Fatalf("body over the peek limit: %d, ran %v", w.Code, rec.ran)
	}
	// GET carries no method: only server-wide scopes apply.
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+secretToken)
	if w := serve(h, r); w.Code != http.StatusOK {
		t.Fatalf("GET: %d", w.Code)
	}
}

// failingBody fails the test if read.
type failingBody struct{ t *testing.T }

func (b failingBody) Read([]byte) (int, error) {
	b.t.Error("the body was read on the 2026-07-28 header path")
	return 0, io.EOF
}
func (failingBody) Close() error { return nil }

func TestRequireScopesForModernHeaders(t *testing.T) {
	var calls atomic.Int32
	var seen [][2]string
	h := Require(stubVerifier(&calls), WithScopesFor(func(method, name string) []string {
		seen = append(seen, [2]string{method, name})
		return toolScopes(method, name)
	}))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	modern := func(method, name string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Body = failingBody{t}
		r.Header.Set("Authorization", "Bearer "+secretToken)
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", method)
		if name != "" {
			r.Header.Set("Mcp-Name", name)
		}
		return r
	}
	if w := serve(h, modern("tools/call", "delete-everything")); w.Code != http.StatusForbidden {
		t.Fatalf("modern delete-everything: %d", w.Code)
	}
	if w := serve(h, modern("tools/call", "=?base64?ZGVsZXRlLWV2ZXJ5dGhpbmc=?=")); w.Code != http.StatusForbidden {
		t.Fatalf("base64 Mcp-Name: %d", w.Code)
	}
	if w := serve(h, modern("tools/call", "echo")); w.Code != http.StatusOK {
		t.Fatalf("modern echo: %d", w.Code)
	}
	if w := serve(h, modern("tools/list", "")); w.Code != http.StatusOK {
		t.Fatalf("modern tools/list: %d", w.Code)
	}
	want := [][2]string{{"tools/call", "delete-everything"}, {"tools/call", "delete-everything"}, {"tools/call", "echo"}, {"tools/list", ""}}
	if !slices.Equal(seen, want) {
		t.Fatalf("ScopesFor saw %v", seen)
	}
	// A legacy request's Mcp-Method header is not trusted: the body decides.
	r := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete-everything"}}`,
		"Authorization", "Bearer "+secretToken, "Mcp-Method", "tools/list", "Mcp-Name", "echo")
	if w := serve(h, r); w.Code != http.StatusForbidden {
		t.Fatalf("legacy request with misleading headers: %d", w.Code)
	}
	// A modern tools/call without Mcp-Name is judged by its body.
	r = post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete-everything"}}`,
		"Authorization", "Bearer "+secretToken, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call")
	if w := serve(h, r); w.Code != http.StatusForbidden {
		t.Fatalf("modern call without Mcp-Name: %d", w.Code)
	}
}

func TestPeekBodyRestoresExactly(t *testing.T) {
	for _, size := range []int{0, 1, 99, 100, 101, 5000} {
		data := bytes.Repeat([]byte{0, 'a', 0xff, '\n'}, size/4+1)[:size]
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(data))
		got, over, err := peekBody(r, 100)
		if err != nil || over != (size > 100) || (!over && !bytes.Equal(got, data)) {
			t.Fatalf("size %d: over=%v err=%v", size, over, err)
		}
		rest, err := io.ReadAll(r.Body)
		if err != nil || !bytes.Equal(rest, data) {
			t.Fatalf("size %d: the body handed on differs", size)
		}
	}
}

func TestRequireNeverLogsTheToken(t *testing.T) {
	var calls atomic.Int32
	var logs bytes.Buffer
	h, _ := guarded(t, &calls, WithScopes("admin"), WithRequireLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	for _, tok := range []string{secretToken, "down", "expired-" + secretToken[:10]} {
		serve(h, post(`{}`, "Authorization", "Bearer "+tok))
	}
	if !strings.Contains(logs.String(), "insufficient scope") || !strings.Contains(logs.String(), "invalid token") || !strings.Contains(logs.String(), "could not be verified") {
		t.Fatalf("refusals not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "s3cr3t") {
		t.Fatalf("the log carries a token:\n%s", logs.String())
	}
}
