package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
)

// TestGatewaySessionOnlyForAPersona: a key holder that no persona matches
// may use nothing, so its initialize opens no session (403 naming why),
// while a key holder with a persona gets one.
func TestGatewaySessionOnlyForAPersona(t *testing.T) {
	keys, auth := apiKeys(t, "alice", "bob")
	alice, bob := keys[0], keys[1]
	cfg := writeConfig(t, t.TempDir(), auth+`
personas:
  analyst:
    identities: [alice]
    tools: {allow: ["*"]}
`+stdioUpstreams(testenv.Toolwire(t), "one"))
	g := startGateway(t, "--config", cfg)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	open := func(key string) (int, string, string) {
		resp := scalePost(t, g.url, "", "", initialize, http.Header{"Authorization": {"Bearer " + key}})
		return resp.StatusCode, testhttp.ReadBody(t, resp), resp.Header.Get("Mcp-Session-Id")
	}
	if status, body, sid := open(bob); status != http.StatusForbidden || sid != "" || !strings.Contains(body, "no persona admits api_key:bob") {
		t.Errorf("bob (no persona): %d %q session %q", status, body, sid)
	}
	if status, body, sid := open(alice); status != http.StatusOK || sid == "" {
		t.Errorf("alice (analyst): %d %q session %q", status, body, sid)
	}
}
