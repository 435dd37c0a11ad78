package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

func newTestServer(t *testing.T, opts ...server.Option) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "test-server", Version: "1.2.3"}, opts...)
	type sumIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type sumOut struct {
		Sum float64 `json:"sum"`
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "add", Description: "adds"}, func(ctx context.Context, req *server.CallRequest, in sumIn) (sumOut, error) {
		return sumOut{in.A + in.B}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestInitializeNegotiatesVersion(t *testing.T) {
	for requested, want := range map[string]string{
		"2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18", "2025-03-26": "2025-03-26",
		"2024-11-05": "2025-11-25", "1999-01-01": "2025-11-25", "2026-07-28": "2025-11-25",
	} {
		p := connect(t, newTestServer(t, server.WithInstructions("be nice")))
		res := p.initialize(requested)
		if res.ProtocolVersion != want {
			t.Errorf("initialize %s: got %s, want %s", requested, res.ProtocolVersion, want)
		}
		if res.ServerInfo.Name != "test-server" || res.ServerInfo.Version != "1.2.3" || res.Instructions != "be nice" {
			t.Errorf("initialize result %+v", res)
		}
		if res.Capabilities.Tools == nil || !res.Capabilities.Tools.ListChanged {
			t.Errorf("tools capability not declared: %+v", res.Capabilities)
		}
	}
}

func TestInitializeResultIsLegacyShaped(t *testing.T) {
	p := connect(t, newTestServer(t))
	r := p.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "c", "version": "1"}})
	if strings.Contains(string(r.Result), "resultType") {
		t.Errorf("legacy result carries resultType: %s", r.Result)
	}
	r = p.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "c", "version": "1"}})
	wantError(t, r, jsonrpc.CodeInvalidRequest)
	wantError(t, p.call("initialize", nil), jsonrpc.CodeInvalidParams)
}

func TestOnlyPingBeforeInitialize(t *testing.T) {
	p := connect(t, newTestServer(t))
	if r := p.call("ping", nil); r.Error != nil || string(r.Result) != "{}" {
		t.Errorf("ping before initialize: %+v %s", r.Error, r.Result)
	}
	e := wantError(t, p.call("tools/list", nil), jsonrpc.CodeInvalidParams)
	if !strings.Contains(e.Message, "initialize") {
		t.Errorf("error does not say what to do: %s", e.Message)
	}
	p.initialize("2025-11-25")
	if r := p.call("tools/list", nil); r.Error != nil {
		t.Errorf("tools/list after initialize: %v", r.Error)
	}
}

func TestUnknownMethod(t *testing.T) {
	p := connect(t, newTestServer(t))
	p.initialize("2025-11-25")
	wantError(t, p.call("tools/frobnicate", nil), jsonrpc.CodeMethodNotFound)
	// server/discover and subscriptions/listen belong to 2026-07-28.
	wantError(t, p.call("server/discover", nil), jsonrpc.CodeMethodNotFound)
	wantError(t, p.call("tools/frobnicate", map[string]any{"_meta": modernMeta()}), jsonrpc.CodeMethodNotFound)
	// ping and initialize-era methods are gone in 2026-07-28.
	wantError(t, p.call("ping", map[string]any{"_meta": modernMeta()}), jsonrpc.CodeMethodNotFound)
}

