package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// FuzzInputRound sends a 2026-07-28 tools/call carrying hostile
// inputResponses and requestState members. A state the server did not issue
// is always refused with -32602; otherwise the answer is an error, a new
// input_required result or the tool's result, and never a panic.
func FuzzInputRound(f *testing.F) {
	for _, s := range [][2]string{
		{`{"user_name":{"action":"accept","content":{"name":"Ada"}}}`, ``},
		{`{"user_name":12345}`, ``},
		{`null`, ``},
		{`{"user_name":{"action":"accept","content":{"name":"Ada"}},"x":{"y":1}}`, `AQ`},
		{`{"wrong":{}}`, `not-a-state`},
		{`{"user_name":{"action":"maybe"}}`, `AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywtLi8w`},
		{`{"user_name":{"action":"accept","content":{"name":"Ada","name":"Eve"}}}`, ``},
		{`[]`, `-TAMPERED`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, responses, state string) {
		srv := server.New(mcp.Implementation{Name: "fuzz", Version: "1"})
		type none struct{}
		if err := server.AddTool(srv, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
			if _, err := req.Elicit(ctx, nameForm, server.InputKey("user_name")); err != nil {
				return "", err
			}
			return "Hello", nil
		}); err != nil {
			t.Fatal(err)
		}
		params := map[string]json.RawMessage{
			"name": json.RawMessage(`"greet"`), "arguments": json.RawMessage(`{}`),
			"_meta": json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`),
		}
		if json.Valid([]byte(responses)) {
			params["inputResponses"] = json.RawMessage(responses)
		}
		withState := state != ""
		if withState {
			b, _ := json.Marshal(state)
			params["requestState"] = b
		}
		raw, _ := json.Marshal(params)
		ss := srv.NewSession(nil)
		defer ss.Close()
		r := ss.HandleRequest(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "tools/call", Params: raw}, nil)
		if r == nil {
			t.Fatal("no answer")
		}
		if withState {
			if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("state %q not issued by this server was not refused: %s %v", state, r.Result, r.Error)
			}
			return
		}
		if r.Error != nil {
			if r.Error.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("unexpected error %d %s", r.Error.Code, r.Error.Message)
			}
			return
		}
		if !strings.Contains(string(r.Result), `"resultType":"input_required"`) && !strings.Contains(string(r.Result), `"text":"Hello"`) {
			t.Fatalf("unexpected result %s", r.Result)
		}
	})
}
