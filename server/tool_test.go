package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/server"
)

func noop(ctx context.Context, req *server.CallRequest, in map[string]any) (string, error) {
	return "", nil
}

func TestRegistrationErrors(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	if err := server.AddTool(s, &mcp.Tool{Name: "ok"}, noop); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool *mcp.Tool
		want string
	}{
		{&mcp.Tool{Name: "ok"}, "already registered"},
		{&mcp.Tool{Name: ""}, "empty"},
		{&mcp.Tool{Name: "has space"}, "' '"},
		{&mcp.Tool{Name: strings.Repeat("x", 129)}, "128"},
		{&mcp.Tool{Name: "d", InputSchema: json.RawMessage(`{"$schema":"https://example.com/dialect","type":"object"}`)}, "https://example.com/dialect"},
		{&mcp.Tool{Name: "e", InputSchema: json.RawMessage(`{"type":"array"}`)}, `"type": "object"`},
		{&mcp.Tool{Name: "f", InputSchema: json.RawMessage(`{"type":`)}, "invalid inputSchema"},
		{&mcp.Tool{Name: "g", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://evil.example/x"}}}`)}, "not dereferenced"},
		{nil, "nil"},
	}
	for _, c := range cases {
		err := server.AddTool(s, c.tool, noop)
		var re *server.RegistrationError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want a RegistrationError mentioning %q", c.tool, err, c.want)
		}
	}
	var ud *schema.UnsupportedDialectError
	err := server.AddTool(s, &mcp.Tool{Name: "d2", InputSchema: json.RawMessage(`{"$schema":"urn:x","type":"object"}`)}, noop)
	if !errors.As(err, &ud) {
		t.Errorf("dialect error not unwrappable: %v", err)
	}
	if err := server.AddTool[map[string]any, string](s, &mcp.Tool{Name: "nil-handler"}, nil); err == nil {
		t.Error("nil handler accepted")
	}
	if len(s.Tools()) != 1 {
		t.Errorf("failed registrations left tools behind: %d", len(s.Tools()))
	}
}

func TestRawSchemaDraft07IsHonoured(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"})
	raw := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"type":"array","items":[{"type":"string"}],"additionalItems":false}}}`
	if err := server.AddTool(s, &mcp.Tool{Name: "t", InputSchema: json.RawMessage(raw)}, noop); err != nil {
		t.Fatal(err)
	}
	tool, _ := s.Tool("t")
	if string(tool.InputSchema) != raw {
		t.Errorf("raw schema changed: %s", tool.InputSchema)
	}
	res, err := s.CallTool(context.Background(), "t", json.RawMessage(`{"p":["a",1]}`), nil)
	if err != nil || !res.IsError {
		t.Errorf("draft-07 tuple rule not applied: %v %v", res, err)
	}
}
