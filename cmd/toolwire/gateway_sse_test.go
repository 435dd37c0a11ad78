package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// everythingNoCapabilityTools are server-everything's tools that need no
// client capability (it registers the others, roots, sampling and
// elicitation ones, only for a client declaring them), with arguments.
var everythingNoCapabilityTools = map[string]map[string]any{
	"echo":                           {"message": "over sse"},
	"get-annotated-message":          {"messageType": "success", "includeImage": true},
	"get-env":                        {},
	"get-resource-links":             {"count": 2},
	"get-resource-reference":         {"resourceType": "Text", "resourceId": 3},
	"get-structured-content":         {"location": "Chicago"},
	"get-sum":                        {"a": 2, "b": 3},
	"get-tiny-image":                 {},
	"gzip-file-as-resource":          {"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resource"},
	"toggle-simulated-logging":       {},
	"toggle-subscriber-updates":      {},
	"trigger-long-running-operation": {"duration": 0.2, "steps": 2},
}

// sseUpstreamsConfig is a gateway config with the HTTP+SSE server at url
// behind it twice: as ev, named with transport: sse, and as auto, left to
// be detected.
func sseUpstreamsConfig(t *testing.T, url string) string {
	t.Helper()
	return writeConfig(t, t.TempDir(), fmt.Sprintf(`
upstreams:
  ev:
    url: %s
    transport: sse
  auto:
    url: %s
`, url, url))
}

// TestGatewaySSEUpstream: server-everything in its sse mode (the
// 2024-11-05 HTTP+SSE transport) behind the gateway, once named with
// transport: sse and once detected (no transport: Streamable HTTP refused,
// then the event stream found), both shown as sse by /readyz and --check:
// in both downstream eras its tools are
// listed and every one that needs no client capability is called,
// progress crosses the hop in order, and a cancelled call returns at once
// and reaches the upstream as notifications/cancelled.
func TestGatewaySSEUpstream(t *testing.T) {
	target := startEverythingSSE(t)
	var cancels atomic.Int32
	via := inspectingProxy(t, target, func(w http.ResponseWriter, r *http.Request, body []byte, proxy http.Handler) {
		if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
			cancels.Add(1)
		}
		proxy.ServeHTTP(w, r)
	})
	cfg := sseUpstreamsConfig(t, via)
	g := startGateway(t, "--config", cfg)
	testwait.WaitFor(t, "the gateway to serve both SSE upstreams", func() bool {
		names := toolNames(t, g.url, mcp.EraLegacy)
		return slices.Contains(names, "ev__echo") && slices.Contains(names, "auto__echo")
	})

	// /readyz names the transport each upstream's session runs over,
	// the detected one included.
	status, body := testhttp.Get(t, g.admin+"/readyz")
	var ready struct {
		Upstreams []struct{ Name, State, Transport string } `json:"upstreams"`
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil || status != http.StatusOK {
		t.Fatalf("/readyz: %d %v\n%s", status, err, body)
	}
	for _, u := range ready.Upstreams {
		if u.State != "ready" || u.Transport != "sse" {
			t.Errorf("/readyz: upstream %s is %s over %q, want ready over sse", u.Name, u.State, u.Transport)
		}
	}
	if len(ready.Upstreams) != 2 {
		t.Errorf("/readyz lists %d upstreams, want 2: %s", len(ready.Upstreams), body)
	}
	// So does --check, which connects each upstream once on its own.
	check := runCLI(t, "gateway", "--check", "--config", cfg)
	for _, up := range []string{"ev", "auto"} {
		if check.code != 0 || !regexp.MustCompile(`(?m)^`+up+`\s+ready\s+sse\s+\d+`).MatchString(check.stdout) {
			t.Errorf("--check: exit %d, %s is not ready over sse:\n%s%s", check.code, up, check.stdout, check.stderr)
		}
	}

	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			c := connectServe(t, g.url, era)
			ctx, cancel := context.WithTimeout(t.Context(), durableDeadline)
			defer cancel()
			names := testmcp.ToolNames(t, c)
			for tool := range everythingNoCapabilityTools {
				for _, up := range []string{"ev", "auto"} {
					if !slices.Contains(names, up+"__"+tool) {
						t.Errorf("tools/list lacks %s__%s: %v", up, tool, names)
					}
				}
			}
			for tool, args := range everythingNoCapabilityTools {
				res, err := c.CallTool(ctx, "ev__"+tool, args)
				if err != nil {
					t.Errorf("ev__%s: %s: %v", tool, client.CodeOf(err), err)
					continue
				}
				if res.IsError || len(res.Content) == 0 {
					t.Errorf("ev__%s: %s", tool, testwait.MustJSON(t, res))
				}
			}
			res, err := c.CallTool(ctx, "auto__get-sum", map[string]any{"a": 20, "b": 22})
			if err != nil || len(texts(res)) != 1 || !strings.Contains(texts(res)[0], "42") {
				t.Errorf("auto__get-sum: %v %v", err, res)
			}

			// Progress, in order.
			var mu sync.Mutex
			var got []client.Progress
			_, err = c.CallTool(ctx, "ev__trigger-long-running-operation", map[string]any{"duration": 0.5, "steps": 5},
				client.WithProgress(func(p client.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }))
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if len(got) != 5 {
				t.Errorf("%d progress reports, want 5: %+v", len(got), got)
			}
			for i, p := range got {
				if p.Progress != float64(i+1) || p.Total != 5 {
					t.Errorf("progress report %d is %+v, want %d of 5", i, p, i+1)
				}
			}
			mu.Unlock()

			// Cancellation: the call returns at once, the upstream is told.
			before := cancels.Load()
			cctx, ccancel := context.WithCancel(ctx)
			first := make(chan struct{})
			var once sync.Once
			done := make(chan error, 1)
			go func() {
				_, err := c.CallTool(cctx, "ev__trigger-long-running-operation", map[string]any{"duration": 60, "steps": 60},
					client.WithProgress(func(client.Progress) { once.Do(func() { close(first) }) }))
				done <- err
			}()
			testwait.Closed(t, first, "the first progress report of the long call")
			start := time.Now()
			ccancel()
			if err := testwait.Recv(t, done, "the cancelled call to return"); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the cancelled call took %v to return", d)
			}
			testwait.WaitFor(t, "notifications/cancelled to reach the upstream", func() bool { return cancels.Load() > before })
			res, err = c.CallTool(ctx, "ev__echo", map[string]any{"message": "still serving"})
			if err != nil || len(texts(res)) != 1 || texts(res)[0] != "Echo: still serving" {
				t.Errorf("echo after the cancellation: %v %v", err, res)
			}
		})
	}
}
