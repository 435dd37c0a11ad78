package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
)

// postInitialize sends an initialize request to url with the headers
// given (name, value, ...) and returns the status, the WWW-Authenticate
// challenge and the body.
func postInitialize(t *testing.T, url string, headers ...string) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// reloadAndWait rewrites the config at dir, sends SIGHUP and waits until
// the gateway has logged one more applied reload.
func reloadAndWait(t *testing.T, g *gatewayProc, dir, text string) {
	t.Helper()
	before := strings.Count(g.log.String(), `msg="gateway: config reloaded"`)
	writeConfig(t, dir, text)
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return strings.Count(g.log.String(), `msg="gateway: config reloaded"`) > before
	}, g)
}

// TestGatewayAPIKeysWithoutPersonas: with auth.api_keys and no personas, a
// caller with a key may use everything and one without gets 401 with a
// Bearer challenge, never a session; `--check` says so. A persona saying
// anonymous: true, added by a reload, lets callers without credentials in
// with that persona's rights only, and removing it shuts them out again.
func TestGatewayAPIKeysWithoutPersonas(t *testing.T) {
	keys, auth := apiKeys(t, "alice")
	key := keys[0]
	dir := t.TempDir()
	base := auth + stdioUpstreams(testenv.Toolwire(t), "one")
	cfg := writeConfig(t, dir, base)

	out, stderr, code := runToolwire(t, "gateway", "--check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "access: no personas: every authenticated caller may use everything; callers without credentials are refused (401)") {
		t.Fatalf("--check: exit %d\n%s%s", code, out, stderr)
	}

	g := startGateway(t, "--config", cfg, "--watch-interval", "0")
	status, challenge, body := postInitialize(t, g.url)
	if status != http.StatusUnauthorized || challenge != "Bearer" || !strings.Contains(body, "requires an API key") {
		t.Fatalf("without a key: %d %q %s", status, challenge, body)
	}
	if status, _, body := postInitialize(t, g.url, "X-API-Key", key); status != http.StatusOK {
		t.Fatalf("with the key: %d %s", status, body)
	}
	alice := connectAs(t, g.url, key, mcp.EraModern)
	if names := testmcp.ToolNames(t, alice); !slices.Contains(names, "one__get-env") || !slices.Contains(names, "one__echo") {
		t.Fatalf("alice sees %v", names)
	}
	res, err := alice.CallTool(t.Context(), "one__get-env", map[string]any{})
	if err != nil || res.IsError {
		t.Fatalf("alice's call: %+v %v", res, err)
	}

	withGuest := base + `
personas:
  everyone:
    identities: [alice]
    tools: {allow: ["*"]}
  guest:
    anonymous: true
    tools: {allow: [one__echo]}
`
	reloadAndWait(t, g, dir, withGuest)
	anon := connectAs(t, g.url, "", mcp.EraModern)
	if names := testmcp.ToolNames(t, anon); !slices.Equal(names, []string{"one__echo"}) {
		t.Fatalf("anonymous with a guest persona sees %v", names)
	}
	if res, err := anon.CallTool(t.Context(), "one__get-env", map[string]any{}); client.CodeOf(err) != client.CodeToolError {
		t.Fatalf("anonymous get-env: %+v %v", res, err)
	}
	out, _, code = runToolwire(t, "gateway", "--check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "access: personas (everyone, guest) decide") || !strings.Contains(out, "callers without credentials get persona guest") {
		t.Fatalf("--check with a guest persona: exit %d\n%s", code, out)
	}

	reloadAndWait(t, g, dir, base+`
personas:
  everyone:
    identities: [alice]
    tools: {allow: ["*"]}
`)
	if status, challenge, _ := postInitialize(t, g.url); status != http.StatusUnauthorized || challenge != "Bearer" {
		t.Fatalf("without a key, once the guest persona is gone: %d %q", status, challenge)
	}
	out, _, _ = runToolwire(t, "gateway", "--check", "--config", cfg)
	if !strings.Contains(out, "callers without credentials are refused (401)") {
		t.Fatalf("--check without a guest persona:\n%s", out)
	}
	out, _, code = runToolwire(t, "gateway", "explain", "--config", cfg, "--identity", "anonymous")
	if code != 0 || !strings.Contains(out, "caller anonymous is refused (401)") {
		t.Fatalf("explain anonymous: exit %d\n%s", code, out)
	}
}

