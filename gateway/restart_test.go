package gateway_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/transport/streamable"
)

// serveWeb serves the echo server "web" on ln until stop.
func serveWeb(ln net.Listener) (stop func()) {
	h := streamable.NewHandler(echoServer("web"))
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	return func() { h.Close(); _ = srv.Close() }
}

// TestRollingRestartKeepsToolsListed: an HTTP upstream stopped and
// started again while a caller calls it every 100 ms: its tools never
// leave the list, every call is answered or is an isError naming the
// upstream (with retry guidance while it reconnects), the upstream is
// never declared down by its restart, and calls succeed again once it is
// back.
func TestRollingRestartKeepsToolsListed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	stop := serveWeb(ln)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{
		{Name: "web", URL: "http://" + addr + "/mcp"},
		{Name: "ok", Server: echoServer("ok")},
	}}, gateway.WithLimits(gateway.Limits{
		MinBackoff:  gateway.DefaultMinBackoff,
		MaxBackoff:  gateway.DefaultMaxBackoff,
		MaxCrashes:  gateway.DefaultCrashLimit,
		CrashWindow: gateway.DefaultCrashWindow,
	}))
	c := downstream(t, g, client.WithEra(mcp.EraLegacy))
	testwait.WaitFor(t, "web__echo listed", func() bool { return slices.Contains(testmcp.ToolNames(t, c), "web__echo") })

	var mu sync.Mutex
	var ok, failed, guided int
	var problems []string
	var lastOK time.Time
	done := make(chan struct{})
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		tick := time.NewTicker(100 * time.Millisecond) // the caller's pace
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			res, err := c.CallTool(ctx, "web__echo", map[string]any{"text": "x"})
			tools, lerr := c.ListTools(ctx)
			cancel()
			mu.Lock()
			switch {
			case err == nil:
				ok++
				lastOK = time.Now()
			case client.CodeOf(err) == client.CodeToolError && res != nil && strings.Contains(testmcp.Text(res), `"web"`):
				failed++
				if g, _ := res.Meta.RetryGuidance(); g != nil && g.CanRetry && g.RetryAfterMs > 0 {
					guided++
				}
			default:
				problems = append(problems, "call: "+err.Error())
			}
			names := []string{}
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if lerr != nil || !slices.Contains(names, "web__echo") {
				problems = append(problems, "web__echo left the list")
			}
			if st := stateOf(g, "web"); st.State == gateway.StateDown {
				problems = append(problems, "declared down by a restart: "+st.LastError)
			}
			mu.Unlock()
		}
	}()
	count := func() (int, int) { mu.Lock(); defer mu.Unlock(); return ok, failed }
	testwait.WaitFor(t, "calls answered before the restart", func() bool { n, _ := count(); return n >= 3 })

	stop()
	okBefore, _ := count()
	// The upstream stays away for 20 of the caller's calls (2 s at its pace).
	testwait.WaitFor(t, "20 calls while the upstream is away", func() bool { n, f := count(); return f >= 20 && n <= okBefore+1 })
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		close(done)
		t.Fatalf("cannot listen on %s again: %v", addr, err)
	}
	back := time.Now()
	stop2 := serveWeb(ln2)
	defer stop2()
	_, failedAtReturn := count()
	testwait.WaitFor(t, "calls answered again", func() bool { n, _ := count(); return n > okBefore+1 })
	close(done)
	<-loopDone

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	if guided == 0 {
		t.Errorf("none of %d failed calls carried retry guidance", failed)
	}
	t.Logf("%d calls answered, %d isError naming the upstream (%d with retry guidance); back %v after the upstream listened again, %d calls failed after that",
		ok, failed, guided, lastOK.Sub(back).Round(time.Millisecond), failed-failedAtReturn)
}
