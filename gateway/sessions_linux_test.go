package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// everythingPerClient is server-everything over stdio as upstream "ev",
// one child per caller.
func everythingPerClient(t *testing.T, maxSessions int, idle time.Duration) gateway.Upstream {
	node, entry := testenv.Everything(t)
	return gateway.Upstream{Name: "ev", Command: []string{node, entry, "stdio"},
		Sessions: gateway.SessionsPerClient, MaxSessions: maxSessions, IdleTimeout: idle}
}

// nodeChildren counts the node processes under this process (the
// gateway's; a stdio child runs behind a guard shell, client.Command):
// those running, and the processes under it ended but not waited for
// (zombies).
func nodeChildren() (live, zombies int) {
	type proc struct {
		comm  string
		state string
		ppid  int
	}
	all := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		all[pid] = proc{comm: s[open+1 : end], state: f[0], ppid: ppid}
	}
	me := os.Getpid()
	under := func(pid int) bool {
		for range 8 {
			p, ok := all[pid]
			if !ok {
				return false
			}
			if p.ppid == me {
				return true
			}
			pid = p.ppid
		}
		return false
	}
	for pid, p := range all {
		if !under(pid) {
			continue
		}
		switch {
		case p.state == "Z":
			zombies++
		case p.comm == "node":
			live++
		}
	}
	return live, zombies
}

// waitNoChildren waits until the gateway has no node child, running or
// unreaped (the catalog's listing session is closed once it has listed).
func waitNoChildren(t *testing.T) {
	t.Helper()
	testwait.WaitFor(t, "no node child, running or unreaped", func() bool {
		live, zombies := nodeChildren()
		return live == 0 && zombies == 0
	})
}

// callResult calls a tool, an isError result being a result, not an error.
func callResult(ctx context.Context, c *client.Client, tool string, args any) (*mcp.CallToolResult, error) {
	res, err := c.CallTool(ctx, tool, args)
	var te *client.ToolError
	if errors.As(err, &te) {
		return te.Result, nil
	}
	return res, err
}

func legacyCaller(t *testing.T, g *gateway.Gateway, opts ...client.Option) *client.Client {
	t.Helper()
	return downstream(t, g, append([]client.Option{client.WithEra(mcp.EraLegacy)}, opts...)...)
}

// TestPerClientEverythingRootsAndLogging: server-everything behind a
// per_client upstream lists each caller its own roots, and the simulated
// logging one caller turns on reaches that caller only.
func TestPerClientEverythingRootsAndLogging(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{everythingPerClient(t, 4, time.Minute)}})
	waitNoChildren(t)
	ctx := testwait.Context(t)
	var logA, logB logSink
	a := legacyCaller(t, g, client.WithRoots(mcp.Root{URI: "file:///work/a", Name: "A's"}), client.WithLogHandler(logA.handle))
	b := legacyCaller(t, g, client.WithRoots(mcp.Root{URI: "file:///work/b", Name: "B's"}), client.WithLogHandler(logB.handle))
	if err := a.SetLogLevel(ctx, mcp.LevelDebug); err != nil {
		t.Fatal(err)
	}
	if err := b.SetLogLevel(ctx, mcp.LevelEmergency); err != nil {
		t.Fatal(err)
	}
	rootsA, rootsB := callText(t, a, "ev__get-roots-list", nil), callText(t, b, "ev__get-roots-list", nil)
	if !strings.Contains(rootsA, "file:///work/a") || strings.Contains(rootsA, "file:///work/b") {
		t.Errorf("A's roots: %s", rootsA)
	}
	if !strings.Contains(rootsB, "file:///work/b") || strings.Contains(rootsB, "file:///work/a") {
		t.Errorf("B's roots: %s", rootsB)
	}
	if live, _ := nodeChildren(); live != 2 {
		t.Errorf("%d node children for two callers", live)
	}

	callText(t, a, "ev__toggle-simulated-logging", nil)
	testwait.WaitFor(t, "A's simulated log message", func() bool { return strings.Contains(logA.all(), "level message") })
	if got := logB.all(); strings.Contains(got, "level message") {
		t.Errorf("B got A's simulated logging: %q", got)
	}
	callText(t, a, "ev__toggle-simulated-logging", nil) // off again
}

