package client_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// init lets the test binary act as a strict legacy stdio server when
// started with TW_STRICT_LEGACY set (TestMain belongs to stdio_test.go; init
// runs before it). The server knows initialize, tools/list and tools/call
// and treats any other request, server/discover included, as fatal:
//   - "exit": it exits with status 1;
//   - "close": it closes its stdout and lingers until its stdin closes.
func init() {
	if mode := os.Getenv("TW_STRICT_LEGACY"); mode != "" {
		strictLegacyServer(mode)
		os.Exit(0)
	}
}

func strictLegacyServer(mode string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) { out.WriteString(s + "\n"); out.Flush() }
	for in.Scan() {
		msg, _, err := jsonrpc.Decode(in.Bytes())
		m, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok {
			continue
		}
		switch m.Method {
		case "initialize":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"strict","version":"1"}}}`, m.ID))
		case "tools/list":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}}`, m.ID))
		case "tools/call":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"worked"}]}}`, m.ID))
		default:
			fmt.Fprintf(os.Stderr, "strict server: unknown method %s\n", m.Method)
			if mode == "close" {
				os.Stdout.Close()
				for in.Scan() {
				}
				os.Exit(0)
			}
			os.Exit(1)
		}
	}
}

func strictLegacyCommand(t *testing.T, mode string) *client.Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &client.Command{Path: exe, Env: append(os.Environ(), "TW_STRICT_LEGACY="+mode), GracePeriod: 500 * time.Millisecond}
}

// TestAutoEraSurvivesStrictLegacyChild: a legacy stdio server that dies (or
// closes stdout) on the server/discover probe is restarted and initialized,
// as --era legacy would have done from the start.
func TestAutoEraSurvivesStrictLegacyChild(t *testing.T) {
	for _, mode := range []string{"exit", "close"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, strictLegacyCommand(t, mode), client.WithEra(mcp.EraAuto), client.WithProbeTimeout(2*time.Second))
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
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, strictLegacyCommand(t, "exit"), client.WithEra(mcp.EraModern))
	if err == nil {
		c.Close()
		t.Fatal("Connect succeeded")
	}
	if client.CodeOf(err) != client.CodeTransport {
		t.Fatalf("code %v: %v", client.CodeOf(err), err)
	}
}