// TestGatewayOAuthSubjectIsNotAnAPIKey: an OAuth token whose subject reads
// "api_key:alice" (or "oauth:carol") is that subject only: it gets
// neither API key alice's persona nor carol's. Without a credential an
// OAuth gateway answers 401 with the challenge that names its Protected
// Resource Metadata.
func TestGatewayOAuthSubjectIsNotAnAPIKey(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{JWT: true, Clients: map[string]string{
		"api_key:alice": "s1", "oauth:carol": "s2", "carol": "s3"}})
	keys, auth := apiKeys(t, "alice")
	key := keys[0]
	addr := testenv.FreeAddr(t)
	public := "http://" + addr + "/mcp"
	cfg := writeConfig(t, t.TempDir(), "listen: "+addr+"\n"+auth+`  oauth:
    issuer: `+as.URL+`
personas:
  key-alice:
    identities: ["api_key:alice"]
    tools: {allow: ["*"]}
  token-carol:
    identities: ["oauth:carol"]
    tools: {allow: [one__echo]}
`+stdioUpstreams(testenv.Toolwire(t), "one"))
	g := startGateway(t, "--config", cfg, "--listen", addr)

	status, challenge, _ := postInitialize(t, g.url)
	if status != http.StatusUnauthorized || !strings.HasPrefix(challenge, `Bearer resource_metadata="`) {
		t.Fatalf("without a credential: %d %q", status, challenge)
	}
	if names := testmcp.ToolNames(t, connectAs(t, g.url, key, mcp.EraModern)); !slices.Contains(names, "one__get-env") {
		t.Fatalf("API key alice sees %v", names)
	}
	if names := testmcp.ToolNames(t, connectAs(t, g.url, jwtFor(t, as, "carol", "s3", public), mcp.EraModern)); !slices.Equal(names, []string{"one__echo"}) {
		t.Fatalf("oauth:carol sees %v", names)
	}
	// No persona admits those subjects: every request is refused (403),
	// naming the caller, in either era.
	for _, sub := range []struct{ id, secret string }{{"api_key:alice", "s1"}, {"oauth:carol", "s2"}} {
		for _, era := range []string{"modern", "legacy"} {
			r := runCLI(t, "tools", "--era", era, "-H", "Authorization: Bearer "+jwtFor(t, as, sub.id, sub.secret, public), g.url)
			if r.code != 3 || !strings.Contains(r.stderr, "403") || !strings.Contains(r.stderr, "no persona admits oauth:"+sub.id) {
				t.Errorf("%s: the token of subject %q lists tools: exit %d\n%s%s", era, sub.id, r.code, r.stdout, r.stderr)
			}
		}
	}
	out, _, code := runToolwire(t, "gateway", "explain", "--config", cfg, "--identity", "oauth:api_key:alice")
	if code != 0 || !strings.Contains(out, "caller oauth:api_key:alice matches no persona") {
		t.Errorf("explain oauth:api_key:alice: exit %d\n%s", code, out)
	}
}

// TestGatewayOTCWithAuth: the gateway's OTC listener authenticates like
// its MCP endpoint: with auth.api_keys configured, a caller without a key
// gets 401 there too, and one with a key (as a bearer token) may list and
// call.
func TestGatewayOTCWithAuth(t *testing.T) {
	keys, auth := apiKeys(t, "alice")
	otcAddr := testenv.FreeAddr(t)
	cfg := writeConfig(t, t.TempDir(), "otc_listen: "+otcAddr+"\n"+auth+stdioUpstreams(testenv.Toolwire(t), "one"))
	startGateway(t, "--config", cfg)
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()

	anon, err := otc.NewClient("http://" + otcAddr)
	if err != nil {
		t.Fatal(err)
	}
	var he *otc.HTTPError
	if _, err := anon.ListTools(ctx); !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		t.Fatalf("OTC tools without a key: %v", err)
	}
	if _, err := anon.Call(ctx, "toolwire_gateway.one__get_env", map[string]any{}); !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		t.Fatalf("OTC call without a key: %v", err)
	}

	alice, tools := otcTools(t, ctx, otcAddr, keys[0])
	res, err := alice.Call(ctx, tools[otcName(t, tools, "one__get_sum")], map[string]any{"a": 1, "b": 2})
	if err != nil || !res.Success {
		t.Fatalf("OTC call with the key: %v %+v", err, res)
	}
}
