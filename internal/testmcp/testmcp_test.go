package testmcp_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

func TestConnectHTTP(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "testmcp", Version: "1"})
	if err := server.AddTool(s, &mcp.Tool{Name: "ping"}, func(context.Context, *server.CallRequest, struct{}) (string, error) {
		return "pong", nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		c := testmcp.ConnectHTTP(t, s, client.WithEra(era))
		res, err := c.CallTool(testwait.Context(t), "ping", nil)
		if err != nil {
			t.Fatalf("%s: %v", era, err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != "pong" {
			t.Fatalf("%s: %q", era, got)
		}
	}
}

// ToolNames lists every tool by name.
func TestToolNames(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "testmcp", Version: "1"})
	for _, name := range []string{"b", "a"} {
		if err := server.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *server.CallRequest, struct{}) (string, error) {
			return name, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	got := testmcp.ToolNames(t, testmcp.ConnectHTTP(t, s))
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("tools %v, want a and b", got)
	}
}
