package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// TestParseTarget pins what the gateway decides on: the exact reading of
// params, and -32602 for every spelling a lenient reader would read
// differently (case variants, duplicates, escapes are decoded, not
// compared raw) and for a name it cannot be sure of.
func TestParseTarget(t *testing.T) {
	ok := []struct {
		method, params, name, args, token string
		feature                           policy.Feature
	}{
		{mcp.MethodCallTool, `{"name":"files__read","arguments":{"path":"/a"}}`, "files__read", `{"path":"/a"}`, "", policy.Tools},
		{mcp.MethodCallTool, `{"name":"files__\u0072ead","arguments":null,"_meta":{"progressToken":7}}`, "files__read", "", "7", policy.Tools},
		{mcp.MethodCallTool, `{"name":"a","_meta":{"progressToken":"t","other":{"x":1}}}`, "a", "", `"t"`, policy.Tools},
		{mcp.MethodCallTool, `{"name":"a","unknownMember":1}`, "a", "", "", policy.Tools},
		{mcp.MethodGetPrompt, `{"name":"weather__brief","arguments":{"city":"Oslo"}}`, "weather__brief", `{"city":"Oslo"}`, "", policy.Prompts},
		{mcp.MethodReadResource, `{"uri":"file:///a b"}`, "file:///a b", "", "", policy.Resources},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"w__p"},"argument":{"name":"city","value":"O"}}`, "w__p", "", "", policy.Prompts},
		{mcp.MethodComplete, `{"ref":{"type":"ref/resource","uri":"mem://{x}"},"argument":{"name":"x","value":""},"context":{"arguments":{}}}`, "mem://{x}", "", "", policy.Resources},
	}
	for _, c := range ok {
		tg, err := parseTarget(c.method, json.RawMessage(c.params))
		if err != nil {
			t.Errorf("%s %s: %v", c.method, c.params, err)
			continue
		}
		if tg.name != c.name || string(tg.arguments) != c.args || string(tg.progressToken) != c.token || tg.feature != c.feature {
			t.Errorf("%s %s: got name %q arguments %s token %s feature %s", c.method, c.params, tg.name, tg.arguments, tg.progressToken, tg.feature)
		}
	}
	refused := []struct{ method, params, why string }{
		{mcp.MethodCallTool, `{"NAME":"ref__get-env","arguments":{}}`, "case-sensitive"},
		{mcp.MethodCallTool, `{"name":"ref__echo","Name":"ref__get-env"}`, "case-sensitive"},
		{mcp.MethodCallTool, `{"name":"ref__echo","name":"ref__get-env"}`, "duplicate"},
		{mcp.MethodCallTool, `{"name":"ref__get-env","name":"ref__echo"}`, "duplicate"},
		{mcp.MethodCallTool, `{"name":"ref__echo","n\u0061me":"ref__get-env"}`, "duplicate"},
		{mcp.MethodCallTool, `{"name":"a","arguments":{"x":1,"x":2}}`, "duplicate"},
		{mcp.MethodCallTool, `{"name":"a","arguments":{"x":1,"X":2}}`, ""}, // arguments are the tool's: any case, but exact
		{mcp.MethodCallTool, `{"name":"a","_meta":{"progressToken":1,"progressToken":2}}`, "duplicate"},
		{mcp.MethodCallTool, `{"name":"a","_meta":{"progressToken":1.5}}`, "string or an integer"},
		{mcp.MethodCallTool, `{"name":"a","_meta":[]}`, "_meta must be an object"},
		{mcp.MethodCallTool, `{"name":"a","arguments":[1]}`, "arguments must be an object"},
		{mcp.MethodCallTool, `{"arguments":{}}`, `"name" is required`},
		{mcp.MethodCallTool, `{"name":""}`, "must not be empty"},
		{mcp.MethodCallTool, `{"name":null}`, `"name" is required`},
		{mcp.MethodCallTool, `{"name":5}`, "string"},
		{mcp.MethodCallTool, `{"name":"ref__get-env\u0000"}`, "control characters"},
		{mcp.MethodCallTool, `{"name":"ref__get-env "}`, "white space"},
		{mcp.MethodCallTool, `{"name":" ref__get-env"}`, "white space"},
		{mcp.MethodCallTool, `{"name":"a\u00"}`, ""},
		{mcp.MethodCallTool, "{\"name\":\"a\xff\"}", "UTF-8"},
		{mcp.MethodCallTool, `[{"name":"a"}]`, "must be an object"},
		{mcp.MethodCallTool, ``, "missing"},
		{mcp.MethodCallTool, `null`, "missing"},
		{mcp.MethodGetPrompt, `{"Name":"p"}`, "case-sensitive"},
		{mcp.MethodGetPrompt, `{"name":"p","arguments":{"a":"1","a":"2"}}`, "duplicate"},
		{mcp.MethodReadResource, `{"URI":"mem://x"}`, "case-sensitive"},
		{mcp.MethodReadResource, `{"uri":"mem://a","uri":"mem://b"}`, "duplicate"},
		{mcp.MethodReadResource, `{"uri":""}`, "must not be empty"},
		{mcp.MethodReadResource, `{}`, `"uri" is required`},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":""},"argument":{"name":"a","value":""}}`, "must not be empty"},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"p","Name":"q"},"argument":{"name":"a","value":""}}`, "case-sensitive"},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"p"},"REF":{"type":"ref/prompt","name":"q"},"argument":{"name":"a","value":""}}`, "case-sensitive"},
		{mcp.MethodComplete, `{"ref":{"type":"ref/tool","name":"p"},"argument":{"name":"a","value":""}}`, "unknown type"},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"p"}}`, "argument"},
		{mcp.MethodComplete, `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"value":""}}`, "argument.name"},
	}
	for _, c := range refused {
		tg, err := parseTarget(c.method, json.RawMessage(c.params))
		if c.params == `{"name":"a","arguments":{"x":1,"X":2}}` {
			// Member names inside arguments belong to the tool's schema,
			// which may well have both; they are exact, not refused.
			if err != nil || string(tg.arguments) != `{"x":1,"X":2}` {
				t.Errorf("%s: %v", c.params, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s %s: accepted as %q", c.method, c.params, tg.name)
			continue
		}
		if err.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Message, c.why) {
			t.Errorf("%s %s: %d %s (want -32602 saying %q)", c.method, c.params, err.Code, err.Message, c.why)
		}
	}
}

// BenchmarkParseTarget is the cost of the one strict parse each forwarded
// call pays: a typical tools/call with a progress token.
func BenchmarkParseTarget(b *testing.B) {
	params := json.RawMessage(`{"name":"files__read","arguments":{"path":"/var/log/syslog","lines":200,"follow":false},"_meta":{"progressToken":"p-1"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseTarget(mcp.MethodCallTool, params); err != nil {
			b.Fatal(err)
		}
	}
}
