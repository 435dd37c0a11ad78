package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/jsonrpc"
)

// init lets the test binary act as a strict legacy stdio server when
// started with TW_STRICT_LEGACY set: it answers initialize, tools/list and
// tools/call, and exits with status 1 on any other request (server/discover
// included), as some legacy servers do.
func init() { testenv.ServeStrictLegacy() }

// strictLegacyChild is the command line, after "--", of the strict server.
func strictLegacyChild(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"--", "env", "TW_STRICT_LEGACY=1", exe}
}

// TestCallAutoEraStrictLegacyChild: `call --era auto` reaches a stdio
// server that exits on the server/discover probe, as --era legacy does.
func TestCallAutoEraStrictLegacyChild(t *testing.T) {
	for _, era := range []string{"auto", "legacy"} {
		r := runCLI(t, append([]string{"call", "--era", era, "work"}, strictLegacyChild(t)...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "worked") {
			t.Fatalf("--era %s: exit %d, stdout %q, stderr %s", era, r.code, r.stdout, r.stderr)
		}
	}
}

// legacyHTTP is a legacy-only HTTP server whose answer to server/discover
// is discover(w, id); everything else is answered as a 2025-11-25 server.
func legacyHTTP(t *testing.T, discover func(w http.ResponseWriter, id jsonrpc.ID)) string {
	t.Helper()
	return fakeHTTP(t, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		switch req.Method {
		case "server/discover":
			discover(w, req.ID)
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			replyResult(w, req.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}`)
		case "tools/list":
			replyResult(w, req.ID, `{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			replyResult(w, req.ID, `{"content":[{"type":"text","text":"worked"}]}`)
		default:
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
		}
	})
}

// TestModernEraAgainstLegacyServer: --era modern against a server that does
// not speak 2026-07-28 always exits 5 and says so, whatever the server's
// way of not speaking it; --era auto reaches every one of them.
func TestModernEraAgainstLegacyServer(t *testing.T) {
	servers := map[string]func(w http.ResponseWriter, id jsonrpc.ID){
		"method not found": func(w http.ResponseWriter, id jsonrpc.ID) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)
		},
		"not initialized": func(w http.ResponseWriter, id jsonrpc.ID) {
			jsonReply(w, 400, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"Bad Request: Server not initialized"}}`, id)
		},
		"unsupported version": func(w http.ResponseWriter, id jsonrpc.ID) {
			jsonReply(w, 400, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"]}}}`, id)
		},
		"legacy versions only": func(w http.ResponseWriter, id jsonrpc.ID) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{}}}`, id)
		},
		"plain 404": func(w http.ResponseWriter, id jsonrpc.ID) {
			w.WriteHeader(http.StatusNotFound)
		},
	}
	for name, discover := range servers {
		t.Run(name, func(t *testing.T) {
			url := legacyHTTP(t, discover)
			r := runCLI(t, "call", "--era", "modern", url, "work")
			if r.code != 5 || !strings.Contains(r.stderr, "does not speak protocol version 2026-07-28") ||
				!strings.Contains(r.stderr, "--era auto") || r.stdout != "" {
				t.Fatalf("exit %d (want 5), stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if r := runCLI(t, "call", "--era", "auto", url, "work"); r.code != 0 || !strings.Contains(r.stdout, "worked") {
				t.Fatalf("--era auto: exit %d, stderr:\n%s", r.code, r.stderr)
			}
		})
	}
}

// modernHTTP is a 2026-07-28 server: server/discover, tools/list pages of
// one tool each (pages of them), and tools/call answered by call.
func modernHTTP(t *testing.T, pages int, call func(w http.ResponseWriter, id jsonrpc.ID)) string {
	t.Helper()
	return fakeHTTP(t, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		switch req.Method {
		case "server/discover":
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"1"}}}}`, req.ID)
		case "tools/list":
			var p struct {
				Cursor string `json:"cursor"`
			}
			_ = jsonUnmarshal(req.Params, &p)
			n := 0
			fmt.Sscan(p.Cursor, &n)
			next := ""
			if n+1 < pages {
				next = fmt.Sprintf(`,"nextCursor":"%d"`, n+1)
			}
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"work%d","inputSchema":{"type":"object"}}]%s}}`, req.ID, n, next)
		case "tools/call":
			call(w, req.ID)
		default:
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
		}
	})
}

// TestCallInputRequiredWithoutAnswer: a server that needs input the CLI
// cannot give (an elicitation) gets exit 4 and a message in protocol terms.
func TestCallInputRequiredWithoutAnswer(t *testing.T) {
	url := modernHTTP(t, 1, func(w http.ResponseWriter, id jsonrpc.ID) {
		jsonReply(w, 200, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}}}}`, id)
	})
	r := runCLI(t, "call", url, "work0")
	if r.code != 4 || !strings.Contains(r.stderr, "elicitation/create") || strings.Contains(r.stderr, "RequestHandler") ||
		strings.Contains(r.stderr, "With") {
		t.Fatalf("exit %d (want 4), stderr:\n%s", r.code, r.stderr)
	}
}

// TestMaxPagesFlag: a listing longer than --max-pages exits 4 naming the
// flag; raising the flag lists it all, for tools and for call.
func TestMaxPagesFlag(t *testing.T) {
	url := modernHTTP(t, 5, func(w http.ResponseWriter, id jsonrpc.ID) {
		jsonReply(w, 200, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"worked"}]}}`, id)
	})
	r := runCLI(t, "tools", "--max-pages", "4", url)
	if r.code != 4 || !strings.Contains(r.stderr, "more than 4 pages") || !strings.Contains(r.stderr, "--max-pages") ||
		strings.Contains(r.stderr, "WithMaxPages") {
		t.Fatalf("exit %d (want 4), stderr:\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, "tools", "--max-pages", "5", url); r.code != 0 || !strings.Contains(r.stdout, "work4") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "call", "--max-pages", "5", url, "work4"); r.code != 0 || !strings.Contains(r.stdout, "worked") {
		t.Fatalf("call: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range []string{"0", "-1"} {
		if r := runCLI(t, "tools", "--max-pages", bad, url); r.code != 2 || !strings.Contains(r.stderr, "--max-pages") {
			t.Fatalf("--max-pages %s: exit %d, stderr:\n%s", bad, r.code, r.stderr)
		}
	}
}

func jsonUnmarshal(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}
