package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/oauth"
)

// runCLIEnv runs the binary with extra environment.
func runCLIEnv(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	return runCLIIn(t, "", env, nil, args...)
}

// oauthServe is `toolwire serve --auth-issuer` trusting an oauthtest
// authorization server that mints JWTs; the client "machine" is
// pre-registered for the client credentials grant.
func oauthServe(t *testing.T) (*oauthtest.Server, string) {
	t.Helper()
	as := oauthtest.New(t, oauthtest.Options{JWT: true, ScopesSupported: []string{"mcp", "offline_access"},
		Clients: map[string]string{"machine": "machine-secret-42"}})
	p := startServe(t, nil, "--data-dir", "", "--auth-issuer", as.URL, "--auth-scopes", "mcp")
	return as, p.url
}

// loginWith runs `toolwire login URL --no-browser`, plays the browser with
// the authorization URL it prints on stderr (the fake authorization server
// approves at once and redirects to the CLI's loopback listener), and
// returns the run.
func loginWith(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), append([]string{"login", "--no-browser"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	l := startLogged(t, cmd, regexp.MustCompile(`^\s+(http://127\.0\.0\.1:\d+/authorize\?\S+)$`))
	if u, ok := l.first(t, "login's authorization URL"); ok {
		hc := &http.Client{Timeout: testwait.Limit} // follows the redirect to the loopback listener
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatalf("the browser's GET: %v\n%s", err, l.log.String())
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(page), "Authorization complete") {
			t.Fatalf("the browser ended on %d %q", resp.StatusCode, page)
		}
	}
	testwait.Closed(t, l.done, "toolwire login to end")
	code := exitCode(t, cmd.Wait()) // before the output is read: the run writes it
	return cliResult{out.String(), l.log.String(), code}
}

