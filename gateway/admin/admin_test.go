package admin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/testhttp"
)

const testKey = "twk_admin-test-key-0123456789"

// fakeSource is a gateway as the page sees it.
type fakeSource struct {
	ups            []gateway.UpstreamStatus
	tools, prompts []gateway.Route
}

func (f *fakeSource) Upstreams() []gateway.UpstreamStatus { return f.ups }
func (f *fakeSource) Tools() []gateway.Route              { return f.tools }
func (f *fakeSource) Prompts() []gateway.Route            { return f.prompts }

// clock is a settable clock for WithClock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuf is a log sink safe for the server's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type env struct {
	srv   *httptest.Server
	h     *handler
	clock *clock
	src   *fakeSource
	store audit.Store
	logs  *syncBuf
}

func testPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.New([]policy.Persona{
		{Name: "ops", Match: policy.Match{Identities: []string{"ops-key"}},
			Tools: policy.Rules{Allow: []string{"*"}, Deny: []string{"*delete*"}}, Prompts: policy.Rules{Allow: []string{"*"}}},
		{Name: "viewer", Match: policy.Match{Anonymous: true}, Tools: policy.Rules{Allow: []string{"*__read*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newEnv serves a handler over a fake gateway and an SQLite audit store
// (nil when noAudit) on httptest, with a clock at 2026-03-01 12:00 UTC.
func newEnv(t *testing.T, noAudit bool, opts ...Option) *env {
	t.Helper()
	e := &env{clock: &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, logs: &syncBuf{}}
	e.src = &fakeSource{
		ups: []gateway.UpstreamStatus{
			{Name: "alpha", State: gateway.StateReady, Transport: "in-process", Tools: 2, Since: e.clock.t.Add(-time.Hour)},
			{Name: "beta", State: gateway.StateDown, Transport: "stdio", Restarts: 3, LastError: "exit status 1"},
		},
		tools: []gateway.Route{
			{Name: "alpha__read_file", Upstream: "alpha", Original: "read_file"},
			{Name: "alpha__delete_file", Upstream: "alpha", Original: "delete_file"},
		},
		prompts: []gateway.Route{{Name: "beta__greet", Upstream: "beta", Original: "greet"}},
	}
	p := testPolicy(t)
	cfg := Config{KeyHash: policy.HashKey(testKey), Gateway: e.src, Policy: func() *policy.Policy { return p },
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if !noAudit {
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "audit.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		e.store, cfg.Audit = st, st
	}
	h, err := NewHandler(cfg, append([]Option{WithClock(e.clock.now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.h = h.(*handler)
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e
}

// client is a browser-like client: it keeps cookies, does not follow
// redirects, and sends Origin with POSTs.
func (e *env) client(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, c *http.Client, method, u string, form url.Values, hdr map[string]string) resp {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, got := testhttp.Do(t, c, req)
	return resp{res.StatusCode, res.Header, got}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// token returns the CSRF token of the form in body.
func token(t *testing.T, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no csrf field in:\n%s", body)
	}
	return m[1]
}

// login loads the login form and posts key; it returns the response.
func (e *env) login(t *testing.T, c *http.Client, key string) resp {
	t.Helper()
	form := do(t, c, "GET", e.srv.URL+"/admin/login", nil, nil)
	if form.status != http.StatusOK {
		t.Fatalf("GET /admin/login: %d", form.status)
	}
	return do(t, c, "POST", e.srv.URL+"/admin/login",
		url.Values{"key": {key}, "csrf": {token(t, form.body)}}, map[string]string{"Origin": e.srv.URL})
}

// loggedIn returns a client with a session.
func (e *env) loggedIn(t *testing.T) *http.Client {
	t.Helper()
	c := e.client(t)
	if r := e.login(t, c, testKey); r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/" {
		t.Fatalf("login: %d %s\n%s", r.status, r.header.Get("Location"), r.body)
	}
	return c
}

func (e *env) get(t *testing.T, c *http.Client, path string) resp {
	t.Helper()
	return do(t, c, "GET", e.srv.URL+path, nil, nil)
}

func TestUnauthenticatedRedirects(t *testing.T) {
	e := newEnv(t, false)
	c := e.client(t)
	for _, p := range []string{"/admin/", "/admin/audit", "/admin/audit/verify", "/admin/nowhere"} {
		r := e.get(t, c, p)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/login" {
			t.Errorf("GET %s = %d %q, want 303 to /admin/login", p, r.status, r.header.Get("Location"))
		}
	}
	if r := do(t, c, "POST", e.srv.URL+"/admin/logout", url.Values{}, nil); r.status != http.StatusSeeOther {
		t.Errorf("POST /admin/logout without a session = %d, want 303", r.status)
	}
}

func TestLoginAndCookieFlags(t *testing.T) {
	e := newEnv(t, false)
	c := e.client(t)
	r := e.login(t, c, testKey)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/" {
		t.Fatalf("login = %d %q", r.status, r.header.Get("Location"))
	}
	var sess *http.Cookie
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == SessionCookie {
			sess = ck
		}
	}
	if sess == nil {
		t.Fatal("no session cookie set")
	}
	if !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Path != "/admin" || sess.Secure {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/admin, not Secure over plain HTTP", sess)
	}
	if n := len(sess.Value); n != 43 { // 32 bytes, unpadded base64url
		t.Errorf("session id has %d characters, want 43 (256 bits)", n)
	}
	if sess.MaxAge != int(DefaultSessionLifetime.Seconds()) {
		t.Errorf("MaxAge = %d", sess.MaxAge)
	}
	home := e.get(t, c, "/admin/")
	if home.status != http.StatusOK || !strings.Contains(home.body, "alpha") || !strings.Contains(home.body, "beta") {
		t.Fatalf("overview = %d:\n%s", home.status, home.body)
	}
	// Logged in, the login page sends to the overview.
	if r := e.get(t, c, "/admin/login"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/" {
		t.Errorf("GET /admin/login with a session = %d %q", r.status, r.header.Get("Location"))
	}
	if strings.Contains(e.logs.String(), testKey) {
		t.Error("the key was logged")
	}
}

func TestSecureCookieOverTLS(t *testing.T) {
	e := newEnv(t, true)
	srv := httptest.NewTLSServer(e.h)
	defer srv.Close()
	c := srv.Client()
	jar, _ := cookiejar.New(nil)
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	form := do(t, c, "GET", srv.URL+"/admin/login", nil, nil)
	r := do(t, c, "POST", srv.URL+"/admin/login", url.Values{"key": {testKey}, "csrf": {token(t, form.body)}},
		map[string]string{"Origin": srv.URL})
	if r.status != http.StatusSeeOther {
		t.Fatalf("login over TLS = %d\n%s", r.status, r.body)
	}
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == SessionCookie && !ck.Secure {
			t.Errorf("session cookie over TLS is not Secure: %+v", ck)
		}
	}
}

func TestLoginBadKey(t *testing.T) {
	e := newEnv(t, false)
	c := e.client(t)
	const wrong = "twk_wrong-key-that-must-not-be-logged"
	r := e.login(t, c, wrong)
	if r.status != http.StatusUnauthorized || !strings.Contains(r.body, "Wrong admin key") {
		t.Fatalf("bad key = %d\n%s", r.status, r.body)
	}
	if strings.Contains(r.header.Get("Set-Cookie"), SessionCookie+"=") {
		t.Error("a bad key got a session cookie")
	}
	if r := e.get(t, c, "/admin/"); r.status != http.StatusSeeOther {
		t.Errorf("after a bad key, GET /admin/ = %d", r.status)
	}
	if logs := e.logs.String(); strings.Contains(logs, wrong) || !strings.Contains(logs, "failed login") {
		t.Errorf("logs should say a login failed, without the key:\n%s", logs)
	}
	// An empty key is a bad key too.
	if r := e.login(t, c, ""); r.status != http.StatusUnauthorized {
		t.Errorf("empty key = %d", r.status)
	}
}

func TestLoginRateLimit(t *testing.T) {
	e := newEnv(t, true, WithLimits(Limits{MaxFailedLogins: 2, FailedLoginInterval: time.Minute}))
	c := e.client(t)
	for i := 0; i < 2; i++ {
		if r := e.login(t, c, "twk_nope"); r.status != http.StatusUnauthorized {
			t.Fatalf("bad login %d = %d", i, r.status)
		}
	}
	// Out of failures: even the right key waits.
	r := e.login(t, c, testKey)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("third login = %d (Retry-After %q)", r.status, r.header.Get("Retry-After"))
	}
	e.clock.add(time.Minute)
	if r := e.login(t, c, testKey); r.status != http.StatusSeeOther {
		t.Fatalf("login a minute later = %d\n%s", r.status, r.body)
	}
}

func TestSessionExpiry(t *testing.T) {
	e := newEnv(t, true, WithLimits(Limits{SessionTTL: time.Hour}))
	c := e.loggedIn(t)
	e.clock.add(59 * time.Minute)
	if r := e.get(t, c, "/admin/"); r.status != http.StatusOK {
		t.Fatalf("after 59m: %d", r.status)
	}
	e.clock.add(time.Minute)
	if r := e.get(t, c, "/admin/"); r.status != http.StatusSeeOther {
		t.Fatalf("after 60m: %d, want 303 to login", r.status)
	}
	if n := e.h.sess.len(); n != 0 {
		t.Errorf("%d sessions kept after expiry", n)
	}
}

func TestMaxSessions(t *testing.T) {
	e := newEnv(t, true, WithLimits(Limits{MaxSessions: 2}))
	first := e.loggedIn(t)
	e.clock.add(time.Second)
	second := e.loggedIn(t)
	e.clock.add(time.Second)
	third := e.loggedIn(t)
	if n := e.h.sess.len(); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
	if r := e.get(t, first, "/admin/"); r.status != http.StatusSeeOther {
		t.Errorf("oldest session still works: %d", r.status)
	}
	for i, c := range []*http.Client{second, third} {
		if r := e.get(t, c, "/admin/"); r.status != http.StatusOK {
			t.Errorf("session %d: %d", i+2, r.status)
		}
	}
}

func TestCSRF(t *testing.T) {
	e := newEnv(t, true)
	c := e.loggedIn(t)
	tok := token(t, e.get(t, c, "/admin/").body)
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  map[string]string
	}{
		{"foreign Origin", url.Values{"csrf": {tok}}, map[string]string{"Origin": "http://evil.example"}},
		{"cross-site fetch", url.Values{"csrf": {tok}}, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"foreign Referer", url.Values{"csrf": {tok}}, map[string]string{"Referer": "http://evil.example/x"}},
		{"no token", url.Values{}, map[string]string{"Origin": e.srv.URL}},
		{"wrong token", url.Values{"csrf": {"x" + tok}}, map[string]string{"Origin": e.srv.URL}},
	} {
		if r := do(t, c, "POST", e.srv.URL+"/admin/logout", tc.form, tc.hdr); r.status != http.StatusForbidden {
			t.Errorf("logout with %s = %d, want 403", tc.name, r.status)
		}
	}
	if r := e.get(t, c, "/admin/"); r.status != http.StatusOK {
		t.Fatalf("session ended by a refused logout: %d", r.status)
	}
	// GET never changes state.
	if r := e.get(t, c, "/admin/logout"); r.status != http.StatusMethodNotAllowed {
		t.Errorf("GET /admin/logout = %d, want 405", r.status)
	}
	// Login: a foreign Origin, and a form token without its cookie.
	fresh := e.client(t)
	form := e.get(t, fresh, "/admin/login")
	if r := do(t, fresh, "POST", e.srv.URL+"/admin/login", url.Values{"key": {testKey}, "csrf": {token(t, form.body)}},
		map[string]string{"Origin": "http://evil.example"}); r.status != http.StatusForbidden {
		t.Errorf("login from a foreign Origin = %d, want 403", r.status)
	}
	if r := do(t, e.client(t), "POST", e.srv.URL+"/admin/login", url.Values{"key": {testKey}, "csrf": {token(t, form.body)}},
		nil); r.status != http.StatusForbidden {
		t.Errorf("login with another browser's form token = %d, want 403", r.status)
	}
	// No Origin or Referer at all (Referrer-Policy no-referrer over plain
	// HTTP): the token alone decides.
	if r := do(t, fresh, "POST", e.srv.URL+"/admin/login", url.Values{"key": {testKey}, "csrf": {token(t, form.body)}},
		map[string]string{"Origin": "null"}); r.status != http.StatusSeeOther {
		t.Errorf("login with Origin null and a good token = %d, want 303", r.status)
	}
}

func TestLogout(t *testing.T) {
	e := newEnv(t, true)
	c := e.loggedIn(t)
	u, _ := url.Parse(e.srv.URL + "/admin/")
	old := c.Jar.Cookies(u)
	tok := token(t, e.get(t, c, "/admin/").body)
	r := do(t, c, "POST", e.srv.URL+"/admin/logout", url.Values{"csrf": {tok}}, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/login" {
		t.Fatalf("logout = %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	if r := e.get(t, c, "/admin/"); r.status != http.StatusSeeOther {
		t.Errorf("after logout: %d", r.status)
	}
	// The old cookie, replayed, is dead.
	replay := e.client(t)
	replay.Jar.SetCookies(u, old)
	if r := e.get(t, replay, "/admin/"); r.status != http.StatusSeeOther {
		t.Errorf("replayed cookie after logout: %d", r.status)
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, true)
	c := e.client(t)
	for _, p := range []string{"/admin/login", "/admin/"} {
		r := e.get(t, c, p)
		csp := r.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") ||
			!strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		for k, v := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
			if got := r.header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", p, k, got, v)
			}
		}
	}
	if r := e.get(t, c, "/admin/login"); strings.Contains(r.body, "<script") {
		t.Error("the login page has a script")
	}
	if r := e.get(t, c, "/admin/static/admin.css"); r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") {
		t.Errorf("CSS: %d %q", r.status, r.header.Get("Content-Type"))
	}
}

func TestOverviewPersonas(t *testing.T) {
	e := newEnv(t, true)
	c := e.loggedIn(t)
	body := e.get(t, c, "/admin/").body
	for _, want := range []string{
		"<th>ops</th>", "<th>viewer</th>", "alpha__read_file", "alpha__delete_file", "beta__greet",
		"exit status 1", "in-process", "stdio", "ready", "down",
		`<code>*delete*</code>`, `<code>*__read*</code>`, `<code>` + policy.NoRule + `</code>`,
		`title="denied by persona &#34;ops&#34;: tools.deny &#34;*delete*&#34;"`,
		"The audit log is off",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

func TestOverviewWithoutPolicy(t *testing.T) {
	e := newEnv(t, true)
	e.h.cfg.Policy = func() *policy.Policy { return nil }
	body := e.get(t, e.loggedIn(t), "/admin/").body
	if !strings.Contains(body, "No personas are configured") || strings.Contains(body, "<th>ops</th>") {
		t.Errorf("overview without a policy:\n%s", body)
	}
}

func TestEscaping(t *testing.T) {
	e := newEnv(t, false)
	const evil = `<script>alert("x")</script>`
	e.src.tools = append(e.src.tools, gateway.Route{Name: "alpha__" + evil, Upstream: "alpha", Original: evil})
	e.src.ups[1].LastError = "boom " + evil
	if err := e.store.Append(context.Background(), &audit.Record{Identity: "api_key:" + evil, Tool: evil,
		Method: "tools/call", Outcome: audit.OutcomeToolError, Error: "failed: " + evil}); err != nil {
		t.Fatal(err)
	}
	c := e.loggedIn(t)
	for _, p := range []string{"/admin/", "/admin/audit", "/admin/audit?identity=" + url.QueryEscape(evil)} {
		body := e.get(t, c, p).body
		if strings.Contains(body, "<script>") {
			t.Errorf("%s renders <script> unescaped", p)
		}
		if !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("%s does not show the escaped text", p)
		}
	}
}

// appendRecords adds n records, alternating identities alice and bob and
// tools alpha__read_file and beta__write, one minute apart from start.
func appendRecords(t *testing.T, st audit.Store, n int, start time.Time) {
	t.Helper()
	for i := 0; i < n; i++ {
		r := &audit.Record{Time: start.Add(time.Duration(i) * time.Minute), Method: "tools/call", Outcome: audit.OutcomeOK}
		if i%2 == 0 {
			r.Identity, r.Tool = "api_key:alice", "alpha__read_file"
		} else {
			r.Identity, r.Tool, r.Outcome, r.Error = "api_key:bob", "beta__write", audit.OutcomeDenied, "no rule"
		}
		if err := st.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

var seqCell = regexp.MustCompile(`<td class="num">(\d+)</td><td class="when">`)

// seqs lists the Seq column of an audit page.
func seqs(body string) []string {
	var out []string
	for _, m := range seqCell.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

var nextLink = regexp.MustCompile(`href="([^"]+)" id="next"`)

func TestAuditPaging(t *testing.T) {
	e := newEnv(t, false, WithLimits(Limits{PageSize: 3}))
	appendRecords(t, e.store, 7, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	c := e.loggedIn(t)
	path := "/admin/audit"
	var pages [][]string
	for i := 0; i < 5 && path != ""; i++ {
		r := e.get(t, c, path)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s = %d\n%s", path, r.status, r.body)
		}
		pages = append(pages, seqs(r.body))
		path = ""
		if m := nextLink.FindStringSubmatch(r.body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if got := fmt.Sprint(pages); got != "[[1 2 3] [4 5 6] [7]]" {
		t.Errorf("pages = %s", got)
	}
	// Paging keeps the filters.
	r := e.get(t, c, "/admin/audit?identity=api_key:alice")
	m := nextLink.FindStringSubmatch(r.body)
	if m == nil || !strings.Contains(m[1], "identity=api_key%3Aalice") || !strings.Contains(m[1], "after=5") {
		t.Fatalf("next link of a filtered page: %v", m)
	}
	r = e.get(t, c, strings.ReplaceAll(m[1], "&amp;", "&"))
	if got := fmt.Sprint(seqs(r.body)); got != "[7]" {
		t.Errorf("second filtered page = %s", got)
	}
	if !strings.Contains(r.body, `id="first"`) {
		t.Error("no link to the first page")
	}
}

func TestAuditFilters(t *testing.T) {
	e := newEnv(t, false)
	appendRecords(t, e.store, 6, time.Date(2026, 3, 1, 23, 58, 0, 0, time.UTC)) // 23:58 .. 00:03
	c := e.loggedIn(t)
	for _, tc := range []struct{ query, want string }{
		{"", "[1 2 3 4 5 6]"},
		{"identity=api_key:bob", "[2 4 6]"},
		{"identity=nobody", "[]"},
		{"tool=alpha__*", "[1 3 5]"},
		{"tool=beta__write", "[2 4 6]"},
		{"outcome=denied", "[2 4 6]"},
		{"since=2026-03-02", "[3 4 5 6]"},
		{"until=2026-03-01", "[1 2]"}, // a date as until is the end of that day
		{"since=2026-03-02T00:01:00Z&until=2026-03-02T00:03:00Z", "[4 5]"},
		{"identity=api_key:alice&since=2026-03-02", "[3 5]"},
		{"after=4", "[5 6]"},
	} {
		r := e.get(t, c, "/admin/audit?"+tc.query)
		if r.status != http.StatusOK {
			t.Errorf("%s: %d\n%s", tc.query, r.status, r.body)
			continue
		}
		if got := fmt.Sprint(seqs(r.body)); got != tc.want {
			t.Errorf("%s: seqs %s, want %s", tc.query, got, tc.want)
		}
	}
	// The form shows the filters back.
	body := e.get(t, c, "/admin/audit?identity=api_key:bob&outcome=denied").body
	if !strings.Contains(body, `value="api_key:bob"`) || !strings.Contains(body, `<option value="denied" selected>`) {
		t.Error("the filter form does not show the filters")
	}
}

func TestAuditBadParams(t *testing.T) {
	e := newEnv(t, false)
	c := e.loggedIn(t)
	for _, tc := range []struct{ query, param string }{
		{"after=x", "after"},
		{"after=-1", "after"},
		{"since=yesterday", "since"},
		{"until=2026-13-01", "until"},
		{"outcome=great", "outcome"},
		{"since=2026-03-02&until=2026-03-01T00:00:00Z", "until"},
		{"identity=" + strings.Repeat("a", maxParam+1), "identity"},
	} {
		r := e.get(t, c, "/admin/audit?"+tc.query)
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, "query parameter &#34;"+tc.param+"&#34;") {
			t.Errorf("%.40s: %d, want 400 naming %q\n%s", tc.query, r.status, tc.param, r.body)
		}
	}
}

func TestAuditVerify(t *testing.T) {
	e := newEnv(t, false)
	appendRecords(t, e.store, 3, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	c := e.loggedIn(t)
	r := e.get(t, c, "/admin/audit/verify")
	if r.status != http.StatusOK || !strings.Contains(r.body, "The chain is intact: 3 record(s) checked") {
		t.Fatalf("verify = %d\n%s", r.status, r.body)
	}
}

func TestAuditOff(t *testing.T) {
	e := newEnv(t, true)
	c := e.loggedIn(t)
	for _, p := range []string{"/admin/audit", "/admin/audit/verify"} {
		if r := e.get(t, c, p); r.status != http.StatusOK || !strings.Contains(r.body, "The audit log is off") {
			t.Errorf("%s without a store = %d\n%s", p, r.status, r.body)
		}
	}
}

func TestNotFound(t *testing.T) {
	e := newEnv(t, true)
	r := e.get(t, e.loggedIn(t), "/admin/nowhere/<b>")
	if r.status != http.StatusNotFound || strings.Contains(r.body, "<b>") {
		t.Errorf("unknown page = %d\n%s", r.status, r.body)
	}
}

func TestNewHandlerErrors(t *testing.T) {
	src := &fakeSource{}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no gateway", Config{KeyHash: policy.HashKey(testKey)}, "Gateway is required"},
		{"no key", Config{Gateway: src}, "KeyHash is required"},
		{"key in clear", Config{Gateway: src, KeyHash: testKey}, "not a hash"},
		{"bad hash", Config{Gateway: src, KeyHash: "sha256:zz"}, "KeyHash"},
	} {
		_, err := NewHandler(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: the error echoes the key", tc.name)
		}
	}
}
