package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// A 2026-07-28 resources/read carries the cache hints its schema requires:
// the handler's, else ttlMs 0 and "private"; a legacy read carries none.
func TestReadResourceCacheHints(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "cache", Version: "1"})
	text := func(uri string) *mcp.ReadResourceResult {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, Text: "x"}}}
	}
	if err := server.AddResource(s, &mcp.Resource{URI: "a://plain", Name: "plain"}, func(_ context.Context, r *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return text(r.URI), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddResource(s, &mcp.Resource{URI: "a://hinted", Name: "hinted"}, func(_ context.Context, r *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
		res := text(r.URI)
		ttl := int64(30000)
		res.TTLMs, res.CacheScope = &ttl, mcp.CachePublic
		return res, nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	for uri, want := range map[string]string{"a://plain": `"ttlMs":0,"cacheScope":"private"`, "a://hinted": `"ttlMs":30000,"cacheScope":"public"`} {
		r := p.call("resources/read", map[string]any{"uri": uri, "_meta": modernMeta()})
		if r.Error != nil || !strings.Contains(string(r.Result), want) {
			t.Errorf("2026 read %s: %s %v", uri, r.Result, r.Error)
		}
	}
	lp := connect(t, s)
	lp.initialize("2025-11-25")
	r := lp.call("resources/read", map[string]any{"uri": "a://hinted"})
	if r.Error != nil || strings.Contains(string(r.Result), "ttlMs") || strings.Contains(string(r.Result), "cacheScope") {
		t.Errorf("legacy read: %s %v", r.Result, r.Error)
	}
}

// A handler that carries on without a capability the client lacks answers
// as it chose; only one that fails for want of it gets -32021.
func TestHandlerMayDoWithoutACapability(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "tolerant", Version: "1"})
	type none struct{}
	if err := server.AddTool(s, &mcp.Tool{Name: "maybe-ask"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		if _, err := req.Elicit(ctx, nameForm); err != nil {
			return "asked nobody", nil
		}
		return "asked", nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	res := callResult(t, p.call("tools/call", map[string]any{"name": "maybe-ask", "arguments": map[string]any{}, "_meta": modernMeta()}))
	if res.IsError || text(t, res) != "asked nobody" {
		t.Fatalf("tolerant handler: %+v", res)
	}
}
