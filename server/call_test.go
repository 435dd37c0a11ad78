package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

type greetIn struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty" default:"2"`
}

func TestCallValidatesInputBeforeHandler(t *testing.T) {
	s := newTestServer(t)
	var called atomic.Int32
	if err := server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallRequest, in greetIn) (string, error) {
		called.Add(1)
		return strings.Repeat("hi "+in.Name+" ", in.Times), nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")

	res := callResult(t, p.call("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"times": "x", "extra": true}}))
	if !res.IsError {
		t.Fatal("invalid arguments did not give an isError result")
	}
	msg := text(t, res)
	for _, want := range []string{"/name: required property is missing", "/times: expected integer, got string", "extra"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not contain %q", msg, want)
		}
	}
	if called.Load() != 0 {
		t.Error("handler ran on invalid input")
	}

	// Defaults from struct tags reach the handler.
	res = callResult(t, p.call("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "ann"}}))
	if res.IsError || text(t, res) != "hi ann hi ann " {
		t.Errorf("got %+v %q", res.IsError, text(t, res))
	}
	// Missing arguments count as {}.
	res = callResult(t, p.call("tools/call", map[string]any{"name": "greet"}))
	if !res.IsError {
		t.Error("missing required argument accepted")
	}
}

func TestCallProtocolErrors(t *testing.T) {
	p := connect(t, newTestServer(t))
	p.initialize("2025-11-25")
	e := wantError(t, p.call("tools/call", map[string]any{"name": "does_not_exist"}), jsonrpc.CodeInvalidParams)
	if !strings.Contains(e.Message, "does_not_exist") {
		t.Errorf("message does not name the tool: %s", e.Message)
	}
	wantError(t, p.call("tools/call", map[string]any{"arguments": map[string]any{}}), jsonrpc.CodeInvalidParams)
	wantError(t, p.call("tools/call", map[string]any{"name": 5}), jsonrpc.CodeInvalidParams)
	wantError(t, p.call("tools/call", map[string]any{"name": "add", "arguments": []int{1}}), jsonrpc.CodeInvalidParams)
	wantError(t, p.call("tools/call", nil), jsonrpc.CodeInvalidParams)
	wantError(t, p.call("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}, "task": map[string]any{}}), jsonrpc.CodeMethodNotFound)
}

// CallToolRequestParams.arguments is an optional object: absent, the tool
// runs with {}; null is not an object, so it is -32602 naming "arguments"
// (with the request's id), and the tool does not run, even one that needs
// no arguments.
func TestCallArgumentsNull(t *testing.T) {
	s := newTestServer(t)
	var called atomic.Int32
	if err := server.AddTool(s, &mcp.Tool{Name: "noargs"}, func(context.Context, *server.CallRequest, struct{}) (string, error) {
		called.Add(1)
		return "ran", nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	for i, params := range []string{
		`{"name":"noargs","arguments":null}`,
		`{"name":"noargs", "arguments" : null }`,
		`{"n\u0061me":"noargs","arguments":null}`, // read by the exact decoder
		`{"name":"noargs","arguments":null,"_meta":{"progressToken":1}}`,
	} {
		id := jsonrpc.StringID("null-" + string(rune('a'+i)))
		_, ch := p.startRaw(id, `{"jsonrpc":"2.0","id":"`+id.Str()+`","method":"tools/call","params":`+params+`}`)
		r := p.wait(ch)
		if r.ID != id {
			t.Errorf("%s: reply id %s, want %s", params, r.ID, id)
		}
		if e := wantError(t, r, jsonrpc.CodeInvalidParams); !strings.Contains(e.Message, `"arguments" must be an object`) {
			t.Errorf("%s: message %q does not name arguments", params, e.Message)
		}
	}
	if n := called.Load(); n != 0 {
		t.Errorf("the tool ran %d times on null arguments", n)
	}
	if res := callResult(t, p.call("tools/call", map[string]any{"name": "noargs"})); res.IsError || text(t, res) != "ran" {
		t.Errorf("absent arguments: %+v", res)
	}
}

// Ids are echoed as the JSON strings they were, whatever characters they
// hold: control characters, DEL, non-printable characters.
func TestCallEchoesSpecialIDs(t *testing.T) {
	p := connect(t, newTestServer(t))
	p.initialize("2025-11-25")
	for raw, want := range map[string]string{
		`"a\u0000b"`: "a\x00b", `"\u0007\u000b"`: "\a\v", `"\u007f"`: "\x7f", `"\udb40\udc01"`: "\U000E0001", `"\u0001"`: "\x01",
	} {
		id := jsonrpc.StringID(want)
		_, ch := p.startRaw(id, `{"jsonrpc":"2.0","id":`+raw+`,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`)
		if r := p.wait(ch); r.ID != id || r.Error != nil {
			t.Errorf("id %s: reply id %s, error %v", raw, r.ID, r.Error)
		}
	}
}

type retryErr struct{}

func (retryErr) Error() string { return "plain text" }
func (retryErr) ToolResult() *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "try later"}}, Meta: mcp.Meta{"x/y": 1}}
}

func TestHandlerErrorsAndPanics(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	add := func(name string, f func() (string, error)) {
		t.Helper()
		if err := server.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
			return f()
		}); err != nil {
			t.Fatal(err)
		}
	}
	add("fails", func() (string, error) { return "", errors.New("disk is full; free some space") })
	add("protocol", func() (string, error) {
		return "", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad mode").WithData(map[string]int{"max": 3})
	})
	add("panics", func() (string, error) { panic("boom") })
	add("retry", func() (string, error) { return "", retryErr{} })
	p := connect(t, s)
	p.initialize("2025-11-25")

	res := callResult(t, p.call("tools/call", map[string]any{"name": "fails"}))
	if !res.IsError || text(t, res) != "disk is full; free some space" {
		t.Errorf("handler error: %+v %q", res.IsError, text(t, res))
	}
	e := wantError(t, p.call("tools/call", map[string]any{"name": "protocol"}), jsonrpc.CodeInvalidParams)
	if e.Message != "bad mode" || string(e.Data) != `{"max":3}` {
		t.Errorf("protocol error %+v", e)
	}
	res = callResult(t, p.call("tools/call", map[string]any{"name": "panics"}))
	if !res.IsError || strings.Contains(text(t, res), "boom") {
		t.Errorf("panic result %q (must be an isError result that does not leak the panic value)", text(t, res))
	}
	if !strings.Contains(logs.String(), "boom") || !strings.Contains(logs.String(), "panicked") {
		t.Errorf("panic not logged: %s", logs.String())
	}
	res = callResult(t, p.call("tools/call", map[string]any{"name": "retry"}))
	if !res.IsError || text(t, res) != "try later" || res.Meta["x/y"] == nil {
		t.Errorf("ToolResulter result %+v", res)
	}
	// The session still works after all of that.
	if r := p.call("ping", nil); r.Error != nil {
		t.Error(r.Error)
	}
}

func TestOutputSchemaViolationIsInternalError(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := server.AddTool(s, &mcp.Tool{Name: "liar", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`)},
		func(ctx context.Context, req *server.CallRequest, in struct{}) (map[string]any, error) {
			return map[string]any{"n": "not a number"}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "silent", OutputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *server.CallRequest, in struct{}) (*mcp.CallToolResult, error) {
			return mcp.TextResult("no structured content"), nil
		}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	e := wantError(t, p.call("tools/call", map[string]any{"name": "liar"}), jsonrpc.CodeInternalError)
	if !strings.Contains(e.Message, "/n") || !strings.Contains(e.Message, "outputSchema") {
		t.Errorf("message %q does not name the schema path", e.Message)
	}
	if !strings.Contains(logs.String(), "liar") {
		t.Errorf("violation not logged: %s", logs.String())
	}
	e = wantError(t, p.call("tools/call", map[string]any{"name": "silent"}), jsonrpc.CodeInternalError)
	if !strings.Contains(e.Message, "structuredContent is missing") {
		t.Errorf("message %q", e.Message)
	}

	// With validation off, the output goes out as it is.
	s2 := server.New(mcp.Implementation{Name: "x", Version: "1"}, server.WithOutputValidation(false))
	_ = server.AddTool(s2, &mcp.Tool{Name: "liar", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`)},
		func(ctx context.Context, req *server.CallRequest, in struct{}) (map[string]any, error) {
			return map[string]any{"n": "x"}, nil
		})
	res, err := s2.CallTool(context.Background(), "liar", nil, nil)
	if err != nil || string(res.StructuredContent) != `{"n":"x"}` {
		t.Errorf("got %v %v", res, err)
	}
}