// TestPerClientEverythingSessionResource: a resource server-everything
// makes for one caller's session (gzip-file-as-resource) is that caller's:
// another caller reading its URI finds nothing, where behind a shared
// upstream it gets the first caller's bytes.
func TestPerClientEverythingSessionResource(t *testing.T) {
	const uri = "demo://resource/session/secret-of-A.gz"
	args := map[string]any{"name": "secret-of-A.gz", "data": "data:text/plain,secret%20of%20A", "outputType": "resourceLink"}
	blob := func(res *mcp.ReadResourceResult) string {
		if len(res.Contents) != 1 {
			return ""
		}
		if b, ok := res.Contents[0].(*mcp.BlobResourceContents); ok {
			return string(b.Blob)
		}
		return ""
	}

	t.Run("per_client", func(t *testing.T) {
		g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{everythingPerClient(t, 4, time.Minute)}})
		ctx := testwait.Context(t)
		a, b := legacyCaller(t, g), legacyCaller(t, g)
		callText(t, a, "ev__gzip-file-as-resource", args)
		callText(t, b, "ev__echo", map[string]any{"message": "B is here"})
		res, err := a.ReadResource(ctx, uri)
		if err != nil || blob(res) == "" {
			t.Fatalf("A reads its own resource: %+v, %v", res, err)
		}
		if res, err := b.ReadResource(ctx, uri); err == nil {
			t.Fatalf("B read A's resource: %s", blob(res))
		} else if !client.IsResourceNotFound(err) {
			t.Errorf("B's read: %v, want resource not found", err)
		}
	})

	t.Run("shared", func(t *testing.T) {
		up := everythingPerClient(t, 0, 0)
		up.Sessions = ""
		g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{up}})
		ctx := testwait.Context(t)
		a, b := legacyCaller(t, g), legacyCaller(t, g)
		callText(t, a, "ev__gzip-file-as-resource", args)
		var got string
		testwait.WaitForNil(t, "B reads the shared session's resource", func() error {
			res, err := b.ReadResource(ctx, uri)
			if err == nil {
				got = blob(res)
			}
			return err
		})
		if got == "" {
			t.Error("shared: B read no bytes")
		}
	})
}

// TestPerClientEverythingLimit: with max_sessions 2 and both sessions busy,
// a third caller's call is an isError naming the limit; once one is idle,
// the third caller takes its place (the idle child closed first, so never
// more than two).
func TestPerClientEverythingLimit(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{everythingPerClient(t, 2, time.Minute)}})
	waitNoChildren(t)
	a, b, c := legacyCaller(t, g), legacyCaller(t, g), legacyCaller(t, g)
	ctx := testwait.Context(t)
	ctxA, cancelA := context.WithCancel(ctx)
	ctxB, cancelB := context.WithCancel(ctx)
	defer cancelA()
	defer cancelB()
	var wg sync.WaitGroup
	for _, x := range []struct {
		c   *client.Client
		ctx context.Context
	}{{a, ctxA}, {b, ctxB}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = x.c.CallTool(x.ctx, "ev__trigger-long-running-operation", map[string]any{"duration": 60, "steps": 60})
		}()
	}
	testwait.WaitFor(t, "two busy per-client sessions", func() bool {
		open, _, _ := g.ClientSessions("ev")
		return open == 2
	})
	res, err := callResult(ctx, c, "ev__echo", map[string]any{"message": "third"})
	if err != nil {
		t.Fatal(err)
	}
	want := `upstream "ev": per-client session limit (max_sessions 2) reached`
	if !res.IsError || testmcp.Text(res) != want {
		t.Fatalf("third caller: isError %v, %q; want %q", res.IsError, testmcp.Text(res), want)
	}

	cancelA()
	testwait.WaitFor(t, "the third caller served in place of the idle one", func() bool {
		res, err := callResult(ctx, c, "ev__echo", map[string]any{"message": "third"})
		return err == nil && !res.IsError && strings.Contains(testmcp.Text(res), "third")
	})
	if live, _ := nodeChildren(); live > 2 {
		t.Errorf("%d node children, max_sessions 2", live)
	}
	if open, started, reaped := g.ClientSessions("ev"); open != 2 || started != 3 || reaped != 1 {
		t.Errorf("open %d, started %d, reaped %d; want 2, 3, 1", open, started, reaped)
	}
	cancelB()
	wg.Wait()
}

