package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
)

// serveEnv makes the test binary run main, the server, instead of the tests.
const serveEnv = "TYPED_SERVE"

func TestMain(m *testing.M) { testmcp.RunOrServe(m, serveEnv, main) }

// The example answers over stdio: its tools list inferred schemas, a call
// returns structured content, and a bad input is a tool error.
func TestTypedServesStructuredResults(t *testing.T) {
	ctx := testwait.Context(t)
	c := testmcp.Connect(t, testmcp.Self(serveEnv))
	tools, err := c.ListTools(ctx)
	if err != nil || len(tools) != 2 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	for _, tl := range tools {
		if !strings.Contains(string(tl.InputSchema), `"properties"`) || len(tl.OutputSchema) == 0 {
			t.Errorf("%s: inputSchema %s, outputSchema %s", tl.Name, tl.InputSchema, tl.OutputSchema)
		}
	}
	res, err := c.CallTool(ctx, "stats", map[string]any{"numbers": []float64{3, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	var got statsOut
	if err := json.Unmarshal(res.StructuredContent, &got); err != nil || got != (statsOut{Count: 3, Mean: 2, Min: 1, Max: 3}) {
		t.Errorf("stats: %s (%v)", res.StructuredContent, err)
	}
	res, err = c.CallTool(ctx, "words", map[string]any{"text": "the quick brown fox", "max": 2})
	if err != nil || string(res.StructuredContent) != `{"words":["the","quick"],"total":4}` {
		t.Errorf("words: %v %v", res, err)
	}
	_, err = c.CallTool(ctx, "stats", map[string]any{"numbers": []float64{}})
	var te *client.ToolError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "give at least one number") {
		t.Errorf("stats of nothing: %v", err)
	}
}
