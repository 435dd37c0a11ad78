package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/transport/streamable"
)

// refusingUpstream serves stateServer over Streamable HTTP, refusing
// initialize with 503 while failing is set; inits counts the initialize
// requests that reached it.
func refusingUpstream(t *testing.T) (url string, failing *atomic.Bool, inits *atomic.Int32) {
	h := streamable.NewHandler(stateServer())
	failing, inits = new(atomic.Bool), new(atomic.Int32)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			inits.Add(1)
			if failing.Load() {
				http.Error(w, "no sessions now", http.StatusServiceUnavailable)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.Close(); h.Close() })
	return hs.URL + "/mcp", failing, inits
}

// TestPerClientStartFailureBacksOff: a caller whose per-client session
// failed to start is answered at once, within the upstream's backoff, with
// the reason and when it is tried next, and no new session is attempted
// for it; other callers still start theirs.
func TestPerClientStartFailureBacksOff(t *testing.T) {
	url, failing, inits := refusingUpstream(t)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "web", URL: url, Sessions: gateway.SessionsPerClient}}},
		gateway.WithClientOptions(client.WithEra(mcp.EraLegacy)),
		gateway.WithLimits(gateway.Limits{MinBackoff: time.Hour, MaxBackoff: time.Hour}))
	ctx := testwait.Context(t)
	callers := make([]*client.Client, 3)
	for i := range callers {
		callers[i] = downstream(t, g, client.WithEra(mcp.EraLegacy))
	}
	call := func(c *client.Client) *mcp.CallToolResult {
		res, err := c.CallTool(ctx, "web__who", nil)
		if res == nil { // an isError result comes with its error
			t.Fatal(err)
		}
		return res
	}
	if res := call(callers[0]); res.IsError {
		t.Fatalf("first caller: %s", testmcp.Text(res))
	}

	failing.Store(true)
	before := inits.Load()
	if res := call(callers[1]); !res.IsError || !strings.Contains(testmcp.Text(res), "503") {
		t.Fatalf("a refused start: %s", testmcp.Text(res))
	}
	if n := inits.Load() - before; n != 1 {
		t.Fatalf("%d initialize requests for one caller's first call, want 1", n)
	}
	for range 3 {
		res := call(callers[1])
		if !res.IsError || !strings.Contains(testmcp.Text(res), "next attempt in") || !strings.Contains(testmcp.Text(res), "503") {
			t.Fatalf("a call within the backoff: %s", testmcp.Text(res))
		}
	}
	if n := inits.Load() - before; n != 1 {
		t.Errorf("%d initialize requests after three more calls within the backoff, want still 1", n)
	}

	// Another caller is not held back by the first one's failure.
	failing.Store(false)
	if res := call(callers[2]); res.IsError {
		t.Errorf("another caller after the failure: %s", testmcp.Text(res))
	}
	if res := call(callers[1]); !res.IsError || !strings.Contains(testmcp.Text(res), "next attempt in") {
		t.Errorf("the failed caller within its backoff: %s", testmcp.Text(res))
	}
}

// TestPerClientStartRetriedAfterBackoff: once its wait has passed, a
// caller whose session failed to start gets one started.
func TestPerClientStartRetriedAfterBackoff(t *testing.T) {
	url, failing, _ := refusingUpstream(t)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "web", URL: url, Sessions: gateway.SessionsPerClient}}},
		gateway.WithClientOptions(client.WithEra(mcp.EraLegacy)))
	ctx := testwait.Context(t)
	c := downstream(t, g, client.WithEra(mcp.EraLegacy))
	testwait.WaitFor(t, "the catalog", func() bool {
		tools, err := c.ListTools(ctx)
		return err == nil && len(tools) > 0
	})
	failing.Store(true)
	if res, err := c.CallTool(ctx, "web__who", nil); res == nil || !res.IsError {
		t.Fatalf("a refused start: %v", err)
	}
	failing.Store(false)
	testwait.WaitFor(t, "the caller's session to start after its backoff", func() bool {
		res, err := c.CallTool(ctx, "web__who", nil)
		return err == nil && !res.IsError
	})
}
