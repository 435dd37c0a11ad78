package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/transport/streamable"
)

// keyedGateway serves g over HTTP behind two API keys and returns the URL
// and the keys.
func keyedGateway(t *testing.T, g *gateway.Gateway) (url, a, b string) {
	t.Helper()
	a, _ = policy.NewKey()
	b, _ = policy.NewKey()
	keys, err := policy.NewKeySet(map[string]string{"a": policy.HashKey(a), "b": policy.HashKey(b)})
	if err != nil {
		t.Fatal(err)
	}
	h := streamable.NewHandler(g.Server())
	hs := httptest.NewServer(policy.Authenticate(keys, nil, nil)(h))
	t.Cleanup(func() { hs.Close(); h.Close() })
	return hs.URL, a, b
}

func connectWithKey(t *testing.T, url, key string, opts ...client.Option) *client.Client {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + key}}
	c, err := client.Connect(t.Context(), &client.HTTP{URL: url, Header: h}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func pendingInputs(g *gateway.Gateway) string {
	rec := httptest.NewRecorder()
	g.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if v, ok := strings.CutPrefix(line, "toolwire_gateway_pending_inputs "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestAbandonedRoundsTakeOnlyTheirCallersShare: a caller that never
// answers makes 1,100 calls whose upstream asks a question; at most
// InputLimits.PerCaller of them wait for it, parked (2026-07-28) or asked
// on its calls' streams (2025-11-25, over 8 sessions, whose client would
// hold 16 each), the rest are refused naming the limit, and meanwhile
// another caller's call, asked three questions, is answered in full.
func TestAbandonedRoundsTakeOnlyTheirCallersShare(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			u, opts := askUpstream(t, mcp.EraLegacy, 1)
			g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{u}}, opts...)
			url, keyA, keyB := keyedGateway(t, g)
			var asked atomic.Int32
			sessions := 1
			if era == mcp.EraLegacy {
				sessions = 8
			}
			abandoners := make([]*client.Client, sessions)
			for i := range abandoners {
				abandoners[i] = connectWithKey(t, url, keyA, client.WithEra(era), testmcp.NeverAnswer(t, &asked))
			}
			const calls, workers = 1100, 64
			var refused atomic.Int32
			jobs := make(chan int)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for range jobs {
						res, err := abandoners[w%sessions].CallTool(t.Context(), "q__ask", nil)
						if client.CodeOf(err) == client.CodeToolError && strings.Contains(testmcp.Text(res), "limit per caller") {
							refused.Add(1)
						}
					}
				})
			}
			go func() {
				defer close(jobs)
				for i := range calls {
					select {
					case jobs <- i:
					case <-t.Context().Done():
						return
					}
				}
			}()
			testwait.WaitFor(t, "every call past the per-caller share refused", func() bool {
				return refused.Load() == calls-gateway.DefaultPendingPerCaller
			})
			if got := pendingInputs(g); got != "16" {
				t.Errorf("calls waiting for input: %s, want %d", got, gateway.DefaultPendingPerCaller)
			}
			other := connectWithKey(t, url, keyB, client.WithEra(era),
				client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "bob"}}, nil
				}),
				client.WithSamplingHandler(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "model of bob"}}}, nil
				}),
				client.WithRoots(mcp.Root{URI: "file:///bob"}))
			res, err := other.CallTool(t.Context(), "q__ask", nil)
			if err != nil || !strings.Contains(string(res.StructuredContent), "accept:bob|model of bob|file:///bob") {
				t.Fatalf("the other caller's call: %+v %v", res, err)
			}
			if n := asked.Load(); n > gateway.DefaultPendingPerCaller {
				t.Errorf("the abandoning caller was asked %d times, more than its share", n)
			}
		})
	}
}

// TestAbandonedRoundEndsAfterTheInputTimeout: a question its caller does
// not answer is answered with an error after InputLimits.Timeout, in both
// eras: a 2025-era caller's call ends with the upstream's isError naming
// the timeout, and a 2026-07-28 caller's parked call is unparked.
func TestAbandonedRoundEndsAfterTheInputTimeout(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			u, opts := askUpstream(t, mcp.EraLegacy, 1)
			g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{u}},
				append(opts, gateway.WithLimits(gateway.Limits{Inputs: gateway.InputLimits{Timeout: 100e6}}))...)
			c := downstream(t, g, client.WithEra(era), testmcp.NeverAnswer(t, nil))
			if era == mcp.EraLegacy {
				res, err := c.CallTool(t.Context(), "q__ask", nil)
				if client.CodeOf(err) != client.CodeToolError || !strings.Contains(testmcp.Text(res), "did not answer in time") {
					t.Fatalf("call: %+v %v", res, err)
				}
				return
			}
			go func() { _, _ = c.CallTool(t.Context(), "q__ask", nil) }()
			testwait.WaitFor(t, "the call parked", func() bool { return pendingInputs(g) == "1" })
			testwait.WaitFor(t, "the parked call unparked by the input timeout", func() bool { return pendingInputs(g) == "0" })
		})
	}
}
