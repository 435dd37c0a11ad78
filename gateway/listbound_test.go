package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// endless makes an upstream's list (method) never end, while on: each
// page has perPage items, each with a description of pad bytes, and a
// nextCursor to the next page.
type endless struct {
	method       string
	perPage, pad int
	on           atomic.Bool
	pages        atomic.Int64 // pages served
}

// middleware answers e.method with e's pages while e is on.
func (e *endless) middleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method != e.method || !e.on.Load() {
			return next(ctx, req)
		}
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(req.Params, &p)
		n, _ := strconv.Atoi(p.Cursor)
		e.pages.Add(1)
		return json.RawMessage(e.page(n)), nil
	}
}

func (e *endless) page(n int) []byte {
	member := map[string]string{
		mcp.MethodListTools: "tools", mcp.MethodListPrompts: "prompts",
		mcp.MethodListResources: "resources", mcp.MethodListResourceTemplates: "resourceTemplates",
	}[e.method]
	desc := strings.Repeat("x", e.pad)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{%q:[`, member)
	for i := range e.perPage {
		if i > 0 {
			b.WriteByte(',')
		}
		id := fmt.Sprintf("%d-%d", n, i)
		switch e.method {
		case mcp.MethodListTools:
			fmt.Fprintf(&b, `{"name":"t%s","description":%q,"inputSchema":{"type":"object"}}`, id, desc)
		case mcp.MethodListPrompts:
			fmt.Fprintf(&b, `{"name":"p%s","description":%q}`, id, desc)
		case mcp.MethodListResources:
			fmt.Fprintf(&b, `{"uri":"mem://endless/%s","name":"r%s","description":%q}`, id, id, desc)
		case mcp.MethodListResourceTemplates:
			fmt.Fprintf(&b, `{"uriTemplate":"mem://endless/%s/{x}","name":"t%s","description":%q}`, id, id, desc)
		}
	}
	fmt.Fprintf(&b, `],"nextCursor":"%d"}`, n+1)
	return b.Bytes()
}

// endlessServer is an upstream with tool work whose list e makes endless
// while e is on.
func endlessServer(e *endless) *server.Server {
	s := server.New(mcp.Implementation{Name: "endless", Version: "1"},
		server.WithCapabilities(server.FeatureTools, server.FeaturePrompts, server.FeatureResources),
		server.WithMiddleware(e.middleware))
	must(server.AddTool(s, &mcp.Tool{Name: "work"}, func(context.Context, *server.CallRequest, struct{}) (struct{}, error) {
		return struct{}{}, nil
	}))
	return s
}

// checkBoundedDown checks that upstream endless of g is down naming the
// bound (status and log), and that upstream ok serves calls and only its
// tools are listed.
func checkBoundedDown(t *testing.T, g *gateway.Gateway, log *testenv.SyncBuffer, method, bound string) {
	t.Helper()
	testwait.WaitFor(t, "upstream endless to be marked down", func() bool { return stateOf(g, "endless").State == gateway.StateDown })
	st := stateOf(g, "endless")
	if !strings.Contains(st.LastError, method+": "+bound) || !strings.Contains(st.LastError, "ListLimits") {
		t.Fatalf("endless's last error %q: want it to name %s and the bound %q", st.LastError, method, bound)
	}
	testwait.WaitFor(t, "the log to say why endless is down", func() bool {
		return strings.Contains(log.String(), "upstream=endless") && strings.Contains(log.String(), bound)
	})
	if st := stateOf(g, "ok"); st.State != gateway.StateReady {
		t.Fatalf("upstream ok: %+v", st)
	}
	c := downstream(t, g)
	res, err := c.CallTool(testwait.Context(t), "ok__echo", map[string]any{"text": "still here"})
	if err != nil || res.IsError {
		t.Fatalf("ok__echo: %+v, %v", res, err)
	}
	names := testmcp.ToolNames(t, c)
	if !slices.Contains(names, "ok__echo") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "endless__") }) {
		t.Fatalf("tools %v: want ok's, and none of endless's", names)
	}
}

func logTo(b *testenv.SyncBuffer) gateway.Option {
	return gateway.WithLogger(slog.New(slog.NewTextHandler(b, nil)))
}

// TestEndlessListMarkedDown: an upstream whose list (tools, prompts,
// resources or templates) never ends is marked down naming the bound it
// went past, pages (the default, 100), items or bytes, having been read
// one page past the bound at most; the upstream next to it serves calls.
// Down, the upstream is tried again only after the maximum backoff.
func TestEndlessListMarkedDown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		method   string
		perPage  int
		pad      int
		limits   gateway.ListLimits
		bound    string
		maxPages int64 // pages the gateway reads, at most, before it stops
	}{
		{"tools/pages", mcp.MethodListTools, 50, 0, gateway.ListLimits{}, "more than 100 pages", 101},
		{"prompts/pages", mcp.MethodListPrompts, 50, 0, gateway.ListLimits{}, "more than 100 pages", 101},
		{"resources/pages", mcp.MethodListResources, 50, 0, gateway.ListLimits{}, "more than 100 pages", 101},
		{"templates/pages", mcp.MethodListResourceTemplates, 50, 0, gateway.ListLimits{}, "more than 100 pages", 101},
		{"tools/items", mcp.MethodListTools, 50, 0, gateway.ListLimits{Items: 120}, "more than 120 items", 3},
		{"tools/bytes", mcp.MethodListTools, 50, 500, gateway.ListLimits{Bytes: 64 << 10}, "more than 65536 bytes of items", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &endless{method: tc.method, perPage: tc.perPage, pad: tc.pad}
			e.on.Store(true)
			log := &testenv.SyncBuffer{}
			g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
				{Name: "endless", Server: endlessServer(e)},
				{Name: "ok", Server: echoServer("ok")},
			}}, gateway.WithLimits(gateway.Limits{Lists: tc.limits}), logTo(log),
				gateway.WithLimits(gateway.Limits{MinBackoff: 10 * time.Millisecond, MaxBackoff: testwait.Limit})) // down: not tried again within the test
			checkBoundedDown(t, g, log, tc.method, tc.bound)
			if n := e.pages.Load(); n != tc.maxPages {
				t.Fatalf("the gateway read %d pages of the endless list, want %d", n, tc.maxPages)
			}
		})
	}
}

// TestListGrowsPastBoundOnRefresh: an upstream served normally whose list
// becomes endless is marked down when a list_changed makes the gateway
// read it again; its tools are no longer served, the other upstream's are.
func TestListGrowsPastBoundOnRefresh(t *testing.T) {
	e := &endless{method: mcp.MethodListTools, perPage: 50}
	up := endlessServer(e)
	log := &testenv.SyncBuffer{}
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "endless", Server: up},
		{Name: "ok", Server: echoServer("ok")},
	}}, gateway.WithLimits(gateway.Limits{MaxCrashes: 1000, CrashWindow: testwait.Limit}), logTo(log))
	c := downstream(t, g)
	if names := testmcp.ToolNames(t, c); !slices.Contains(names, "endless__work") {
		t.Fatalf("tools %v: want endless__work while its list ends", names)
	}
	e.on.Store(true)
	must(server.AddTool(up, &mcp.Tool{Name: "more"}, func(context.Context, *server.CallRequest, struct{}) (struct{}, error) {
		return struct{}{}, nil
	})) // tools/list_changed
	checkBoundedDown(t, g, log, mcp.MethodListTools, "more than 100 pages")
}

// liveHeap is the heap in use after a collection: what the process holds.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestEndlessListMemoryBounded: an endless tools/list of 2,000 tools a
// page (the shape that once took 2.4 GB in 55 s) leaves the gateway's
// live heap within 64 MiB of where it started, after the gateway followed
// it to its bound three times (a down upstream is retried).
func TestEndlessListMemoryBounded(t *testing.T) {
	const allowance = 64 << 20
	e := &endless{method: mcp.MethodListTools, perPage: 2000, pad: 100}
	e.on.Store(true)
	before := liveHeap()
	peak := watchHeap()
	log := &testenv.SyncBuffer{}
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "endless", Server: endlessServer(e)},
		{Name: "ok", Server: echoServer("ok")},
	}}, gateway.WithLimits(gateway.Limits{MaxCrashes: 1000, CrashWindow: testwait.Limit}), logTo(log))
	checkBoundedDown(t, g, log, mcp.MethodListTools, "more than 10000 items")
	testwait.WaitFor(t, "endless to be followed to its bound three times", func() bool { return stateOf(g, "endless").Restarts >= 3 })
	grew := peak.growth()
	after := liveHeap()
	growth := int64(after) - int64(before)
	t.Logf("live heap %d MiB before, %d MiB after (%+.1f MiB); peak in use %+.1f MiB; %d pages of 2,000 tools read over %d followings",
		before>>20, after>>20, float64(growth)/(1<<20), float64(grew)/(1<<20), e.pages.Load(), stateOf(g, "endless").Restarts)
	if growth > allowance {
		t.Fatalf("the live heap grew by %d MiB, more than %d MiB", growth>>20, allowance>>20)
	}
}
