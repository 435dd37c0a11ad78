package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// recordingUpstream is an HTTP MCP server (the reference tools) that
// keeps the headers of every request it receives and the tools/call names
// it was asked for: its own log, independent of the gateway's.
type recordingUpstream struct {
	url string

	mu      sync.Mutex
	headers []http.Header
	calls   []string
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	t.Helper()
	u := &recordingUpstream{}
	u.url = serveMCP(t, referenceHandler(t), func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		u.mu.Lock()
		u.headers = append(u.headers, r.Header.Clone())
		if msg.Method == mcp.MethodCallTool {
			u.calls = append(u.calls, msg.Params.Name)
		}
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
	return u
}

// referenceHandler is a Streamable HTTP endpoint serving the reference
// tools.
func referenceHandler(t *testing.T) *streamable.Handler {
	t.Helper()
	s := server.New(reference.Info())
	if err := reference.Register(s); err != nil {
		t.Fatal(err)
	}
	return streamable.NewHandler(s)
}

func (u *recordingUpstream) called() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.calls)
}

func (u *recordingUpstream) received() []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.headers)
}

// jwtFor gets an access token for audience from the test issuer with the
// client credentials grant.
func jwtFor(t *testing.T, as *oauthtest.Server, clientID, secret, audience string) string {
	t.Helper()
	resp, err := http.Get(as.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		TokenEndpoint string `json:"token_endpoint"`
	}
	err = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.PostForm(md.TokenEndpoint, url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID},
		"client_secret": {secret}, "resource": {audience}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %v %+v (status %d)", err, tok, resp.StatusCode)
	}
	return tok.AccessToken
}

