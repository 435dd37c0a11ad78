package client_test

import (
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// init lets the test binary act as a strict legacy stdio server when
// started with TW_STRICT_LEGACY set (TestMain belongs to stdio_test.go; init
// runs before it). The server knows initialize, tools/list and tools/call
// and treats any other request, server/discover included, as fatal:
//   - "exit": it exits with status 1;
//   - "close": it closes its stdout and lingers until its stdin closes.
func init() { testenv.ServeStrictLegacy() }

func strictLegacyCommand(t *testing.T, mode string) *client.Command {
	t.Helper()
	return selfCommand(t, "TW_STRICT_LEGACY", mode)
}

// TestAutoEraSurvivesStrictLegacyChild: a legacy stdio server that dies (or
// closes stdout) on the server/discover probe is restarted and initialized,
// as --era legacy would have done from the start.
func TestAutoEraSurvivesStrictLegacyChild(t *testing.T) {
	for _, mode := range []string{"exit", "close"} {
		t.Run(mode, func(t *testing.T) {
			ctx := testwait.Context(t)
			c, err := client.Connect(ctx, strictLegacyCommand(t, mode), client.WithEra(mcp.EraAuto), client.WithLimits(client.Limits{ProbeTimeout: 2 * time.Second}))
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			if c.Era() != mcp.EraLegacy || c.ProtocolVersion() != "2025-11-25" || c.ServerInfo().Name != "strict" {
				t.Fatalf("era %v, version %q, server %+v", c.Era(), c.ProtocolVersion(), c.ServerInfo())
			}
			res, err := c.CallTool(ctx, "work", map[string]any{})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if len(res.Content) != 1 {
				t.Fatalf("content %+v", res.Content)
			}
		})
	}
}

// TestModernEraStrictLegacyChildFails: with the era forced to modern there
// is no fallback: the child's death is the answer.
func TestModernEraStrictLegacyChildFails(t *testing.T) {
	ctx := testwait.Context(t)
	c, err := client.Connect(ctx, strictLegacyCommand(t, "exit"), client.WithEra(mcp.EraModern))
	if err == nil {
		c.Close()
		t.Fatal("Connect succeeded")
	}
	if client.CodeOf(err) != client.CodeTransport {
		t.Fatalf("code %v: %v", client.CodeOf(err), err)
	}
}
