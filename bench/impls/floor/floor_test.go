package floor

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const (
	meta     = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	callEcho = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},` + meta + `}}`
)

func modernHeader(version, method, name string) http.Header {
	h := http.Header{}
	for k, v := range map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name} {
		if v != "" {
			h.Set(k, v)
		}
	}
	return h
}

// TestModernRules: the floor applies the 2026-07-28 request rules every
// correct server applies, so that it does the work they do.
func TestModernRules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		hdr      http.Header
		status   int
		wantCode int // 0: a result
	}{
		{"ok", callEcho, modernHeader("2026-07-28", "tools/call", "echo"), 200, 0},
		{"stdio, no headers", callEcho, nil, 200, 0},
		{"no version header", callEcho, modernHeader("", "tools/call", "echo"), 400, codeHeaderMismatch},
		{"version header differs", callEcho, modernHeader("2026-08-01", "tools/call", "echo"), 400, codeHeaderMismatch},
		{"Mcp-Method differs", callEcho, modernHeader("2026-07-28", "tools/list", "echo"), 400, codeHeaderMismatch},
		{"Mcp-Name differs", callEcho, modernHeader("2026-07-28", "tools/call", "add"), 400, codeHeaderMismatch},
		{"no Mcp-Name", callEcho, modernHeader("2026-07-28", "tools/call", ""), 400, codeHeaderMismatch},
		{"unsupported version", strings.ReplaceAll(callEcho, "2026-07-28", "2027-01-01"), modernHeader("2027-01-01", "tools/call", "echo"), 400, codeUnsupported},
		{"no clientCapabilities", strings.Replace(callEcho, `,"io.modelcontextprotocol/clientCapabilities":{}`, "", 1), modernHeader("2026-07-28", "tools/call", "echo"), 400, codeInvalidParams},
		{"clientCapabilities not an object", strings.Replace(callEcho, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":[]`, 1), modernHeader("2026-07-28", "tools/call", "echo"), 400, codeInvalidParams},
		{"header only, no _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, modernHeader("2026-07-28", "tools/call", "echo"), 400, codeHeaderMismatch},
		{"unknown tool", strings.Replace(callEcho, `"name":"echo"`, `"name":"nope"`, 1), modernHeader("2026-07-28", "tools/call", "nope"), 400, codeInvalidParams},
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + meta + `}}`, modernHeader("2026-07-28", "initialize", ""), 404, codeMethodNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, resp, ok := handle([]byte(tc.body), tc.hdr)
			if !ok {
				t.Fatal("no reply")
			}
			b, _ := json.Marshal(resp)
			if status != tc.status {
				t.Errorf("HTTP %d, want %d: %s", status, tc.status, b)
			}
			switch {
			case tc.wantCode == 0 && resp.Error != nil:
				t.Errorf("error %s, want a result", b)
			case tc.wantCode != 0 && (resp.Error == nil || resp.Error.Code != tc.wantCode):
				t.Errorf("reply %s, want error %d", b, tc.wantCode)
			}
			if tc.wantCode == 0 && !strings.Contains(string(b), `"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floor","version":"1.0.0"}}`) {
				t.Errorf("result %s lacks resultType or serverInfo", b)
			}
		})
	}
}

// TestLegacy: 2025-11-25 replies carry none of 2026-07-28's fields, and
// tools/list answers in both eras.
func TestLegacy(t *testing.T) {
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	_, resp, _ := handle([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`), hdr)
	b, _ := json.Marshal(resp)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`; string(b) != want {
		t.Errorf("legacy echo = %s, want %s", b, want)
	}
	_, resp, _ = handle([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), hdr)
	b, _ = json.Marshal(resp)
	if !strings.Contains(string(b), `"name":"echo"`) || strings.Contains(string(b), "resultType") {
		t.Errorf("legacy tools/list = %s", b)
	}
	_, resp, _ = handle([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta+`}}`), modernHeader("2026-07-28", "tools/list", ""))
	b, _ = json.Marshal(resp)
	if !strings.Contains(string(b), `"name":"echo"`) || !strings.Contains(string(b), `"resultType":"complete"`) {
		t.Errorf("2026 tools/list = %s", b)
	}
	if _, _, ok := handle([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), hdr); ok {
		t.Error("a notification was answered")
	}
}