// runToolwire runs the binary with args and returns its stdout, stderr and
// exit status.
func runToolwire(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// auditJSONL reads the audit records `toolwire audit query` prints.
func auditJSONL(t *testing.T, args ...string) []audit.Record {
	t.Helper()
	out, stderr, code := runToolwire(t, append([]string{"audit", "query", "--format", "jsonl", "--limit", "0"}, args...)...)
	if code != 0 {
		t.Fatalf("toolwire audit query: exit %d\n%s", code, stderr)
	}
	var recs []audit.Record
	for line := range strings.Lines(out) {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestGatewayPersonasOnTheBinary: two personas and three identities (two
// API keys, one OAuth JWT from a local issuer) each see their own tools;
// denied calls are isError results that the audit trail holds and that
// never reach the upstream; no caller credential ever reaches an HTTP
// upstream, which gets only its own configured header.
func TestGatewayPersonasOnTheBinary(t *testing.T) {
	bin := testenv.Toolwire(t)
	up := newRecordingUpstream(t)
	as := oauthtest.New(t, oauthtest.Options{JWT: true, Clients: map[string]string{"carol": "carol-secret"}})
	keys, authYAML := apiKeys(t, "alice", "bob")
	aliceKey, bobKey := keys[0], keys[1]
	adminKey, _ := policy.NewKey()
	addr := testenv.FreeAddr(t)
	public := "http://" + addr + "/mcp"
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
listen: %s
public_url: %s
data_dir: state
%s  oauth:
    issuer: %s
admin:
  key_hash: %q
personas:
  analyst:
    identities: [alice, "oauth:carol"]
    tools: {allow: ["web__*", "local__get-sum"], deny: ["web__get-env"]}
  ops:
    identities: [bob]
    tools: {allow: ["*"]}
upstreams:
  web:
    url: %s
    headers: {X-Upstream-Credential: from-the-config}
  local:
    command: [%q, serve, --stdio, --data-dir, ""]
`, addr, public, authYAML, as.URL, policy.HashKey(adminKey), up.url, bin))
	g := startGateway(t, "--config", cfg, "--listen", addr)
	carolJWT := jwtFor(t, as, "carol", "carol-secret", public)

	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			ctx := t.Context()
			alice, bob, carol := connectAs(t, g.url, aliceKey, era), connectAs(t, g.url, bobKey, era),
				connectAs(t, g.url, carolJWT, era)
			all, mine := testmcp.ToolNames(t, bob), testmcp.ToolNames(t, alice)
			if !slices.Contains(all, "web__get-env") || !slices.Contains(all, "local__echo") || len(mine) >= len(all) {
				t.Fatalf("bob sees %v, alice %v", all, mine)
			}
			for _, n := range mine {
				if n != "local__get-sum" && (!strings.HasPrefix(n, "web__") || n == "web__get-env") {
					t.Errorf("alice sees %s", n)
				}
			}
			if got := testmcp.ToolNames(t, carol); !slices.Equal(got, mine) {
				t.Errorf("carol (OAuth, persona analyst) sees %v, alice %v", got, mine)
			}
			// No persona admits callers without credentials: 401.
			if status, challenge, _ := postInitialize(t, g.url); status != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Bearer ") {
				t.Errorf("anonymous: %d %q", status, challenge)
			}

			before := len(up.called())
			res, err := carol.CallTool(ctx, "web__get-env", map[string]any{})
			if client.CodeOf(err) != client.CodeToolError || res == nil || !strings.Contains(testmcp.Text(res), `tools.deny "web__get-env"`) {
				t.Fatalf("carol's denied call: %+v %v", res, err)
			}
			if _, err := alice.CallTool(ctx, "local__echo", map[string]any{"message": "no"}); client.CodeOf(err) != client.CodeToolError {
				t.Fatalf("alice's denied call: %v", err)
			}
			if res, err := alice.CallTool(ctx, "web__echo", map[string]any{"message": "yes"}); err != nil || res.IsError {
				t.Fatalf("alice's allowed call: %+v %v", res, err)
			}
			if got := up.called()[before:]; !slices.Equal(got, []string{"echo"}) {
				t.Errorf("the upstream was asked for %v; want only the allowed echo", got)
			}
		})
	}

	// The audit trail, read by the CLI, holds the denials with their rules.
	denied := auditJSONL(t, "--config", cfg, "--outcome", "denied")
	byWho := map[string]int{}
	for _, r := range denied {
		byWho[r.Identity+" "+r.Tool]++
		if r.Persona != "analyst" || !strings.Contains(r.Error, "analyst") {
			t.Errorf("denied record: %+v", r)
		}
	}
	if byWho["oauth:carol web__get-env"] != 2 || byWho["api_key:alice local__echo"] != 2 {
		t.Errorf("denied records: %v", byWho)
	}
	if ok := auditJSONL(t, "--config", cfg, "--identity", "api_key:alice", "--outcome", "ok", "--tool", "web__*"); len(ok) != 2 {
		t.Errorf("alice's allowed calls in the audit: %d, want 2", len(ok))
	}

	// No caller credential reached the upstream; its own did, every time.
	for _, h := range up.received() {
		for _, secret := range []string{aliceKey, bobKey, carolJWT} {
			for name, vs := range h {
				for _, v := range vs {
					if strings.Contains(v, secret) {
						t.Fatalf("a caller's credential reached the upstream in %s", name)
					}
				}
			}
		}
		if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
			t.Errorf("the upstream received caller-like credentials: %v", h)
		}
		if h.Get("X-Upstream-Credential") != "from-the-config" {
			t.Errorf("the upstream's own credential is missing: %v", h)
		}
	}
	if len(up.received()) == 0 {
		t.Fatal("the upstream received nothing")
	}
	out, _, code := runToolwire(t, "audit", "verify", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, "ok:") {
		t.Errorf("audit verify: exit %d\n%s", code, out)
	}

	// The admin page is served on the admin listener, behind its key.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(g.admin + "/admin/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 != 3 || !strings.Contains(loc, "/admin/login") {
		t.Errorf("the admin page without a login: %d %q", resp.StatusCode, loc)
	}

	// explain says the same as the gateway did.
	out, stderr, code := runToolwire(t, "gateway", "explain", "--config", cfg, "--identity", "oauth:carol")
	if code != 0 || !regexpLine(out, `tool\s+web__get-env\s+denied\s+web__get-env`) || !regexpLine(out, `tool\s+web__echo\s+allowed\s+web__\*`) {
		t.Errorf("explain: exit %d\n%s%s", code, out, stderr)
	}
}

func TestGatewayHashKey(t *testing.T) {
	out, _, code := runToolwire(t, "gateway", "hash-key")
	var key, hash string
	if _, err := fmt.Sscanf(out, "key:  %s\nhash: %s\n", &key, &hash); err != nil || code != 0 {
		t.Fatalf("hash-key: exit %d, %q: %v", code, out, err)
	}
	if !policy.IsKeyFormat(key) || hash != policy.HashKey(key) {
		t.Errorf("hash-key printed %q and %q", key, hash)
	}
	cmd := exec.Command(testenv.Toolwire(t), "gateway", "hash-key", "--stdin")
	cmd.Stdin = strings.NewReader(key + "\n")
	got, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(got)) != hash {
		t.Errorf("hash-key --stdin: %q %v, want %s", got, err, hash)
	}
	cmd = exec.Command(testenv.Toolwire(t), "gateway", "hash-key", "--stdin")
	cmd.Stdin = strings.NewReader("hunter2\n")
	if out, err := cmd.CombinedOutput(); err == nil || strings.Contains(string(out), "hunter2") {
		t.Errorf("hash-key --stdin of something that is no key: %q %v", out, err)
	}
}

// TestGatewayUpstreamOAuthClientCredentials: an upstream that requires
// OAuth gets the gateway's own token, obtained with the client credentials
// grant from the issuer its Protected Resource Metadata names, never a
// caller's.
func TestGatewayUpstreamOAuthClientCredentials(t *testing.T) {
	bin := testenv.Toolwire(t)
	as := oauthtest.New(t, oauthtest.Options{JWT: true, Clients: map[string]string{"gateway": "gateway-secret"}})
	h := referenceHandler(t)
	var mu sync.Mutex
	var bearers []string
	var protected http.Handler
	resource := serveMCP(t, h, func(w http.ResponseWriter, r *http.Request, _ http.Handler) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			mu.Lock()
			bearers = append(bearers, tok)
			mu.Unlock()
		}
		protected.ServeHTTP(w, r)
	})
	v, err := auth.NewJWTVerifier(as.URL, resource)
	if err != nil {
		t.Fatal(err)
	}
	prm, err := auth.MetadataURL(resource)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.Require(v, auth.WithResourceMetadata(prm))(h))
	mux.Handle(auth.MetadataPath("/mcp"), auth.MetadataHandler(auth.ResourceMetadata{Resource: resource, AuthorizationServers: []string{as.URL}}))
	protected = mux

	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
upstreams:
  secure:
    url: %s
    oauth: {client_id: gateway, client_secret: "${TW_TEST_SECRET}"}
`, resource))
	cmd := exec.Command(bin, "gateway", "--config", cfg, "--listen", "127.0.0.1:0", "--admin-listen", "off")
	cmd.Env = append(cmd.Environ(), "TW_TEST_SECRET=gateway-secret")
	g := waitGateway(t, cmd)
	c := connectAs(t, g.url, "", mcp.EraModern)
	res, err := c.CallTool(t.Context(), "secure__echo", map[string]any{"message": "through OAuth"})
	if err != nil || !strings.Contains(testmcp.Text(res), "through OAuth") {
		t.Fatalf("call through the protected upstream: %+v %v\n%s", res, err, g.log.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bearers) == 0 {
		t.Fatal("the upstream received no token")
	}
	for _, tok := range bearers {
		info, ok := as.Verify(tok)
		if !ok || info.Client != "gateway" || info.Resource != resource {
			t.Errorf("the upstream got a token for %+v (known %v)", info, ok)
		}
	}
	if strings.Contains(g.log.String(), "gateway-secret") {
		t.Error("the client secret appears in the gateway's log")
	}
}
