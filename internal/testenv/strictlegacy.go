package testenv

import (
	"fmt"
	"io"
	"os"

	"github.com/toolwire/toolwire/jsonrpc"
)

// StrictLegacyEnv names the environment variable that turns a test binary
// into a strict 2025-era stdio server (see ServeStrictLegacy).
const StrictLegacyEnv = "TW_STRICT_LEGACY"

// ServeStrictLegacy makes this process a strict 2025-era stdio MCP server,
// when StrictLegacyEnv is set, and exits: it answers initialize, tools/list
// (one tool, "work") and tools/call ("worked"), and treats any other method
// as fatal, as some legacy servers do with a 2026-07-28 server/discover
// probe. With the variable set to "close" it closes stdout instead of
// exiting and lingers until stdin ends. Test binaries call it from init.
func ServeStrictLegacy() {
	mode := os.Getenv(StrictLegacyEnv)
	if mode == "" {
		return
	}
	ServeStdio(func(m *jsonrpc.Request, send func(string)) {
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
				_, _ = io.Copy(io.Discard, os.Stdin)
				os.Exit(0)
			}
			os.Exit(1)
		}
	})
	os.Exit(0)
}
