package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

func TestRawTool(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "raw", Version: "1"})
	in := `{"type":"object","properties":{"q":{"type":"string","minLength":2}},"required":["q"],"x-vendor":{"keep":true}}`
	out := `{"type":"object","properties":{"hits":{"type":"integer"}},"required":["hits"]}`
	var seen string
	err := server.AddRawTool(s, &mcp.Tool{Name: "search.v2", InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out)},
		func(ctx context.Context, req *server.CallRequest) (*mcp.CallToolResult, error) {
			seen = string(req.Arguments)
			if strings.Contains(seen, "bad-output") {
				return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"hits":"many"}`)}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"hits":3}`}}, StructuredContent: json.RawMessage(`{"hits":3}`)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := s.Tool("search.v2")
	if string(tool.InputSchema) != in {
		t.Errorf("inputSchema not served as given: %s", tool.InputSchema)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	res := callResult(t, p.call("tools/call", map[string]any{"name": "search.v2", "arguments": map[string]any{"q": "go"}}))
	if res.IsError || string(res.StructuredContent) != `{"hits":3}` || seen != `{"q":"go"}` {
		t.Errorf("call: %+v (handler saw %s)", res, seen)
	}
	seen = ""
	res = callResult(t, p.call("tools/call", map[string]any{"name": "search.v2", "arguments": map[string]any{"q": "g"}}))
	if !res.IsError || seen != "" {
		t.Errorf("arguments failing the schema reached the handler: %+v", res)
	}
	e := wantError(t, p.call("tools/call", map[string]any{"name": "search.v2", "arguments": map[string]any{"q": "bad-output"}}), -32603)
	if !strings.Contains(e.Message, "outputSchema") {
		t.Errorf("output check: %s", e.Message)
	}

	var re *server.RegistrationError
	for _, c := range []struct {
		tool *mcp.Tool
		want string
	}{
		{&mcp.Tool{Name: "no schema"}, "name has"},
		{&mcp.Tool{Name: "noschema"}, "inputSchema is required"},
		{&mcp.Tool{Name: "dup", InputSchema: json.RawMessage(`{"type":"object","type":"string"}`)}, "duplicate"},
		{&mcp.Tool{Name: "arr", InputSchema: json.RawMessage(`{"type":"array"}`)}, `"type": "object"`},
		{&mcp.Tool{Name: "hdr", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`)}, "x-mcp-header"},
	} {
		err := server.AddRawTool(s, c.tool, func(context.Context, *server.CallRequest) (*mcp.CallToolResult, error) { return nil, nil })
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a RegistrationError mentioning %q", c.tool.Name, err, c.want)
		}
	}
}
