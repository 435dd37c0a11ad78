package client_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestRelayedInputRound: WithInputRounds(false) returns a 2026-07-28
// input_required result as it is, and WithInputResponses sends the retry
// with the answers and the requestState byte for byte, as a gateway
// relaying its callers' answers does.
func TestRelayedInputRound(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "asker", Version: "1"})
	err := server.AddTool(s, &mcp.Tool{Name: "who"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "who?",
			RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return "hello " + res.Content["name"].(string), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	asked := false
	c := testmcp.Connect(t, &client.HTTP{URL: testmcp.ServeHTTP(t, s)}, client.WithEra(mcp.EraModern),
		client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked = true
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}))
	raw, err := c.CallToolRaw(t.Context(), "who", nil, client.WithInputRounds(false))
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  json.RawMessage            `json:"requestState"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.ResultType != "input_required" || head.InputRequests["elicitation"] == nil || len(head.RequestState) == 0 {
		t.Fatalf("first round %s (%v)", raw, err)
	}
	if asked {
		t.Fatal("the client answered the input request itself")
	}
	answers := json.RawMessage(`{"elicitation":{"action":"accept","content":{"name":"Ada"}}}`)
	raw, err = c.CallToolRaw(t.Context(), "who", nil, client.WithInputResponses(answers, head.RequestState), client.WithInputRounds(false))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"text":"hello Ada"`) || !strings.Contains(string(raw), `"resultType":"complete"`) {
		t.Fatalf("retry answered %s", raw)
	}
}