// TestPerClientEverythingIdleReaped: a per-client session unused for
// idle_timeout is closed and its child reaped (no zombie left).
func TestPerClientEverythingIdleReaped(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{everythingPerClient(t, 4, 100*time.Millisecond)}})
	waitNoChildren(t)
	a := legacyCaller(t, g)
	callText(t, a, "ev__echo", map[string]any{"message": "hi"})
	testwait.WaitFor(t, "the idle session closed", func() bool {
		open, started, reaped := g.ClientSessions("ev")
		return open == 0 && started == 1 && reaped == 1
	})
	waitNoChildren(t)
	// The caller's next call starts another.
	callText(t, a, "ev__echo", map[string]any{"message": "again"})
	if open, started, _ := g.ClientSessions("ev"); open != 1 || started != 2 {
		t.Errorf("open %d, started %d; want 1, 2", open, started)
	}
}

// TestPerClientEverythingManyCallers: 200 callers at once against
// max_sessions 4 never make more than 4 children (sampled from /proc and
// the gauge throughout); each call is served or gets the limit's isError,
// and once the callers are gone no child is left, running or unreaped.
func TestPerClientEverythingManyCallers(t *testing.T) {
	const callers, bound = 200, 4
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{everythingPerClient(t, bound, time.Minute)}})
	waitNoChildren(t)
	cs := make([]*client.Client, callers)
	for i := range cs {
		cs[i] = legacyCaller(t, g)
	}

	var peakProc, peakGauge atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			live, zombies := nodeChildren()
			if n := int64(live + zombies); n > peakProc.Load() {
				peakProc.Store(n)
			}
			if open, _, _ := g.ClientSessions("ev"); int64(open) > peakGauge.Load() {
				peakGauge.Store(int64(open))
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	ctx := testwait.Context(t)
	var served, limited atomic.Int64
	testwait.Concurrently(t, callers, 1, func(i, _ int) error {
		msg := fmt.Sprintf("caller %d", i)
		res, err := callResult(ctx, cs[i], "ev__echo", map[string]any{"message": msg})
		switch {
		case err != nil:
			return err
		case !res.IsError && strings.Contains(testmcp.Text(res), msg):
			served.Add(1)
		case res.IsError && strings.Contains(testmcp.Text(res), "per-client session limit (max_sessions 4) reached"):
			limited.Add(1)
		default:
			return fmt.Errorf("caller %d: %s", i, testmcp.Text(res))
		}
		return nil
	})
	for _, c := range cs {
		_ = c.Close()
	}
	testwait.WaitFor(t, "every per-client session closed with its caller", func() bool {
		open, _, _ := g.ClientSessions("ev")
		return open == 0
	})
	waitNoChildren(t)
	close(stop)
	<-sampled
	_, started, reaped := g.ClientSessions("ev")
	t.Logf("%d served, %d refused at the limit; %d sessions started, %d reaped; peak %d children (/proc), %d open (gauge)",
		served.Load(), limited.Load(), started, reaped, peakProc.Load(), peakGauge.Load())
	if peakProc.Load() > bound || peakGauge.Load() > bound {
		t.Errorf("peak %d children, %d open; max_sessions %d", peakProc.Load(), peakGauge.Load(), bound)
	}
	if served.Load() < bound {
		t.Errorf("%d callers served, want at least %d", served.Load(), bound)
	}
	if started != reaped {
		t.Errorf("%d started, %d reaped", started, reaped)
	}
}
