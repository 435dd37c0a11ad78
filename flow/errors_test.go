package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
)

// TestErrorOf: each client error keeps its code and gets the documented
// data; flow errors pass through; context errors are ERR_CANCELLED.
func TestErrorOf(t *testing.T) {
	own := &Error{Code: "MINE", Message: "m"}
	cases := []struct {
		name string
		err  error
		code string
		data any
	}{
		{"tool error", fmt.Errorf("wrapped: %w", &client.ToolError{Tool: "t", Result: &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: "bad"}}, StructuredContent: json.RawMessage(`{"n":1}`), IsError: true}}),
			"ERR_MCP_TOOL_ERROR", map[string]any{"content": []any{map[string]any{"type": "text", "text": "bad"}}, "structuredContent": map[string]any{"n": int64(1)}, "isError": true}},
		{"JSON-RPC error", &client.JSONRPCError{Method: "tools/call", Code: -32602, Message: "invalid", Data: json.RawMessage(`{"field":"x"}`)},
			"ERR_MCP_JSON_RPC_ERROR", map[string]any{"code": int64(-32602), "message": "invalid", "data": map[string]any{"field": "x"}}},
		{"HTTP transport", &client.TransportError{Op: "POST", StatusCode: 502, Err: errors.New("Bad Gateway: upstream died")},
			"ERR_MCP_TRANSPORT", map[string]any{"status": int64(502), "body": "upstream died", "op": "POST"}},
		{"stdio transport", &client.TransportError{Op: "stdio", Err: errors.New("child exited")}, "ERR_MCP_TRANSPORT",
			map[string]any{"status": nil, "body": nil, "op": "stdio"}},
		{"protocol envelope", &client.ProtocolError{Op: "tools/call", Reason: "the JSON reply is not a response"}, "ERR_MCP_PROTOCOL",
			map[string]any{"code": int64(-32600), "message": "the JSON reply is not a response", "data": map[string]any{"op": "tools/call", "path": ""}}},
		{"protocol not JSON", &client.ProtocolError{Op: "POST tools/call", Reason: "malformed JSON response", Err: errors.New("invalid character 'x'")}, "ERR_MCP_PROTOCOL",
			map[string]any{"code": int64(-32700), "message": "malformed JSON response: invalid character 'x'", "data": map[string]any{"op": "POST tools/call", "path": ""}}},
		{"session", &client.SessionInvalidError{Op: "tools/call", SessionID: "s-1", StatusCode: 404}, "ERR_MCP_SESSION_INVALID",
			map[string]any{"status": int64(404), "sessionId": "s-1"}},
		{"cancelled", context.Canceled, CodeCancelled, nil},
	}
	for _, c := range cases {
		e := errorOf(c.err)
		if e.Code != c.code {
			t.Errorf("%s: code %s, want %s", c.name, e.Code, c.code)
		}
		if diff := cmp.Diff(c.data, e.Data); diff != "" {
			t.Errorf("%s: data %s", c.name, diff)
		}
	}
	if errorOf(fmt.Errorf("x: %w", own)) != own {
		t.Error("a flow error was not passed through")
	}
}

// TestErrorStrings: Error and Diagnostic print their places.
func TestErrorStrings(t *testing.T) {
	e := &Error{Code: "X", Message: "m", Step: "s", Pos: Pos{3, 5}}
	if got := e.Error(); got != "X: m (step s at 3:5)" {
		t.Errorf("Error() = %q", got)
	}
	d := &Diagnostic{File: "f.flow.yaml", Line: 2, Column: 7, Msg: "bad"}
	if got := d.Error(); got != "f.flow.yaml:2:7: bad" {
		t.Errorf("Diagnostic.Error() = %q", got)
	}
}
