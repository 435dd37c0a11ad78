package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
)

// serveEnv makes the test binary run main, the server, instead of the tests.
const serveEnv = "HELLO_SERVE"

func TestMain(m *testing.M) { testmcp.RunOrServe(m, serveEnv, main) }

// The example is a working server: a client lists its one tool and calls it.
func TestHelloGreets(t *testing.T) {
	ctx := testwait.Context(t)
	c := testmcp.Connect(t, testmcp.Self(serveEnv))
	res, err := c.CallTool(ctx, "greet", map[string]any{"name": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || string(res.StructuredContent) != `{"greeting":"Hello, Ada!"}` {
		t.Errorf("greet: isError %v, structured %s", res.IsError, res.StructuredContent)
	}
	// Arguments are checked against the schema inferred from greetIn.
	res, err = c.CallTool(ctx, "greet", map[string]any{})
	var te *client.ToolError
	if !errors.As(err, &te) || res == nil || !res.IsError || !strings.Contains(err.Error(), "/name: required") {
		t.Errorf("greet without a name: %v", err)
	}
}

// A server that keeps tasks in memory links no database driver: the
// drivers live in their own packages (taskstore/sqlite, gateway/audit).
func TestHelloLinksNoDatabaseDriver(t *testing.T) {
	testenv.LinksNone(t, "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/redis/go-redis", "github.com/lib/pq", "database/sql")
}