func TestStructuredOutputHasTextFallback(t *testing.T) {
	p := connect(t, newTestServer(t))
	p.initialize("2025-11-25")
	res := callResult(t, p.call("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 7, "b": 5}}))
	if string(res.StructuredContent) != `{"sum":12}` || text(t, res) != `{"sum":12}` {
		t.Errorf("got %s / %q", res.StructuredContent, text(t, res))
	}
	var list mcp.ListToolsResult
	decodeResult(t, p.call("tools/list", nil), &list)
	if !strings.Contains(string(list.Tools[0].OutputSchema), `"sum"`) {
		t.Errorf("outputSchema not inferred: %s", list.Tools[0].OutputSchema)
	}
}

func TestLegacyNeverSeesNonObjectShapes(t *testing.T) {
	s := newTestServer(t)
	if err := server.AddTool(s, &mcp.Tool{Name: "primes", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskForbidden}},
		func(ctx context.Context, req *server.CallRequest, in struct{}) ([]int, error) {
			return []int{2, 3, 5}, nil
		}); err != nil {
		t.Fatal(err)
	}
	legacy := connect(t, s)
	legacy.initialize("2025-11-25")
	var list mcp.ListToolsResult
	decodeResult(t, legacy.call("tools/list", nil), &list)
	for _, tool := range list.Tools {
		if tool.Name == "primes" && (tool.OutputSchema != nil || tool.Execution == nil) {
			t.Errorf("legacy view of primes: outputSchema %s execution %v", tool.OutputSchema, tool.Execution)
		}
	}
	res := callResult(t, legacy.call("tools/call", map[string]any{"name": "primes"}))
	if res.StructuredContent != nil || text(t, res) != "[2,3,5]" {
		t.Errorf("legacy call: structured %s text %q", res.StructuredContent, text(t, res))
	}

	modern := connect(t, s)
	var mlist mcp.ListToolsResult
	decodeResult(t, modern.call("tools/list", map[string]any{"_meta": modernMeta()}), &mlist)
	for _, tool := range mlist.Tools {
		if tool.Name == "primes" && (!strings.Contains(string(tool.OutputSchema), `"array"`) || tool.Execution != nil) {
			t.Errorf("modern view of primes: outputSchema %s execution %v", tool.OutputSchema, tool.Execution)
		}
	}
	res = callResult(t, modern.call("tools/call", map[string]any{"name": "primes", "_meta": modernMeta()}))
	if string(res.StructuredContent) != "[2,3,5]" {
		t.Errorf("modern call: structured %s", res.StructuredContent)
	}
}

func TestInProcessCallTool(t *testing.T) {
	s := newTestServer(t)
	res, err := s.CallTool(context.Background(), "add", json.RawMessage(`{"a":2,"b":3}`), nil)
	if err != nil || string(res.StructuredContent) != `{"sum":5}` {
		t.Fatalf("got %v, %v", res, err)
	}
	_, err = s.CallTool(context.Background(), "nope", nil, nil)
	if je, ok := jsonrpc.AsError(err); !ok || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %v", err)
	}
}
