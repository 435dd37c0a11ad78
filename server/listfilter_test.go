package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// metaAs is the 2026-07-28 _meta of a client named name.
func metaAs(name string) map[string]any {
	m := modernMeta()
	m[mcp.MetaClientInfo] = map[string]any{"name": name, "version": "1"}
	return m
}

func TestListFilterPagesOverKeptEntries(t *testing.T) {
	allowed := map[string]bool{"b": true, "c": true, "f": true, "g": true, "j": true, "p-b": true, "file:///b": true}
	var seen []server.ListKind
	filter := func(r *server.Request, kind server.ListKind, name string) bool {
		seen = append(seen, kind)
		switch r.Peer.ClientInfo.Name {
		case "limited":
			return allowed[name]
		case "nobody":
			return false
		}
		return true
	}
	// WithListCaching after the filter must not make per-caller lists public.
	s := server.New(mcp.Implementation{Name: "s", Version: "1"}, server.WithLimits(server.Limits{PageSize: 3}),
		server.WithListFilter(filter), server.WithListCaching(0, mcp.CachePublic))
	for _, n := range strings.Split("a b c d e f g h i j", " ") {
		addNamed(t, s, n)
	}
	for _, n := range []string{"p-a", "p-b"} {
		if err := server.AddPrompt(s, &mcp.Prompt{Name: n}, func(context.Context, *server.PromptRequest, map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"file:///a", "file:///b"} {
		if err := server.AddResource(s, &mcp.Resource{URI: u, Name: u}, func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	p := connect(t, s)

	for client, want := range map[string]string{"limited": "[b c f g j] in 2 pages", "everyone": "[a b c d e f g h i j] in 4 pages", "nobody": "[] in 1 pages"} {
		names, pages := listAll(t, p, metaAs(client))
		if got := fmt.Sprintf("%v in %d pages", names, pages); got != want {
			t.Errorf("%s: tools/list gave %s, want %s", client, got, want)
		}
	}

	var prompts mcp.ListPromptsResult
	decodeResult(t, p.call("prompts/list", map[string]any{"_meta": metaAs("limited")}), &prompts)
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "p-b" {
		t.Errorf("prompts/list for limited: %+v", prompts.Prompts)
	}
	r := p.call("resources/list", map[string]any{"_meta": metaAs("limited")})
	var resources mcp.ListResourcesResult
	decodeResult(t, r, &resources)
	if len(resources.Resources) != 1 || resources.Resources[0].URI != "file:///b" {
		t.Errorf("resources/list for limited: %+v", resources.Resources)
	}
	if !strings.Contains(string(r.Result), `"cacheScope":"private"`) {
		t.Errorf("a filtered list must be private to its caller: %s", r.Result)
	}
	kinds := map[server.ListKind]bool{}
	for _, k := range seen {
		kinds[k] = true
	}
	if !kinds[server.ListTools] || !kinds[server.ListPrompts] || !kinds[server.ListResources] {
		t.Errorf("the filter was asked about %v", kinds)
	}

	// A hidden tool is only hidden: calling it still reaches its handler,
	// where rights belong.
	var res mcp.CallToolResult
	decodeResult(t, p.call("tools/call", map[string]any{"name": "a", "arguments": map[string]any{}, "_meta": metaAs("limited")}), &res)
	if res.IsError {
		t.Errorf("call of a hidden tool: %+v", res)
	}
}
