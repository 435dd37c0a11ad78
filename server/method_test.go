package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Capabilities follow the method table: a server with no tools declares no
// tools capability and has no tools/list; the first tool brings both.
func TestCapabilitiesFollowTheMethodTable(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "caps", Version: "1"}, nil) // a nil option is ignored
	if caps := s.Capabilities(); caps.Tools != nil || caps.Prompts != nil {
		t.Fatalf("empty server declares %+v", caps)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	wantError(t, p.call("tools/list", nil), jsonrpc.CodeMethodNotFound)

	addNamed(t, s, "first")
	if caps := s.Capabilities(); caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("after a tool: %+v", caps)
	}
	type none struct{}
	if err := server.AddMethod(s, server.MethodSpec{Name: "prompts/list", Capability: "prompts", CapabilityValue: json.RawMessage(`{"listChanged":false}`)},
		func(context.Context, *server.Request, *none) (json.RawMessage, error) {
			return json.RawMessage(`{"prompts":[]}`), nil
		}); err != nil {
		t.Fatal(err)
	}
	if caps := s.Capabilities(); caps.Prompts == nil {
		t.Fatalf("after prompts/list: %+v", caps)
	}
	r := p.call("tools/list", nil)
	var res mcp.ListToolsResult
	decodeResult(t, r, &res)
	if len(res.Tools) != 1 {
		t.Errorf("tools/list: %s", r.Result)
	}
	// The table refuses a second entry for a method, and names it.
	var re *server.RegistrationError
	err := server.AddMethod(s, server.MethodSpec{Name: "tools/call"}, func(context.Context, *server.Request, *none) (*mcp.EmptyResult, error) { return nil, nil })
	if !errors.As(err, &re) || re.Kind != "method" || re.Name != "tools/call" {
		t.Errorf("duplicate method: %v", err)
	}
	// A method of one era is not found in the other.
	if err := server.AddMethod(s, server.MethodSpec{Name: "example/modern-only", Eras: server.Modern},
		func(context.Context, *server.Request, *none) (*mcp.EmptyResult, error) {
			return &mcp.EmptyResult{}, nil
		}); err != nil {
		t.Fatal(err)
	}
	wantError(t, p.call("example/modern-only", nil), jsonrpc.CodeMethodNotFound)
	if r := p.call("example/modern-only", map[string]any{"_meta": modernMeta()}); r.Error != nil {
		t.Errorf("modern-only method in 2026-07-28: %v", r.Error)
	}
	// Params are decoded exactly: a case variant of a member is refused.
	type nameParams struct {
		Name string `json:"name"`
	}
	if err := server.AddMethod(s, server.MethodSpec{Name: "example/named"}, func(_ context.Context, _ *server.Request, p *nameParams) (*mcp.EmptyResult, error) {
		return &mcp.EmptyResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	wantError(t, p.call("example/named", map[string]any{"Name": "x"}), jsonrpc.CodeInvalidParams)
}
