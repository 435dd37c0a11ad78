// Package interop runs toolwire's server against other SDKs' clients and
// asserts what each of them reads: regression tests for the interop
// defects RELIABILITY.md lists.
package interop

import (
	"context"
	"encoding/json"
	"testing"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

type wind struct {
	Speed float64 `json:"speed"`
}

type forecast struct {
	Conditions string   `json:"conditions"`
	Alerts     []string `json:"alerts"`
	Wind       *wind    `json:"wind"`
}

type cityIn struct {
	City string `json:"city"`
}

// outputServer serves, over Streamable HTTP on httptest, a tool whose
// output is a *struct (forecast), one whose output is a slice (primes) and
// one whose output is a struct (plain).
func outputServer(t *testing.T) string {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "interop", Version: "1.0.0"})
	if err := server.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *server.CallRequest, in cityIn) (*forecast, error) {
		return &forecast{Conditions: "sunny", Wind: &wind{Speed: 3}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "primes"}, func(ctx context.Context, req *server.CallRequest, in struct{}) ([]int, error) {
		return []int{2, 3, 5}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "plain"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (forecast, error) {
		return forecast{Conditions: "rain"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return testmcp.ServeHTTP(t, s)
}

// connectMCPGo connects mcp-go's client: version "" lets it probe
// 2026-07-28 with server/discover (its default), "2025-11-25" pins the
// initialize handshake.
func connectMCPGo(t *testing.T, url, version string) *mcpclient.Client {
	t.Helper()
	c, err := mcpclient.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcpgo.Implementation{Name: "interop-mcp-go", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMCPGoListsPointerAndSliceOutputs: mcp-go's client lists every tool of
// a server with *struct and slice outputs, each with its outputSchema: the
// roots are "object" and "array" (not a type array, which mcp-go cannot
// decode: the whole tools/list was lost), and the nested nullable fields
// reach it intact. In 2025-11-25 the *struct output's object schema is
// listed too, and the array one is not (its root is not an object).
func TestMCPGoListsPointerAndSliceOutputs(t *testing.T) {
	url := outputServer(t)
	for _, c := range []struct {
		version, era string
		want         map[string]string // tool: outputSchema root type ("" for none)
	}{
		{"", mcp.Version20260728, map[string]string{"forecast": "object", "primes": "array", "plain": "object"}},
		{"2025-11-25", "2025-11-25", map[string]string{"forecast": "object", "primes": "", "plain": "object"}},
	} {
		t.Run(c.era, func(t *testing.T) {
			cl := connectMCPGo(t, url, c.version)
			if got := cl.ProtocolVersion(); got != c.era {
				t.Fatalf("mcp-go negotiated %q, want %q", got, c.era)
			}
			ctx := context.Background()
			list, err := cl.ListTools(ctx, mcpgo.ListToolsRequest{})
			if err != nil {
				t.Fatalf("mcp-go cannot list the tools: %v", err)
			}
			got := map[string]mcpgo.Tool{}
			for _, tool := range list.Tools {
				got[tool.Name] = tool
			}
			for name, root := range c.want {
				tool, ok := got[name]
				if !ok {
					t.Errorf("tool %s is not listed", name)
					continue
				}
				if tool.OutputSchema.Type != root {
					t.Errorf("tool %s: outputSchema type %q, want %q", name, tool.OutputSchema.Type, root)
				}
			}
			if p := got["forecast"].OutputSchema.Properties; p != nil {
				b, _ := json.Marshal(p["wind"])
				if string(b) == "null" || len(b) == 0 {
					t.Errorf("forecast: nested wind schema lost: %v", p)
				}
			}

			// The calls work and carry structuredContent where listed.
			for name, root := range c.want {
				var req mcpgo.CallToolRequest
				req.Params.Name = name
				req.Params.Arguments = map[string]any{"city": "x"}
				if name != "forecast" {
					req.Params.Arguments = map[string]any{}
				}
				res, err := cl.CallTool(ctx, req)
				if err != nil {
					t.Errorf("call %s: %v", name, err)
					continue
				}
				if res.IsError {
					t.Errorf("call %s: isError: %+v", name, res.Content)
				}
				if (res.StructuredContent != nil) != (root != "") {
					t.Errorf("call %s: structuredContent %v with outputSchema %q", name, res.StructuredContent, root)
				}
			}
		})
	}
}
