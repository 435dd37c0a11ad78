package server_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestWithCapabilitiesDeclaresBeforeAnyItem: a server whose items come and
// go declares tools, prompts and resources (with listChanged) and
// completions from the start, serves empty lists, and keeps declaring
// them after its last item is removed; without the option it declares none
// of them.
func TestWithCapabilitiesDeclaresBeforeAnyItem(t *testing.T) {
	info := mcp.Implementation{Name: "t", Version: "1"}
	bare := server.New(info).CapabilitiesFor(mcp.EraLegacy)
	if bare.Tools != nil || bare.Prompts != nil || bare.Resources != nil || bare.Completions != nil {
		t.Fatalf("a server with nothing registered declares %+v", bare)
	}
	s := server.New(info, server.WithCapabilities(server.FeatureTools, server.FeaturePrompts, server.FeatureResources, server.FeatureCompletions, "unknown"))
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		c := s.CapabilitiesFor(era)
		if c.Tools == nil || !c.Tools.ListChanged || c.Prompts == nil || !c.Prompts.ListChanged ||
			c.Resources == nil || !c.Resources.ListChanged || c.Completions == nil {
			t.Errorf("%s: declares %+v", era, c)
		}
	}
	if err := server.AddRawTool(s, &mcp.Tool{Name: "a", InputSchema: []byte(`{"type":"object"}`)},
		func(context.Context, *server.CallRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}); err != nil {
		t.Fatal(err)
	}
	s.RemoveTool("a")
	if c := s.CapabilitiesFor(mcp.EraLegacy); c.Tools == nil {
		t.Error("the tools capability went with the last tool")
	}
	res, err := s.CallTool(context.Background(), "a", nil, nil)
	if err == nil && (res == nil || !res.IsError) {
		t.Errorf("a removed tool was called: %+v", res)
	}
}
