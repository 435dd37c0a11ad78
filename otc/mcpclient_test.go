package otc_test

import (
	"errors"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
)

// connectMCP serves the seed tools over Streamable HTTP on 127.0.0.1 and
// connects the toolwire MCP client to them.
func connectMCP(t *testing.T, env *seedEnv, era mcp.Era) *client.Client {
	t.Helper()
	return testmcp.ConnectHTTP(t, newSeedServer(t, env), client.WithEra(era))
}

// TestRetryGuidanceReachesMCPClient: a tool returning *server.RetryableError
// is seen by an MCP client, through the toolwire client over Streamable
// HTTP, as a *client.ToolError carrying the guidance, in both eras.
func TestRetryGuidanceReachesMCPClient(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		c := connectMCP(t, defaultSeedEnv(t), era)
		_, err := c.CallTool(t.Context(), "Doorbell.Ring", map[string]any{"doorbell_id": "doorbell1"})
		var te *client.ToolError
		if !errors.As(err, &te) {
			t.Fatalf("era %v: want a *client.ToolError, got %v", era, err)
		}
		want := mcp.RetryGuidance{DeveloperMessage: "The doorbell with ID 'doorbell1' does not exist.",
			CanRetry: true, RetryAfterMs: 500, AdditionalPromptContent: "ids: doorbell42,doorbell84"}
		if te.RetryGuidance == nil || *te.RetryGuidance != want {
			t.Errorf("era %v: guidance %+v, want %+v", era, te.RetryGuidance, want)
		}
		if len(te.Content()) != 1 || te.Content()[0].(*mcp.TextContent).Text != "Doorbell ID not found" {
			t.Errorf("era %v: content %v", era, te.Content())
		}
	}
}

// TestSeedExamplesThroughMCPClient serves an MCP server reached through the
// toolwire client as OTC: the seven seed examples come out the same.
func TestSeedExamplesThroughMCPClient(t *testing.T) {
	env := defaultSeedEnv(t)
	c := connectMCP(t, env, mcp.EraAuto)
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	h, err := otc.NewHandler(otc.NewClientBackend(c), otc.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, h)
	checkSeedExamples(t, ts, clock)

	// 400 for a tool the MCP server does not have; 422 before it is called.
	r := call(t, ts, map[string]any{"tool_id": "Nope.Nope"}, nil)
	wantStatus(t, r, 400)
	sent := env.sentCount()
	r = call(t, ts, map[string]any{"tool_id": "SMS.Send", "input": map[string]any{"message": 5}}, nil)
	wantStatus(t, r, 422)
	if env.sentCount() != sent {
		t.Error("SMS.Send ran although its input failed validation")
	}
}

// TestUnreachableMCPServer: once the MCP connection is gone the OTC
// endpoint answers 502, not a tool failure.
func TestUnreachableMCPServer(t *testing.T) {
	c := connectMCP(t, defaultSeedEnv(t), mcp.EraLegacy)
	h, err := otc.NewHandler(otc.NewClientBackend(c))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, h)
	wantStatus(t, call(t, ts, map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 2}}, nil), 200)
	c.Close()
	r := call(t, ts, map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 2}}, nil)
	wantStatus(t, r, 502)
	if msg := r.body["message"].(string); msg != "the MCP server behind this endpoint could not be reached" {
		t.Errorf("message %q", msg)
	}
}
