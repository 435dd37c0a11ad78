package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/otc"
)

// TestGatewayOTCCallersHaveTheirPersona: a caller of the gateway's Open
// Tool Calling listener is the identity its key names, as on the MCP
// endpoint: it lists the tools its persona allows, and a call of a tool
// its persona denies is refused, whatever the tool's OTC id.
func TestGatewayOTCCallersHaveTheirPersona(t *testing.T) {
	bin := testenv.Toolwire(t)
	aliceKey, _ := policy.NewKey()
	bobKey, _ := policy.NewKey()
	otcAddr := closedPort(t)
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
otc_listen: %s
auth:
  api_keys:
    alice: %q
    bob: %q
personas:
  analyst:
    identities: [alice]
    tools: {allow: ["one__get-sum"]}
  ops:
    identities: [bob]
    tools: {allow: ["*"]}
upstreams:
  one:
    command: [%q, serve, --stdio, --data-dir, ""]
`, otcAddr, policy.HashKey(aliceKey), policy.HashKey(bobKey), bin))
	startGateway(t, "--config", cfg)
	ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
	defer cancel()
	names := func(key string) ([]string, map[string]string) {
		c, err := otc.NewClient("http://"+otcAddr, otc.WithBearerToken(key))
		if err != nil {
			t.Fatal(err)
		}
		tools, err := c.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		ids := map[string]string{}
		for _, tl := range tools {
			out = append(out, tl.Name)
			ids[tl.Name] = tl.ID
		}
		return out, ids
	}
	aliceSees, _ := names(aliceKey)
	bobSees, ids := names(bobKey)
	var envName string
	for _, n := range bobSees {
		if strings.HasSuffix(n, "one__get_env") {
			envName = n
		}
	}
	if envName == "" || len(aliceSees) != 1 || !strings.HasSuffix(aliceSees[0], "one__get_sum") || slices.Contains(aliceSees, envName) {
		t.Fatalf("alice (analyst) sees %v; bob (ops) sees %v", aliceSees, bobSees)
	}
	alice, err := otc.NewClient("http://"+otcAddr, otc.WithBearerToken(aliceKey))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := alice.Call(ctx, ids[envName], map[string]any{}); err == nil && res.Success {
		t.Fatalf("alice called %s, which her persona denies: %+v", envName, res)
	}
	bob, err := otc.NewClient("http://"+otcAddr, otc.WithBearerToken(bobKey))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := bob.Call(ctx, ids[envName], map[string]any{}); err != nil || !res.Success {
		t.Fatalf("bob's call of %s: %v %+v", envName, err, res)
	}
}
