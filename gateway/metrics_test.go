package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// sample is one line of the text exposition: a metric name, its labels
// and its value.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape GETs the gateway's metrics handler and parses the text format
// (the label values the tests use have no quotes, commas or escapes).
func scrape(t *testing.T, g *gateway.Gateway) []sample {
	t.Helper()
	rec := httptest.NewRecorder()
	g.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	var out []sample
	for line := range strings.Lines(rec.Body.String()) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		s := sample{name: line[:i], labels: map[string]string{}, value: v}
		if name, labels, ok := strings.Cut(line[:i], "{"); ok {
			s.name = name
			for pair := range strings.SplitSeq(strings.TrimSuffix(labels, "}"), ",") {
				if k, v, ok := strings.Cut(pair, "="); ok {
					s.labels[k] = strings.Trim(v, `"`)
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// value is the sample of name whose labels include want; ok false when
// there is none.
func value(samples []sample, name string, want map[string]string) (float64, bool) {
	for _, s := range samples {
		if s.name != name {
			continue
		}
		match := true
		for k, v := range want {
			if s.labels[k] != v {
				match = false
				break
			}
		}
		if match {
			return s.value, true
		}
	}
	return 0, false
}

func calls(upstream, method, tool, outcome string) map[string]string {
	return map[string]string{"upstream": upstream, "method": method, "tool": tool, "outcome": outcome}
}

func TestMetrics(t *testing.T) {
	a := echoServer("a")
	must(server.AddRawTool(a, &mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *server.CallRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}}}, nil
		}))
	must(server.AddRawTool(a, &mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *server.CallRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}))
	slow := gateway.Upstream{Name: "slow", Server: a, Timeout: 50 * time.Millisecond}
	cfg := gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "a", Server: a},
		slow,
		stdioUpstream(t, "junk", "garbage"),
		{Name: "gone", Command: []string{"/nonexistent/upstream-program"}},
	}}
	g := newGateway(t, cfg, gateway.WithLimits(gateway.Limits{MaxCrashes: 2, CrashWindow: time.Hour, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}))
	// A second gateway in the process has metrics of its own.
	g2 := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "a", Server: echoServer("a2")}}})

	c := downstream(t, g)
	ctx := context.Background()
	for range 2 {
		if _, err := c.CallTool(ctx, "a__echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CallTool(ctx, "a__fail", nil); err == nil {
		t.Fatal("a__fail: no error")
	}
	if res, err := c.CallTool(ctx, "slow__block", nil); err == nil || !strings.Contains(testmcp.Text(res), "slow") {
		t.Fatalf("slow__block: %+v, %v", res, err)
	}
	if _, err := c.CallTool(ctx, "junk__work", nil); err == nil {
		t.Fatal("junk__work: no error")
	}
	if _, err := c.CallTool(ctx, "nope__nothing", nil); err == nil {
		t.Fatal("nope__nothing: no error")
	}
	if _, err := c.GetPrompt(ctx, "a__greet", map[string]string{"who": "w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPrompt(ctx, "a__greet", nil); err == nil { // a required argument is missing
		t.Fatal("a__greet without who: no error")
	}
	if _, err := c.ReadResource(ctx, "mem://a/doc"); err != nil {
		t.Fatal(err)
	}

	got := scrape(t, g)
	for _, w := range []struct {
		labels map[string]string
		want   float64
	}{
		{calls("a", "tools/call", "a__echo", "ok"), 2},
		{calls("a", "tools/call", "a__fail", "tool_error"), 1},
		{calls("slow", "tools/call", "slow__block", "timeout"), 1},
		{calls("junk", "tools/call", "junk__work", "upstream_error"), 1},
		{calls("a", "prompts/get", "", "ok"), 1},
		{calls("a", "prompts/get", "", "protocol_error"), 1},
		{calls("a", "resources/read", "", "ok"), 1},
	} {
		if v, ok := value(got, "toolwire_gateway_calls_total", w.labels); !ok || v != w.want {
			t.Errorf("calls_total%v = %v (found %v), want %v", w.labels, v, ok, w.want)
		}
	}
	for _, s := range got {
		if s.name == "toolwire_gateway_calls_total" && s.labels["outcome"] == "ok" && s.labels["tool"] == "a__fail" ||
			strings.Contains(s.labels["tool"], "nope") {
			t.Errorf("unexpected %+v", s)
		}
	}
	if v, ok := value(got, "toolwire_gateway_call_duration_seconds_count", map[string]string{"upstream": "a", "method": "tools/call", "tool": "a__echo"}); !ok || v != 2 {
		t.Errorf("duration count of a__echo = %v (found %v), want 2", v, ok)
	}
	if v, ok := value(got, "toolwire_gateway_call_duration_seconds_bucket", map[string]string{"upstream": "slow", "tool": "slow__block", "le": "0.01"}); !ok || v != 0 {
		t.Errorf("slow__block under 10ms = %v (found %v), want 0", v, ok)
	}
	for _, w := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"toolwire_gateway_upstream_state", map[string]string{"upstream": "a", "state": "ready"}, 1},
		{"toolwire_gateway_upstream_state", map[string]string{"upstream": "a", "state": "down"}, 0},
		{"toolwire_gateway_upstream_tools", map[string]string{"upstream": "a"}, 4},
		{"toolwire_gateway_upstream_restarts_total", map[string]string{"upstream": "a"}, 0},
		{"toolwire_gateway_in_flight_calls", map[string]string{"upstream": "a"}, 0},
		{"toolwire_gateway_sessions", nil, 1},
	} {
		if v, ok := value(got, w.name, w.labels); !ok || v != w.want {
			t.Errorf("%s%v = %v (found %v), want %v", w.name, w.labels, v, ok, w.want)
		}
	}

	// A call the caller cancels.
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err := c.CallTool(cctx, "a__block", nil)
	cancel()
	if err == nil {
		t.Fatal("a__block: no error")
	}
	testwait.WaitFor(t, "a cancelled call counted", func() bool {
		v, _ := value(scrape(t, g), "toolwire_gateway_calls_total", calls("a", "tools/call", "a__block", "cancelled"))
		return v == 1
	})

	// The program that does not exist is down after two failures, each
	// followed by another attempt.
	testwait.WaitFor(t, "gone down", func() bool {
		got := scrape(t, g)
		down, _ := value(got, "toolwire_gateway_upstream_state", map[string]string{"upstream": "gone", "state": "down"})
		starting, _ := value(got, "toolwire_gateway_upstream_state", map[string]string{"upstream": "gone", "state": "starting"})
		restarts, _ := value(got, "toolwire_gateway_upstream_restarts_total", map[string]string{"upstream": "gone"})
		return down == 1 && starting == 0 && restarts >= 2
	})

	// The other gateway counted nothing.
	if _, ok := value(scrape(t, g2), "toolwire_gateway_calls_total", nil); ok {
		t.Error("the second gateway counts the first one's calls")
	}

	// A removed upstream's series go.
	if err := g.Reload(gateway.Config{Upstreams: []gateway.Upstream{slow}}); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, "a's series dropped", func() bool {
		for _, s := range scrape(t, g) {
			if s.labels["upstream"] == "a" {
				return false
			}
		}
		return true
	})
	if v, ok := value(scrape(t, g), "toolwire_gateway_calls_total", calls("slow", "tools/call", "slow__block", "timeout")); !ok || v != 1 {
		t.Errorf("slow's timeout count after the reload = %v (found %v), want 1", v, ok)
	}
}
