package main

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/stdio"
)

// serveEnv makes the test binary a small MCP server on stdio, for the
// client to start as a command.
const serveEnv = "CLIENT_EXAMPLE_SERVE"

type greetIn struct {
	Name string `json:"name"`
}

func TestMain(m *testing.M) {
	testmcp.RunOrServe(m, serveEnv, func() {
		s := server.New(mcp.Implementation{Name: "greeter", Version: "1.0.0"})
		_ = server.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello"},
			func(ctx context.Context, req *server.CallRequest, in greetIn) (string, error) {
				return "Hello, " + in.Name + "!", nil
			})
		_ = stdio.ServeStdio(context.Background(), s)
	})
}

// The example connects to a server started as a command, lists its tools
// and calls one, printing each step.
func TestClientListsAndCalls(t *testing.T) {
	var out strings.Builder
	tr := testmcp.Self(serveEnv)
	if err := run(testwait.Context(t), &out, tr, "greet", `{"name":"Ada"}`); err != nil {
		t.Fatal(err)
	}
	want := "connected to greeter 1.0.0 (MCP "
	if got := out.String(); !strings.HasPrefix(got, want) || !strings.Contains(got, "tool greet: Say hello\n") ||
		!strings.HasSuffix(got, "greet: Hello, Ada!\n") {
		t.Errorf("output:\n%s", got)
	}
	if tr, ok := transportFor([]string{"http://127.0.0.1:1/mcp"}).(*client.HTTP); !ok || tr.URL != "http://127.0.0.1:1/mcp" {
		t.Errorf("a URL's transport: %#v", tr)
	}
}