func TestModernRequestNeedsNoInitialize(t *testing.T) {
	p := connect(t, newTestServer(t))
	r := p.call("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}, "_meta": modernMeta()})
	var raw map[string]json.RawMessage
	decodeResult(t, r, &raw)
	if string(raw["resultType"]) != `"complete"` {
		t.Errorf("resultType = %s", raw["resultType"])
	}
	if !strings.Contains(string(raw["_meta"]), `"io.modelcontextprotocol/serverInfo":{"name":"test-server","version":"1.2.3"}`) {
		t.Errorf("serverInfo missing from _meta: %s", raw["_meta"])
	}
	if string(raw["structuredContent"]) != `{"sum":3}` {
		t.Errorf("structuredContent = %s", raw["structuredContent"])
	}
}

func TestModernMetaErrors(t *testing.T) {
	p := connect(t, newTestServer(t))
	// Missing clientCapabilities.
	e := wantError(t, p.call("tools/list", map[string]any{"_meta": map[string]any{mcp.MetaProtocolVersion: "2026-07-28"}}), jsonrpc.CodeInvalidParams)
	if !strings.Contains(e.Message, mcp.MetaClientCapabilities) {
		t.Errorf("message does not name the missing key: %s", e.Message)
	}
	// Missing protocolVersion.
	wantError(t, p.call("tools/list", map[string]any{"_meta": map[string]any{mcp.MetaClientCapabilities: map[string]any{}}}), jsonrpc.CodeInvalidParams)
	// Unsupported version.
	m := modernMeta()
	m[mcp.MetaProtocolVersion] = "2099-01-01"
	e = wantError(t, p.call("server/discover", map[string]any{"_meta": m}), mcp.CodeUnsupportedProtocolVersion)
	var data mcp.UnsupportedVersionData
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Requested != "2099-01-01" || len(data.Supported) != 4 || data.Supported[0] != "2026-07-28" {
		t.Errorf("data = %+v", data)
	}
	// A legacy version in _meta is not a modern request either.
	m[mcp.MetaProtocolVersion] = "2025-11-25"
	wantError(t, p.call("tools/list", map[string]any{"_meta": m}), mcp.CodeUnsupportedProtocolVersion)
}

func TestDiscover(t *testing.T) {
	p := connect(t, newTestServer(t, server.WithInstructions("hi")))
	var d mcp.DiscoverResult
	decodeResult(t, p.call("server/discover", map[string]any{"_meta": modernMeta()}), &d)
	if d.ResultType != mcp.ResultComplete || d.Instructions != "hi" || d.TTLMs == nil || d.CacheScope != mcp.CachePublic {
		t.Errorf("discover = %+v", d)
	}
	if len(d.SupportedVersions) != 4 || d.SupportedVersions[0] != "2026-07-28" {
		t.Errorf("supported = %v", d.SupportedVersions)
	}
	if d.Capabilities.Tools == nil || d.Meta[mcp.MetaServerInfo] == nil {
		t.Errorf("capabilities or serverInfo missing: %+v", d)
	}
}

func TestDuplicateInFlightID(t *testing.T) {
	s := newTestServer(t)
	block := make(chan struct{})
	if err := server.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		<-block
		return "done", nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	p.sendRaw(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"block"}}`)
	p.sendRaw(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"block"}}`)
	r := testwait.Recv(t, p.other, "the refusal of the duplicate id")
	wantError(t, r, jsonrpc.CodeInvalidRequest)
	close(block)
	r = testwait.Recv(t, p.other, "the first request's response")
	if r.Error != nil {
		t.Errorf("first request failed: %v", r.Error)
	}
}

// TestPeerKeepsDeclaredCapabilities: a session reports the capabilities its
// client declared in initialize exactly, and none when it declared none.
func TestPeerKeepsDeclaredCapabilities(t *testing.T) {
	s := newTestServer(t)
	for caps, want := range map[string][]string{
		`{}`: nil,
		`{"sampling":{},"experimental":{"x":{}}}`:         {"sampling"},
		`{"roots":{"listChanged":true},"elicitation":{}}`: {"roots", "elicitation"},
	} {
		ss := s.NewSession(nil)
		init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps +
			`,"clientInfo":{"name":"c","version":"1"}}}`)
		if r := serveOne(t, ss, init); r == nil || r.Error != nil {
			t.Fatalf("initialize with %s: %+v", caps, r)
		}
		got := ss.Peer().ClientCapabilities
		for _, c := range []string{"roots", "sampling", "elicitation"} {
			if has, w := got.Has(c), slices.Contains(want, c); has != w {
				t.Errorf("capabilities %s: Has(%q) = %t, want %t", caps, c, has, w)
			}
		}
		if (got.Experimental != nil) != strings.Contains(caps, "experimental") {
			t.Errorf("capabilities %s: experimental %v", caps, got.Experimental)
		}
		if got.Roots != nil && !got.Roots.ListChanged {
			t.Errorf("capabilities %s: roots.listChanged lost", caps)
		}
		ss.Close()
	}
}
