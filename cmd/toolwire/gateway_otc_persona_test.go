package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// TestGatewayOTCCallersHaveTheirPersona: a caller of the gateway's Open
// Tool Calling listener is the identity its key names, as on the MCP
// endpoint: it lists the tools its persona allows, and a call of a tool
// its persona denies is refused, whatever the tool's OTC id; a caller no
// persona admits is refused outright.
func TestGatewayOTCCallersHaveTheirPersona(t *testing.T) {
	keys, auth := apiKeys(t, "alice", "bob", "carol")
	otcAddr := testenv.FreeAddr(t)
	cfg := writeConfig(t, t.TempDir(), "otc_listen: "+otcAddr+"\n"+auth+`
personas:
  analyst:
    identities: [alice]
    tools: {allow: ["one__get-sum"]}
  ops:
    identities: [bob]
    tools: {allow: ["*"]}
`+stdioUpstreams(testenv.Toolwire(t), "one"))
	startGateway(t, "--config", cfg)
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()
	alice, aliceSees := otcTools(t, ctx, otcAddr, keys[0])
	bob, bobSees := otcTools(t, ctx, otcAddr, keys[1])
	envName := otcName(t, bobSees, "one__get_env")
	if _, ok := aliceSees[envName]; ok || len(aliceSees) != 1 {
		t.Fatalf("alice (analyst) sees %v; bob (ops) sees %v", aliceSees, bobSees)
	}
	otcName(t, aliceSees, "one__get_sum")
	if res, err := alice.Call(ctx, bobSees[envName], map[string]any{}); err == nil && res.Success {
		t.Fatalf("alice called %s, which her persona denies: %+v", envName, res)
	}
	if res, err := bob.Call(ctx, bobSees[envName], map[string]any{}); err != nil || !res.Success {
		t.Fatalf("bob's call of %s: %v %+v", envName, err, res)
	}
	// carol has a key but no persona: refused (403, naming her), as on the
	// MCP endpoint; /health stays open.
	for path, want := range map[string]int{"/tools": http.StatusForbidden, "/health": http.StatusOK} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+otcAddr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+keys[2])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || want == http.StatusForbidden && !strings.Contains(string(body), "no persona admits api_key:carol") {
			t.Errorf("carol GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
}
