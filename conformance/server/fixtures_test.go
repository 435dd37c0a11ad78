package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

func fixtureServer(t *testing.T) *server.Server {
	t.Helper()
	srv := server.New(mcp.Implementation{Name: "fixture-test", Version: "1"})
	if err := registerAll(srv); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestFixtureContent checks each fixture's exact result; the suite itself
// checks little more than that content is present.
func TestFixtureContent(t *testing.T) {
	srv := fixtureServer(t)
	cases := map[string]string{
		"test_simple_text":   `{"content":[{"type":"text","text":"This is a simple text response for testing."}]}`,
		"test_image_content": `{"content":[{"type":"image","data":"` + pngBase64 + `","mimeType":"image/png"}]}`,
		"test_audio_content": `{"content":[{"type":"audio","data":"` + wavBase64 + `","mimeType":"audio/wav"}]}`,
		"test_embedded_resource": `{"content":[{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain",` +
			`"text":"This is an embedded resource content."}}]}`,
		"test_multiple_content_types": `{"content":[{"type":"text","text":"Multiple content types test:"},` +
			`{"type":"image","data":"` + pngBase64 + `","mimeType":"image/png"},` +
			`{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}}]}`,
		"test_error_handling": `{"content":[{"type":"text","text":"This tool intentionally returns an error for testing"}],"isError":true}`,
		"test_custom_header":  `{"content":[{"type":"text","text":"region=us-west1"}]}`,
	}
	for name, want := range cases {
		args := json.RawMessage(`{}`)
		if name == "test_custom_header" {
			args = json.RawMessage(`{"region":"us-west1"}`)
		}
		res, err := srv.CallTool(context.Background(), name, args, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got, _ := json.Marshal(res)
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

func TestFixtureProgress(t *testing.T) {
	srv := fixtureServer(t)
	var seen []mcp.ProgressParams
	res, err := srv.CallTool(context.Background(), "test_tool_with_progress", nil, jsonrpc.SenderFunc(func(ctx context.Context, m jsonrpc.Message) error {
		var p mcp.ProgressParams
		if err := json.Unmarshal(m.(*jsonrpc.Notification).Params, &p); err != nil {
			return err
		}
		seen = append(seen, p)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[0].Progress != 0 || seen[1].Progress != 50 || seen[2].Progress != 100 || *seen[2].Total != 100 ||
		seen[1].Message != "Completed step 50 of 100" {
		t.Fatalf("progress %+v", seen)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != "inprocess" {
		t.Fatalf("result echoes token %q, want the caller's token", txt)
	}
}

func TestFixtureSchemaServedVerbatim(t *testing.T) {
	srv := fixtureServer(t)
	tool, ok := srv.Tool("json_schema_2020_12_tool")
	if !ok || string(tool.InputSchema) != jsonSchema2020 {
		t.Fatalf("inputSchema %s", tool.InputSchema)
	}
	res, err := srv.CallTool(context.Background(), "json_schema_2020_12_tool", json.RawMessage(`{"name":"Ada","email":"a@example.com"}`), nil)
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != `JSON Schema 2020-12 tool called with: {"name":"Ada","email":"a@example.com"}` {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestFixtureMissingCapability(t *testing.T) {
	srv := fixtureServer(t)
	_, err := srv.CallTool(context.Background(), "test_missing_capability", nil, nil)
	je, ok := jsonrpc.AsError(err)
	if !ok || je.Code != mcp.CodeMissingRequiredClientCapability || string(je.Data) != `{"requiredCapabilities":{"sampling":{}}}` {
		t.Fatalf("%v", err)
	}
}

func TestTriggerChangesToolList(t *testing.T) {
	srv := fixtureServer(t)
	n := len(srv.Tools())
	for i, want := range []int{n + 1, n} {
		if _, err := srv.CallTool(context.Background(), "test_trigger_tool_change", nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := len(srv.Tools()); got != want {
			t.Fatalf("after trigger %d: %d tools, want %d", i+1, got, want)
		}
	}
}

// TestCatalog checks the resources, the template, the completions and the
// capabilities the engine derives from them, with exact content.
func TestCatalog(t *testing.T) {
	srv := fixtureServer(t)
	sess := srv.OpenSession(nil)
	defer sess.Close()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	call := func(method, params string) *jsonrpc.Response {
		return sess.HandleRequest(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: method, Params: json.RawMessage(params)}, nil)
	}
	r := call("server/discover", `{`+meta+`}`)
	for _, want := range []string{`"prompts":{"listChanged":true}`, `"resources":{"subscribe":true,"listChanged":true}`, `"completions":{}`, `"logging":{}`} {
		if r.Error != nil || !strings.Contains(string(r.Result), want) {
			t.Fatalf("discover lacks %s: %s %v", want, r.Result, r.Error)
		}
	}
	reads := map[string]string{
		"test://static-text":       `"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]`,
		"test://static-binary":     `"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + pngBase64 + `"}]`,
		"test://template/123/data": `"text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"`,
	}
	for uri, want := range reads {
		r = call("resources/read", `{"uri":"`+uri+`",`+meta+`}`)
		if r.Error != nil || !strings.Contains(string(r.Result), want) {
			t.Errorf("read %s: %s %v", uri, r.Result, r.Error)
		}
	}
	r = call("resources/read", `{"uri":"test://x",`+meta+`}`)
	if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || string(r.Error.Data) != `{"uri":"test://x"}` {
		t.Fatalf("resources/read %+v", r.Error)
	}
	r = call("completion/complete", `{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"par"},`+meta+`}`)
	if r.Error != nil || !strings.Contains(string(r.Result), `"values":["paris","park","party"]`) {
		t.Fatalf("complete %s %v", r.Result, r.Error)
	}
	// The input_required fixtures answer after one round.
	r = call("tools/call", `{"name":"test_input_required_result_elicitation","arguments":{},`+meta+`}`)
	var ir struct {
		ResultType    string
		RequestState  string
		InputRequests map[string]json.RawMessage
	}
	if r.Error != nil || json.Unmarshal(r.Result, &ir) != nil || ir.ResultType != "input_required" || ir.InputRequests["user_name"] == nil {
		t.Fatalf("round 1: %s %v", r.Result, r.Error)
	}
	r = call("tools/call", `{"name":"test_input_required_result_elicitation","arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"`+ir.RequestState+`",`+meta+`}`)
	if r.Error != nil || !strings.Contains(string(r.Result), `"text":"Hello, Ada!"`) {
		t.Fatalf("round 2: %s %v", r.Result, r.Error)
	}
	// A legacy session must initialize first.
	legacy := srv.OpenSession(nil)
	defer legacy.Close()
	r = legacy.HandleRequest(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: "resources/list"}, nil)
	if r.Error == nil {
		t.Fatalf("uninitialized resources/list answered %s", r.Result)
	}
}
