package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/mcp"
)

// seenRequest is one request an upstream received: its JSON-RPC method
// and the bearer token it carried.
type seenRequest struct{ method, bearer string }

// TestGatewayTokenExchange: an upstream `toolwire serve --auth-issuer
// --auth-audience` behind the gateway with oauth: token_exchange serves the
// calls of two OAuth callers, each arriving with a token the issuer made
// by RFC 8693 exchange, whose subject is that caller and whose audience is
// the upstream; no caller's own token ever reaches it (a proxy in front of
// it records every request's token); each caller's token is exchanged
// once (cached); an expired caller token is refused by the gateway; an
// API-key caller is refused with an isError naming the upstream (or, with
// on_api_key: static, served with the gateway's own token); a failed
// exchange is an isError naming the upstream and is audited. The same
// upstream has a pinned argument, forced on every call through the binary.
func TestGatewayTokenExchange(t *testing.T) {
	var skew atomic.Int64 // the issuer's clock, ahead of or behind the real one
	as := oauthtest.New(t, oauthtest.Options{JWT: true,
		Clients: map[string]string{"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret", "gateway": "gateway-secret"},
		Now:     func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})

	// toolwire serve, reached through a proxy that records what it gets.
	serveAddr := testenv.FreeAddr(t)
	var mu sync.Mutex
	var seen []seenRequest
	upstream := inspectingProxy(t, "http://"+serveAddr+"/mcp", func(w http.ResponseWriter, r *http.Request, body []byte, proxy http.Handler) {
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		seen = append(seen, seenRequest{msg.Method, bearer})
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	})
	startServe(t, nil, "--data-dir", "", "--addr", serveAddr, "--auth-issuer", as.URL, "--auth-audience", upstream)

	keys, authYAML := apiKeys(t, "dave")
	addr := testenv.FreeAddr(t)
	public := "http://" + addr + "/mcp"
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: %s
public_url: %s
data_dir: state
%s  oauth:
    issuer: %s
upstreams:
  tickets:
    url: %s
    oauth:
      client_id: gateway
      client_secret: "${TW_TEST_SECRET}"
      token_exchange:
        token_endpoint: %s/token
        client_id: gateway
        client_secret: "${TW_TEST_SECRET}"
        audience: %s
    tools:
      get-sum:
        description: Adds 40 to a.
        pin: {b: 40}
  desk:
    url: %s
    oauth:
      client_id: gateway
      client_secret: "${TW_TEST_SECRET}"
      token_exchange: {token_endpoint: %s/token, client_id: gateway, client_secret: "${TW_TEST_SECRET}", on_api_key: static}
`, addr, public, authYAML, as.URL, upstream, as.URL, upstream, upstream, as.URL))
	cmd := exec.Command(testenv.Toolwire(t), "gateway", "--config", cfg, "--listen", addr, "--admin-listen", "off")
	t.Setenv("TW_TEST_SECRET", "gateway-secret") // for the gateway and for audit query
	cmd.Env = append(cmd.Environ(), "XDG_STATE_HOME="+t.TempDir())
	g := waitGateway(t, cmd)

	callers := map[string]string{
		"alice": jwtFor(t, as, "alice", "alice-secret", public),
		"bob":   jwtFor(t, as, "bob", "bob-secret", public),
	}
	ctx := t.Context()
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		for who, tok := range callers {
			c := connectAs(t, g.url, tok, era)
			for i := range 2 {
				msg := fmt.Sprintf("%s %v %d", who, era, i)
				res, err := c.CallTool(ctx, "tickets__echo", map[string]any{"message": msg})
				if err != nil || !strings.Contains(testmcp.Text(res), msg) {
					t.Fatalf("%s (%v): echo through the exchange: %+v %v\n%s", who, era, res, err, g.log.String())
				}
			}
			// The pinned argument: out of the schema, forced on the call.
			res, err := c.CallTool(ctx, "tickets__get-sum", map[string]any{"a": 2})
			if err != nil || !strings.Contains(testmcp.Text(res)+mustJSON(t, res.StructuredContent), "42") {
				t.Fatalf("%s (%v): get-sum with b pinned to 40: %+v %v", who, era, res, err)
			}
			res, err = c.CallTool(ctx, "tickets__get-sum", map[string]any{"a": 2, "b": 1})
			if client.CodeOf(err) != client.CodeToolError || !strings.Contains(testmcp.Text(res), `argument "b"`) {
				t.Fatalf("%s (%v): get-sum with another b: %+v %v", who, era, res, err)
			}
		}
	}

	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	subjects := map[string]int{}
	for _, r := range got {
		for who, tok := range callers {
			if r.bearer == tok {
				t.Fatalf("%s's own token reached the upstream (%s)", who, r.method)
			}
		}
		if r.method != mcp.MethodCallTool {
			continue
		}
		info, ok := as.Verify(r.bearer)
		if !ok || info.Resource != upstream || info.Client != "gateway" {
			t.Errorf("a call reached the upstream with a token for %+v (known %v)", info, ok)
		}
		subjects[info.Subject]++
	}
	// Each caller: 2 echoes and 1 get-sum in each era (the refused call
	// never reached it).
	if subjects["alice"] != 6 || subjects["bob"] != 6 || len(subjects) != 2 {
		t.Errorf("calls by subject at the upstream: %v", subjects)
	}
	if n := as.Exchanges(); n != 2 {
		t.Errorf("%d token exchanges, want 2 (one per caller, then cached)", n)
	}

	// An expired caller token never gets past the gateway.
	skew.Store(int64(-3 * time.Hour))
	expired := jwtFor(t, as, "carol", "carol-secret", public)
	skew.Store(0)
	if status, _, _ := postInitialize(t, g.url, "Authorization", "Bearer "+expired); status != http.StatusUnauthorized {
		t.Errorf("an expired caller token: HTTP %d, want 401", status)
	}

	// An API-key caller has no token to exchange: refused, naming the upstream.
	res, err := connectAs(t, g.url, keys[0], mcp.EraModern).CallTool(ctx, "tickets__echo", map[string]any{"message": "m"})
	if client.CodeOf(err) != client.CodeToolError || !strings.Contains(testmcp.Text(res), `"tickets"`) || !strings.Contains(testmcp.Text(res), "no OAuth access token") {
		t.Errorf("an API-key caller: %+v %v", res, err)
	}

	// Where on_api_key is static, the API-key caller is served with the
	// upstream's own credentials: the gateway's client-credentials token.
	dave := connectAs(t, g.url, keys[0], mcp.EraModern)
	mu.Lock()
	from := len(seen)
	mu.Unlock()
	res, err = dave.CallTool(ctx, "desk__echo", map[string]any{"message": "static"})
	if err != nil || !strings.Contains(testmcp.Text(res), "static") {
		t.Fatalf("an API-key caller under on_api_key static: %+v %v", res, err)
	}
	mu.Lock()
	later := slices.Clone(seen[from:])
	mu.Unlock()
	calls := 0
	for _, r := range later {
		if r.method != mcp.MethodCallTool {
			continue
		}
		calls++
		if info, ok := as.Verify(r.bearer); !ok || info.Subject != "gateway" {
			t.Errorf("the API-key caller's call reached the upstream as %+v (known %v)", info, ok)
		}
	}
	if calls != 1 {
		t.Errorf("%d calls reached the upstream for the API-key caller's one", calls)
	}

	// A token the issuer no longer honours: the exchange fails.
	carol := jwtFor(t, as, "carol", "carol-secret", public)
	as.RevokeAccess()
	res, err = connectAs(t, g.url, carol, mcp.EraModern).CallTool(ctx, "tickets__echo", map[string]any{"message": "m"})
	text := testmcp.Text(res)
	if client.CodeOf(err) != client.CodeToolError || !strings.Contains(text, `"tickets"`) || !strings.Contains(text, "token exchange") || strings.Contains(text, carol) {
		t.Errorf("a failed exchange: %+v %v", res, err)
	}
	recs := auditJSONL(t, "--config", cfg, "--identity", "oauth:carol")
	if len(recs) != 1 || recs[0].Outcome != "upstream_error" || !strings.Contains(recs[0].Error, "token exchange") || recs[0].Upstream != "tickets" {
		t.Errorf("the failed exchange's audit records: %+v", recs)
	}
	if denied := auditJSONL(t, "--config", cfg, "--outcome", "denied", "--tool", "tickets__get-sum"); len(denied) != 4 {
		t.Errorf("%d denied get-sum records, want 4", len(denied))
	}
	for _, secret := range append([]string{"gateway-secret", carol, expired}, callers["alice"], callers["bob"]) {
		if strings.Contains(g.log.String(), secret) {
			t.Error("a secret or a caller's token is in the gateway's log")
		}
	}
}

// TestGatewayCheckShowsExchangeAndPins: --check says which upstream is
// called as each caller, and which tools are overridden with what pinned,
// never printing the exchange's secret.
func TestGatewayCheckShowsExchangeAndPins(t *testing.T) {
	up := serveMCP(t, referenceHandler(t), nil)
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
upstreams:
  tickets:
    url: %s
    oauth:
      token_exchange: {token_endpoint: "http://127.0.0.1:9/token", client_id: gw, client_secret: s3cr3t-exchange, scopes: [t.write]}
    tools:
      get-sum: {title: Add forty, pin: {b: 40}}
`, up))
	r := runCLI(t, "gateway", "--check", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"upstream tickets: calls as each caller, its token exchanged at http://127.0.0.1:9/token as client gw (resource " + up + ", scopes t.write); callers without an OAuth token refused",
		"upstream tickets: tool get-sum: title replaced, pinned b=40",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--check lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "s3cr3t-exchange") {
		t.Error("--check printed the exchange's client secret")
	}
}
