package testtools_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The echo tool is registered under its name with its description, and
// answers the message after the prefix.
func TestAddEcho(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "t", Version: "1"})
	testtools.AddEcho(t, s, "Echo: ")
	tools := s.Tools()
	if len(tools) != 1 || tools[0].Name != "echo" || tools[0].Description != "echoes" {
		t.Fatalf("tools %+v, want the one echo tool", tools)
	}
	res, err := s.CallTool(context.Background(), "echo", []byte(`{"message":"hi"}`), nil)
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || txt.Text != "Echo: hi" {
		t.Fatalf("result %+v, want the text Echo: hi", res.Content[0])
	}
}
