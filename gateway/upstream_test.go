package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

func pidOf(t *testing.T, c *client.Client, tool string) int {
	t.Helper()
	res, err := c.CallTool(context.Background(), tool, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.PID == 0 {
		t.Fatalf("%s: %v", res.StructuredContent, err)
	}
	return out.PID
}

func TestStdioKilledMidCall(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		stdioUpstream(t, "kid", "serve"),
		{Name: "ok", Server: echoServer("ok")},
	}})
	c := downstream(t, g)
	pid := pidOf(t, c, "kid__pid")

	started := make(chan struct{}, 1)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := c.CallTool(context.Background(), "kid__block", nil, client.WithProgress(func(client.Progress) {
			select {
			case started <- struct{}{}:
			default:
			}
		}))
		done <- res
	}()
	<-started // the child is running the tool
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res == nil || !res.IsError || !strings.Contains(testmcp.Text(res), `upstream "kid"`) {
		t.Fatalf("result %+v", res)
	}
	if _, err := c.CallTool(context.Background(), "ok__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	// The supervisor starts a new child; calls work again.
	testwait.WaitFor(t, "a new child", func() bool {
		if stateOf(g, "kid").State != gateway.StateReady {
			return false
		}
		res, err := c.CallTool(context.Background(), "kid__pid", nil)
		return err == nil && !res.IsError && !strings.Contains(string(res.StructuredContent), `"pid":`+itoa(pid)+`}`)
	})
	if p := pidOf(t, c, "kid__pid"); p == pid {
		t.Fatalf("same pid %d after the kill", p)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestCrashLoopGoesDown(t *testing.T) {
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "nope", Command: []string{"/nonexistent/upstream-program"}},
	}}, gateway.WithLimits(gateway.Limits{MaxCrashes: 3, CrashWindow: time.Hour, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}))
	testwait.WaitFor(t, "state down", func() bool { return stateOf(g, "nope").State == gateway.StateDown })
	st := stateOf(g, "nope")
	if !strings.Contains(st.LastError, "upstream-program") {
		t.Fatalf("status %+v", st)
	}
	c := downstream(t, g)
	if names := testmcp.ToolNames(t, c); len(names) != 0 {
		t.Fatalf("tools %v", names)
	}
}

func TestHTTPUpstreamDownThenUp(t *testing.T) {
	addr := testenv.FreeAddr(t) // nothing listens there yet

	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "web", URL: "http://" + addr + "/mcp"},
		{Name: "ok", Server: echoServer("ok")},
	}})
	if st := stateOf(g, "web"); st.State == gateway.StateReady || st.LastError == "" {
		t.Fatalf("status %+v", st)
	}
	rec := newRecorder()
	c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithNotificationHandler(rec.handle))
	if names := testmcp.ToolNames(t, c); slices.Contains(names, "web__echo") || !slices.Contains(names, "ok__echo") {
		t.Fatalf("tools %v", names)
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	serveHTTPOn(t, ln, echoServer("web"), nil)

	rec.wait(t, mcp.NotificationToolsListChanged)
	testwait.WaitFor(t, "web__echo listed", func() bool { return slices.Contains(testmcp.ToolNames(t, c), "web__echo") })
	res, err := c.CallTool(context.Background(), "web__echo", map[string]any{"text": "up"})
	if err != nil || !strings.Contains(string(res.StructuredContent), `"from":"web"`) {
		t.Fatal(res, err)
	}
	// Shut down before the gateway closes its session.
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestReloadWhileCallRuns(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	slow := server.New(mcp.Implementation{Name: "slow", Version: "1"})
	must(server.AddTool(slow, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *server.CallRequest, _ struct{}) (echoOut, error) {
		close(entered)
		<-release
		return echoOut{Echo: "done", From: "slow"}, nil
	}))
	a := gateway.Upstream{Name: "a", Server: slow}
	b := gateway.Upstream{Name: "b", Server: echoServer("b")}
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{a}})
	rec := newRecorder()
	c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithNotificationHandler(rec.handle))
	done := make(chan error, 1)
	go func() {
		res, err := c.CallTool(context.Background(), "a__wait", nil)
		if err == nil && !strings.Contains(string(res.StructuredContent), "done") {
			err = &client.ProtocolError{Op: "a__wait", Reason: string(res.StructuredContent)}
		}
		done <- err
	}()
	<-entered

	if err := g.Reload(gateway.Config{Upstreams: []gateway.Upstream{a, b}}); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, mcp.NotificationToolsListChanged)
	if names := testmcp.ToolNames(t, c); !slices.Contains(names, "b__echo") || !slices.Contains(names, "a__wait") {
		t.Fatalf("after adding b: %v", names)
	}
	// An invalid reload keeps the running config.
	bad := gateway.Config{Upstreams: []gateway.Upstream{a, b}, Naming: gateway.Naming{Rename: map[string]string{"b__echo": "a__wait"}}}
	if err := g.Reload(bad); err == nil {
		t.Fatal("a colliding config was accepted")
	}
	if _, err := c.CallTool(context.Background(), "b__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	// Removing a while its call runs: the call still completes.
	if err := g.Reload(gateway.Config{Upstreams: []gateway.Upstream{b}}); err != nil {
		t.Fatal(err)
	}
	if names := testmcp.ToolNames(t, c); slices.Contains(names, "a__wait") || !slices.Contains(names, "b__echo") {
		t.Fatalf("after removing a: %v", names)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := g.Upstreams(); len(st) != 1 || st[0].Name != "b" {
		t.Fatalf("status %+v", st)
	}
}

func TestCloseWaitsForCalls(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	slow := server.New(mcp.Implementation{Name: "slow", Version: "1"})
	must(server.AddTool(slow, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *server.CallRequest, _ struct{}) (struct{}, error) {
		close(entered)
		<-release
		return struct{}{}, nil
	}))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "a", Server: slow}}})
	c := downstream(t, g)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "a__wait", nil)
		done <- err
	}()
	<-entered
	closed := make(chan error, 1)
	go func() { closed <- g.Close(context.Background()) }()
	select {
	case <-closed:
		t.Fatal("Close returned with a call in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// An upstream's list change reaches the downstream list (with
// list_changed); a tool that would collide after renaming is left out and
// the tool already serving the name keeps it.
func TestRuntimeListChangeAndCollision(t *testing.T) {
	a, b := echoServer("a"), echoServer("b")
	g := newGateway(t, gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "a", Server: a}, {Name: "b", Server: b}},
		Naming:    gateway.Naming{Rename: map[string]string{"a__late": "b__echo"}},
	})
	rec := newRecorder()
	c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithNotificationHandler(rec.handle))
	testmcp.ToolNames(t, c)
	noop := func(context.Context, *server.CallRequest, struct{}) (struct{}, error) { return struct{}{}, nil }
	must(server.AddTool(a, &mcp.Tool{Name: "late"}, noop))
	must(server.AddTool(a, &mcp.Tool{Name: "fresh"}, noop))
	rec.wait(t, mcp.NotificationToolsListChanged)
	testwait.WaitFor(t, "a__fresh listed", func() bool { return slices.Contains(testmcp.ToolNames(t, c), "a__fresh") })
	res, err := c.CallTool(context.Background(), "b__echo", map[string]any{"text": "x"})
	if err != nil || !strings.Contains(string(res.StructuredContent), `"from":"b"`) {
		t.Fatal(res, err)
	}
	// Removing it upstream removes it downstream.
	a.RemoveTool("fresh")
	testwait.WaitFor(t, "a__fresh gone", func() bool { return !slices.Contains(testmcp.ToolNames(t, c), "a__fresh") })
}
