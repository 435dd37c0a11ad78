package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/stdio"
)

func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// deepServer has a tool that accepts any object.
func deepServer(t *testing.T) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "deep", Version: "1"})
	if err := server.AddRawTool(s, &mcp.Tool{Name: "any", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *server.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// deepCases are requests nested past the decoders' limit (10000 levels),
// with the answer each gets: always the request's id. Arguments nested too
// deeply are a tool error, like any argument the model wrote wrong (a
// member twice, say); other params are -32602.
var deepCases = []struct {
	name, params, method string
	code                 int64  // 0: an isError result
	text                 string // in the error message or the isError text
}{
	{"arguments", `{"name":"any","arguments":{"a":` + nested(10000) + `}}`, "tools/call", 0,
		`invalid arguments for tool "any": invalid JSON at /a/0/0/0/0`},
	{"arguments, far past the limit", `{"name":"any","arguments":{"a":` + nested(100000) + `}}`, "tools/call", 0,
		"nested too deeply (more than 10000 levels)"},
	{"_meta of tools/list", `{"_meta":{"x":` + nested(10000) + `}}`, "tools/list", jsonrpc.CodeInvalidParams,
		"invalid tools/list params: at /_meta/x/0/0/0"},
	{"_meta of tools/call", `{"name":"any","arguments":{},"_meta":{"x":` + nested(10000) + `}}`, "tools/call", 0, "ran"},
	{"arguments just within the limit", `{"name":"any","arguments":{"a":` + nested(9999) + `}}`, "tools/call", 0, "ran"},
}

func checkDeepReply(t *testing.T, name string, resp *jsonrpc.Response, wantID jsonrpc.ID, code int64, text string) {
	t.Helper()
	if resp == nil {
		t.Fatalf("%s: no reply", name)
	}
	if resp.ID != wantID {
		t.Errorf("%s: reply id %s, want %s", name, resp.ID, wantID)
	}
	if code != 0 {
		if resp.Error == nil || resp.Error.Code != code || !strings.Contains(resp.Error.Message, text) || !strings.Contains(resp.Error.Message, "nested too deeply") {
			t.Errorf("%s: got %+v, want error %d with %q naming the depth", name, resp.Error, code, text)
		}
		return
	}
	if resp.Error != nil {
		t.Fatalf("%s: got error %v, want a result", name, resp.Error)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("%s: result %.300s: %v", name, resp.Result, err)
	}
	got := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(got, text) || res.IsError != (text != "ran") {
		t.Errorf("%s: got isError %v %.300q, want %q", name, res.IsError, got, text)
	}
	if len(got) > 1000 {
		t.Errorf("%s: the answer is %d bytes long", name, len(got))
	}
}

// Through the session: HandleRequest answers with the request's id.
func TestDeepParamsThroughHandleRequest(t *testing.T) {
	ss := initializedSession(t, deepServer(t))
	for i, c := range deepCases {
		id := jsonrpc.Int64ID(int64(100 + i))
		resp := ss.HandleRequest(context.Background(), &jsonrpc.Request{ID: id, Method: c.method, Params: []byte(c.params)}, discard{})
		checkDeepReply(t, c.name, resp, id, c.code, c.text)
	}
}

// Over stdio (transport.Serve): the same answers, with the id, and the
// connection serves on (issue: -32700 with id null).
func TestDeepParamsOverStdio(t *testing.T) {
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	for i, c := range deepCases {
		in.WriteString(`{"jsonrpc":"2.0","id":` + itoa(100+i) + `,"method":"` + c.method + `","params":` + c.params + "}\n")
	}
	in.WriteString(`{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"any","arguments":{}}}` + "\n")
	var out bytes.Buffer
	if err := stdio.Serve(context.Background(), deepServer(t), strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	replies := map[jsonrpc.ID]*jsonrpc.Response{}
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		m, _, err := jsonrpc.Decode(line)
		if err != nil {
			t.Fatalf("bad reply %.200s: %v", line, err)
		}
		r := m.(*jsonrpc.Response)
		replies[r.ID] = r
	}
	for i, c := range deepCases {
		id := jsonrpc.Int64ID(int64(100 + i))
		checkDeepReply(t, c.name, replies[id], id, c.code, c.text)
	}
	checkDeepReply(t, "the request after", replies[jsonrpc.StringID("after")], jsonrpc.StringID("after"), 0, "ran")
	if len(replies) != len(deepCases)+2 {
		t.Errorf("%d replies, want %d", len(replies), len(deepCases)+2)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// A number whose exponent math/big refuses, checked against a bound, is an
// invalid argument, not a crash: the validator dereferenced a nil it got
// for such a number, and nothing recovered that panic on the way to the
// transport.
func TestHugeNumberArgumentIsAToolError(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "n", Version: "1"})
	for _, sch := range []string{`{"type":"object","properties":{"n":{"type":"number","maximum":10}}}`,
		`{"type":"object","properties":{"n":{"type":"number","maximum":10}},"anyOf":[{"required":["n"]}]}`} {
		name := "planned"
		if strings.Contains(sch, "anyOf") {
			name = "tree"
		}
		if err := server.AddRawTool(s, &mcp.Tool{Name: name, InputSchema: []byte(sch)}, func(ctx context.Context, req *server.CallRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	ss := initializedSession(t, s)
	for i, tool := range []string{"planned", "tree"} {
		id := jsonrpc.Int64ID(int64(i + 1))
		resp := ss.HandleRequest(context.Background(), &jsonrpc.Request{ID: id, Method: "tools/call",
			Params: []byte(`{"name":"` + tool + `","arguments":{"n":1e9999999}}`)}, discard{})
		checkDeepReply(t, tool, resp, id, 0, `invalid arguments for tool "`+tool+`": `)
		if resp.Error == nil && !strings.Contains(string(resp.Result), "cannot be checked against the schema") {
			t.Errorf("%s: %s", tool, resp.Result)
		}
	}
}