// refreshRefused asks the authorization server at asURL for tokens with
// the refresh token of clientID, which it must refuse (400 invalid_grant):
// rotated away or revoked.
func refreshRefused(t *testing.T, asURL, refreshToken, clientID, what string) {
	t.Helper()
	resp, err := http.PostForm(asURL+"/token", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {refreshToken}, "client_id": {clientID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("%s: %d, want 400 invalid_grant", what, resp.StatusCode)
	}
}

// storedToken is the one token file in dir, and its parsed record.
type storedToken struct {
	path   string
	record map[string]any
	token  map[string]any
}

func readTokenFile(t *testing.T, dir string) storedToken {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "token-*.json"))
	if len(files) != 1 {
		t.Fatalf("token files in %s: %v, want one", dir, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	tok, _ := rec["token"].(map[string]any)
	if tok == nil {
		t.Fatalf("no token in %s", files[0])
	}
	return storedToken{files[0], rec, tok}
}

func (s storedToken) get(k string) string { v, _ := s.token[k].(string); return v }

// TestOAuthLoginFlow: without a login, commands fail with the login hint
// and no flow starts; login stores the tokens with private modes; the
// commands then use them, refresh them (rotation) when they expire;
// logout deletes them. No output ever shows a token.
func TestOAuthLoginFlow(t *testing.T) {
	as, endpoint := oauthServe(t)
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state, envTokenDir + "=", envClientSecret + "="}
	dir := filepath.Join(state, "toolwire", "tokens")
	hint := "authorization required: run `toolwire login " + endpoint + "`"
	var outputs []cliResult
	run := func(args ...string) cliResult {
		r := runCLIEnv(t, env, args...)
		outputs = append(outputs, r)
		return r
	}

	// (a) Not logged in: the hint, exit 3 (ERR_MCP_TRANSPORT, as any 401),
	// no token file, and nothing asked of the authorization server.
	r := run("tools", endpoint)
	if r.code != 3 || !strings.Contains(r.stderr, hint) {
		t.Fatalf("tools before login: exit %d, stderr %q; want 3 and %q", r.code, r.stderr, hint)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Fatalf("files in the token directory before login: %v", files)
	}
	if auths, tokens, regs := as.Counts(); auths+tokens+regs != 0 {
		t.Fatalf("before login: %d authorizations, %d token requests, %d registrations; want none", auths, tokens, regs)
	}

	// (b) Login.
	r = loginWith(t, env, endpoint)
	outputs = append(outputs, r)
	if r.code != 0 {
		t.Fatalf("login: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"Logged in to " + endpoint, "authorization server: " + as.URL, "mcp offline_access", "access token expires: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("login's output lacks %q:\n%s", want, r.stdout)
		}
	}
	t.Logf("login:\n%s%s", r.stdout, r.stderr)
	first := readTokenFile(t, dir)
	if fi, err := os.Stat(first.path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v %v, want 0600", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("token directory mode: %v %v, want 0700", fi.Mode().Perm(), err)
	}
	if first.get("access_token") == "" || first.get("refresh_token") == "" || first.get("resource") != endpoint {
		t.Fatalf("stored token: resource %q, access %t, refresh %t", first.get("resource"), first.get("access_token") != "", first.get("refresh_token") != "")
	}
	secrets := []string{first.get("access_token"), first.get("refresh_token")}

	// (c) The commands use the stored token.
	r = run("tools", endpoint)
	if r.code != 0 || !strings.Contains(r.stdout, "echo") {
		t.Fatalf("tools after login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run("call", endpoint, "echo", "message=hi")
	if r.code != 0 || !strings.Contains(r.stdout, "hi") {
		t.Fatalf("call after login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	_, tokens0, _ := as.Counts()

	// (d) The access token has expired (as the client sees it): the next
	// command refreshes it first, and keeps the rotated refresh token.
	first.token["expiry"] = "2001-01-01T00:00:00Z"
	data, _ := json.Marshal(first.record)
	if err := os.WriteFile(first.path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r = run("tools", endpoint)
	if r.code != 0 {
		t.Fatalf("tools with an expired token: exit %d\n%s", r.code, r.stderr)
	}
	second := readTokenFile(t, dir)
	if second.get("refresh_token") == "" || second.get("refresh_token") == first.get("refresh_token") ||
		second.get("access_token") == first.get("access_token") {
		t.Fatal("the refreshed (rotated) tokens were not stored")
	}
	if exp, err := time.Parse(time.RFC3339, second.get("expiry")); err != nil || exp.Year() < 2002 {
		t.Fatalf("stored expiry %q after the refresh", second.get("expiry"))
	}
	_, tokens1, _ := as.Counts()
	if tokens1 != tokens0+1 || as.TokenForms()[tokens1-1].Get("grant_type") != "refresh_token" {
		t.Fatalf("token requests %d → %d; want one refresh", tokens0, tokens1)
	}
	// The old refresh token was rotated away at the authorization server.
	client, _ := second.token["client"].(map[string]any)
	refreshRefused(t, as.URL, first.get("refresh_token"), client["client_id"].(string), "the old refresh token")
	secrets = append(secrets, second.get("access_token"), second.get("refresh_token"))
	r = run("call", endpoint, "echo", "message=again")
	if r.code != 0 || !strings.Contains(r.stdout, "again") {
		t.Fatalf("call after the refresh: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// (e) Logout revokes the tokens at the authorization server (RFC 7009)
	// and deletes them; the old refresh token is refused there after; the
	// commands need a login again.
	t.Logf("tools before login: %s", outputs[0].stderr)
	current := readTokenFile(t, dir)
	secrets = append(secrets, current.get("access_token"), current.get("refresh_token"))
	r = run("logout", endpoint)
	t.Logf("logout: %s", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "Logged out of "+endpoint+": revoked the tokens at the authorization server") {
		t.Fatalf("logout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "token-*")); len(files) != 0 {
		t.Fatalf("token files after logout: %v", files)
	}
	// The refresh token, then the access token (which the server revoked
	// with the refresh token already).
	forms := as.RevocationForms()
	if len(forms) != 2 {
		t.Fatalf("%d revocation requests, want 2", len(forms))
	}
	for i, want := range []string{"refresh_token", "access_token"} {
		if f := forms[i]; f.Get("token_type_hint") != want || f.Get("token") != current.get(want) || f.Get("client_id") != client["client_id"] {
			t.Errorf("revocation request %d: hint %q, client %q; want the %s and the login's client", i, f.Get("token_type_hint"), f.Get("client_id"), want)
		}
	}
	if got := as.Revoked(); len(got) == 0 || got[0] != current.get("refresh_token") {
		t.Fatal("the refresh token was not revoked")
	}
	if _, ok := as.Verify(current.get("access_token")); ok {
		t.Error("the access token is still valid at the authorization server")
	}
	refreshRefused(t, as.URL, current.get("refresh_token"), client["client_id"].(string), "the refresh token after logout")
	r = run("tools", endpoint)
	if r.code != 3 || !strings.Contains(r.stderr, hint) {
		t.Fatalf("tools after logout: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run("logout", endpoint)
	if r.code != 0 || !strings.Contains(r.stdout, "Not logged in to "+endpoint) {
		t.Fatalf("second logout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// (g) No output showed a token.
	for i, o := range outputs {
		for _, s := range secrets {
			if strings.Contains(o.stdout, s) || strings.Contains(o.stderr, s) {
				t.Errorf("run %d printed a token:\n%s%s", i, o.stdout, o.stderr)
			}
		}
	}
}

// TestOAuthClientCredentials: --client-id with the secret from
// $TOOLWIRE_CLIENT_SECRET gets a token with the client credentials grant;
// nothing is stored; a wrong secret fails.
func TestOAuthClientCredentials(t *testing.T) {
	as, endpoint := oauthServe(t)
	dir := filepath.Join(t.TempDir(), "tokens")
	env := []string{envTokenDir + "=" + dir, envClientSecret + "=machine-secret-42"}
	r := runCLIEnv(t, env, "tools", endpoint, "--client-id", "machine")
	if r.code != 0 || !strings.Contains(r.stdout, "echo") {
		t.Fatalf("tools --client-id: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r2 := runCLIEnv(t, env, "call", endpoint, "echo", "message=machine", "--client-id", "machine")
	if r2.code != 0 || !strings.Contains(r2.stdout, "machine") {
		t.Fatalf("call --client-id: exit %d\n%s%s", r2.code, r2.stdout, r2.stderr)
	}
	auths, _, regs := as.Counts()
	if auths != 0 || regs != 0 {
		t.Fatalf("%d authorizations, %d registrations; want none", auths, regs)
	}
	var granted int
	for _, f := range as.TokenForms() {
		if f.Get("grant_type") == "client_credentials" && f.Get("resource") == endpoint {
			granted++
		}
	}
	if granted != 2 {
		t.Fatalf("%d client credentials grants for %s, want 2", granted, endpoint)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the machine client stored something in %s (%v)", dir, err)
	}
	for _, o := range []cliResult{r, r2} {
		if strings.Contains(o.stdout+o.stderr, "machine-secret-42") || strings.Contains(o.stdout+o.stderr, "eyJ") {
			t.Errorf("output shows a secret or a token:\n%s%s", o.stdout, o.stderr)
		}
	}

	bad := runCLIEnv(t, []string{envTokenDir + "=" + dir, envClientSecret + "=wrong"}, "tools", endpoint, "--client-id", "machine")
	if bad.code != 3 || !strings.Contains(bad.stderr, "invalid_client") || strings.Contains(bad.stderr, "wrong") {
		t.Fatalf("a wrong secret: exit %d, stderr %q", bad.code, bad.stderr)
	}
	if u := runCLI(t, "tools", "--client-id", "machine", "--", "true"); u.code != 2 {
		t.Fatalf("--client-id with a stdio server: exit %d, want 2", u.code)
	}
}

// TestLoginUsage: login and logout take one http(s) URL.
func TestLoginUsage(t *testing.T) {
	for _, args := range [][]string{
		{"login", "--", "node", "server.js"},
		{"logout", "--", "node", "server.js"},
		{"login"},
		{"login", "http://127.0.0.1:1/mcp", "extra"},
		{"login", "http://127.0.0.1:1/mcp", "--redirect-port", "70000"},
		{"login", "http://example.com/mcp"}, // no token is sent over plain http to a public host
	} {
		if r := runCLIEnv(t, []string{envTokenDir + "=" + t.TempDir()}, args...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", args, r.code, r.stderr)
		}
	}
}

// TestOAuthNotForOtherSchemes: a 401 that is not an OAuth challenge (Basic,
// an API key) is reported as it was, without the login hint.
func TestOAuthNotForOtherSchemes(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="mcp"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(hs.Close)
	r := runCLIEnv(t, []string{envTokenDir + "=" + t.TempDir()}, "tools", hs.URL+"/mcp")
	if r.code != 3 || !strings.Contains(r.stderr, "401") || strings.Contains(r.stderr, "toolwire login") {
		t.Fatalf("exit %d, stderr %q; want 3, the 401, no login hint", r.code, r.stderr)
	}
}

// TestOAuthLoginPreRegistered: login as a pre-registered confidential
// client (secret from $TOOLWIRE_CLIENT_SECRET) into --token-dir; the
// commands given the same --token-dir use the token; a token directory
// others can read is refused before any flow.
func TestOAuthLoginPreRegistered(t *testing.T) {
	as, endpoint := oauthServe(t)
	dir := filepath.Join(t.TempDir(), "tokens")
	env := []string{envTokenDir + "=", envClientSecret + "=machine-secret-42"}
	r := loginWith(t, env, endpoint, "--client-id", "machine", "--token-dir", dir, "--scope", "extra")
	if r.code != 0 || !strings.Contains(r.stdout, "machine (preregistered)") {
		t.Fatalf("login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, _, regs := as.Counts(); regs != 0 {
		t.Fatalf("%d registrations with a pre-registered client", regs)
	}
	if q := as.Authorizations[0]; q.Get("client_id") != "machine" || !strings.Contains(q.Get("scope"), "extra") {
		t.Fatalf("authorization request %v", q)
	}
	tok := readTokenFile(t, dir)
	if tools := runCLIEnv(t, []string{envTokenDir + "=", envClientSecret + "="}, "tools", endpoint, "--token-dir", dir); tools.code != 0 {
		t.Fatalf("tools --token-dir: exit %d\n%s", tools.code, tools.stderr)
	}
	if out := r.stdout + r.stderr; strings.Contains(out, "machine-secret-42") || strings.Contains(out, tok.get("access_token")) ||
		strings.Contains(out, tok.get("refresh_token")) {
		t.Fatalf("login printed a secret:\n%s", out)
	}

	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	n, _, _ := as.Counts()
	bad := runCLIEnv(t, env, "login", "--no-browser", endpoint, "--token-dir", open)
	if bad.code != 1 || !strings.Contains(bad.stderr, "chmod 700") {
		t.Fatalf("login into a 0755 directory: exit %d, stderr %q", bad.code, bad.stderr)
	}
	if m, _, _ := as.Counts(); m != n {
		t.Fatal("the flow started despite the open token directory")
	}
}

// TestOAuthLogoutLocalOnly: when the authorization server advertises no
// revocation endpoint, or the revocation fails, logout still deletes the
// tokens, says they were deleted locally only, and (on a failure) warns
// on stderr without showing a token.
func TestOAuthLogoutLocalOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		opts oauthtest.Options
		want string
	}{
		{"no revocation endpoint", oauthtest.Options{NoRevocation: true}, "advertises no revocation endpoint"},
		{"revocation fails", oauthtest.Options{RevocationStatus: http.StatusServiceUnavailable}, "the revocation failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Clients = map[string]string{"cli": ""}
			as := oauthtest.New(t, c.opts)
			dir := filepath.Join(t.TempDir(), "tokens")
			endpoint := "http://127.0.0.1:1/mcp"
			store := &oauth.FileStore{Dir: dir}
			tok := &oauth.Token{AccessToken: "access-token-secret-1", RefreshToken: "refresh-token-secret-1", TokenType: "Bearer",
				Resource: endpoint, Issuer: as.URL, Client: oauth.ClientInfo{ID: "cli", Issuer: as.URL, AuthMethod: "none"}}
			if err := store.Save(context.Background(), endpoint, tok); err != nil {
				t.Fatal(err)
			}
			r := runCLIEnv(t, []string{envTokenDir + "=" + dir}, "logout", endpoint)
			if r.code != 0 || !strings.Contains(r.stdout, "locally only") || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("logout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if c.opts.RevocationStatus != 0 && !strings.Contains(r.stderr, "warning: revoking the tokens") {
				t.Errorf("no warning on stderr: %q", r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, "token-secret") {
				t.Errorf("logout showed a token:\n%s%s", r.stdout, r.stderr)
			}
			if got, _ := store.Load(context.Background(), endpoint); got != nil {
				t.Error("the tokens survived logout")
			}
			if n := len(as.RevocationForms()); (c.opts.RevocationStatus != 0) != (n > 0) {
				t.Errorf("%d revocation requests", n)
			}
		})
	}
}
