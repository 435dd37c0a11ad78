package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

type forecast struct {
	Conditions string   `json:"conditions"`
	Alerts     []string `json:"alerts"`
	Wind       *struct {
		Speed float64 `json:"speed"`
	} `json:"wind"`
}

// outputServer hosts a tool whose output is a *struct ("forecast", nil when
// the city is "nowhere") and one whose output is a slice ("primes", nil when
// n is 0).
func outputServer(t *testing.T) *server.Server {
	t.Helper()
	s := newTestServer(t)
	type cityIn struct {
		City string `json:"city"`
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *server.CallRequest, in cityIn) (*forecast, error) {
		if in.City == "nowhere" {
			return nil, nil
		}
		return &forecast{Conditions: "sunny"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	type nIn struct {
		N int `json:"n"`
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "primes"}, func(ctx context.Context, req *server.CallRequest, in nIn) ([]int, error) {
		if in.N == 0 {
			return nil, nil
		}
		return []int{2, 3, 5}[:in.N], nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "counts"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (map[string]int, error) {
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// listed returns each tool's outputSchema as listed.
func listed(t *testing.T, p *peer, params any) map[string]json.RawMessage {
	t.Helper()
	var list mcp.ListToolsResult
	decodeResult(t, p.call("tools/list", params), &list)
	out := map[string]json.RawMessage{}
	for _, tool := range list.Tools {
		out[tool.Name] = tool.OutputSchema
	}
	return out
}

// rawStructured returns the result's structuredContent member as sent
// ("" when absent), telling null from absent.
func rawStructured(t *testing.T, r *jsonrpc.Response) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("unexpected error %d: %s", r.Error.Code, r.Error.Message)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatal(err)
	}
	return string(m["structuredContent"])
}

// TestPointerOutputIsAnObject: a tool whose output is a *struct has an
// object outputSchema (no type array at the root), listed to legacy sessions
// too, and its calls carry structuredContent in both eras.
func TestPointerOutputIsAnObject(t *testing.T) {
	s := outputServer(t)
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	modern := connect(t, s)
	for era, schemas := range map[string]map[string]json.RawMessage{
		"legacy": listed(t, legacy, nil),
		"modern": listed(t, modern, map[string]any{"_meta": modernMeta()}),
	} {
		if !strings.HasPrefix(string(schemas["forecast"]), `{"type":"object",`) {
			t.Errorf("%s: forecast outputSchema = %s", era, schemas["forecast"])
		}
	}
	want := `{"conditions":"sunny","alerts":null,"wind":null}`
	args := map[string]any{"city": "x"}
	if got := rawStructured(t, legacy.call("tools/call", map[string]any{"name": "forecast", "arguments": args})); got != want {
		t.Errorf("legacy structuredContent = %s, want %s", got, want)
	}
	if got := rawStructured(t, modern.call("tools/call", map[string]any{"name": "forecast", "arguments": args, "_meta": modernMeta()})); got != want {
		t.Errorf("modern structuredContent = %s, want %s", got, want)
	}
}

// TestNilPointerOutputIsAToolBug: a nil *struct output breaks its object
// outputSchema; the caller gets -32603 saying the tool returned nil.
func TestNilPointerOutputIsAToolBug(t *testing.T) {
	s := outputServer(t)
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	modern := connect(t, s)
	args := map[string]any{"city": "nowhere"}
	for _, r := range []*jsonrpc.Response{
		legacy.call("tools/call", map[string]any{"name": "forecast", "arguments": args}),
		modern.call("tools/call", map[string]any{"name": "forecast", "arguments": args, "_meta": modernMeta()}),
	} {
		e := wantError(t, r, jsonrpc.CodeInternalError)
		if !strings.Contains(e.Message, "returned nil") || !strings.Contains(e.Message, "outputSchema") {
			t.Errorf("message %q does not say the tool returned nil", e.Message)
		}
	}
}

// TestSliceOutput: a slice output's schema root is "array"; a nil slice is
// sent as [] (it matches the schema); legacy sessions see neither the schema
// nor structuredContent, only the text block.
func TestSliceOutput(t *testing.T) {
	s := outputServer(t)
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	modern := connect(t, s)
	if got := listed(t, modern, map[string]any{"_meta": modernMeta()})["primes"]; !strings.HasPrefix(string(got), `{"type":"array",`) {
		t.Errorf("modern: primes outputSchema = %s", got)
	}
	if got := listed(t, legacy, nil)["primes"]; got != nil {
		t.Errorf("legacy: primes outputSchema = %s", got)
	}
	r := modern.call("tools/call", map[string]any{"name": "primes", "arguments": map[string]any{"n": 0}, "_meta": modernMeta()})
	if got := rawStructured(t, r); got != "[]" {
		t.Errorf("modern nil slice: structuredContent = %s, want []", got)
	}
	if got := text(t, callResult(t, r)); got != "[]" {
		t.Errorf("modern nil slice: text = %q, want []", got)
	}
	r = legacy.call("tools/call", map[string]any{"name": "primes", "arguments": map[string]any{"n": 2}})
	if got := rawStructured(t, r); got != "" {
		t.Errorf("legacy: structuredContent = %s, want none", got)
	}
	if got := text(t, callResult(t, r)); got != "[2,3]" {
		t.Errorf("legacy: text = %q", got)
	}
}

// TestNilMapOutput: a nil map output is sent as {}, which its object schema
// accepts, in both eras.
func TestNilMapOutput(t *testing.T) {
	s := outputServer(t)
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	if got := rawStructured(t, legacy.call("tools/call", map[string]any{"name": "counts"})); got != "{}" {
		t.Errorf("legacy: structuredContent = %s, want {}", got)
	}
	modern := connect(t, s)
	if got := rawStructured(t, modern.call("tools/call", map[string]any{"name": "counts", "_meta": modernMeta()})); got != "{}" {
		t.Errorf("modern: structuredContent = %s, want {}", got)
	}
}

// TestLegacyCallsFollowTheListedSchema: a tool listed to legacy sessions
// without outputSchema (its root is not an object) reaches them without
// structuredContent, even when a value happens to be an object.
func TestLegacyCallsFollowTheListedSchema(t *testing.T) {
	s := newTestServer(t)
	if err := server.AddRawTool(s, &mcp.Tool{Name: "either", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"anyOf":[{"type":"object"},{"type":"array"}]}`)},
		func(ctx context.Context, req *server.CallRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"a":1}`}}, StructuredContent: json.RawMessage(`{"a":1}`)}, nil
		}); err != nil {
		t.Fatal(err)
	}
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	if got := listed(t, legacy, nil)["either"]; got != nil {
		t.Errorf("legacy: outputSchema = %s", got)
	}
	if got := rawStructured(t, legacy.call("tools/call", map[string]any{"name": "either"})); got != "" {
		t.Errorf("legacy: structuredContent = %s, want none", got)
	}
	modern := connect(t, s)
	if got := rawStructured(t, modern.call("tools/call", map[string]any{"name": "either", "_meta": modernMeta()})); got != `{"a":1}` {
		t.Errorf("modern: structuredContent = %s", got)
	}
}
