package client_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
	"github.com/toolwire/toolwire/transport/streamable"
)

// cycleHeapSlack is how much the live heap may grow over 1,000 connect,
// call and close cycles (once caches are warm); a client or session kept
// alive by anything would cost more than 1 KiB each.
const cycleHeapSlack = 1 * mib

// echoServer is a toolwire server with one tool, "echo".
func echoServer(t *testing.T) *server.Server {
	s := server.New(mcp.Implementation{Name: "echo", Version: "1"})
	type in struct {
		Message string `json:"message"`
	}
	err := server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
		return in.Message, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cycle connects, calls echo and closes.
func cycle(t *testing.T, tr client.Transport, opts ...client.Option) {
	t.Helper()
	c, err := client.Connect(context.Background(), tr, opts...)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"message": "hi"}, client.WithOutputValidation(false))
	if err != nil || textOf(res) != "hi" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// verifyNoGoroutines waits until no goroutine is left but those ignore
// names, failing with goleak's report of them after testwait.Limit (some
// end on a timer of their own once idle: the Streamable HTTP handler's
// watchdog ends at its next tick, which outlasts goleak's own retries).
func verifyNoGoroutines(t *testing.T, ignore goleak.Option, before int) {
	t.Helper()
	testwait.WaitForNil(t, "the goroutines of the cycles to end", func() error { return goleak.Find(ignore) })
	t.Logf("goroutines: %d before, %d after", before, runtime.NumGoroutine())
}

// cycles runs n cycles after a few to warm caches up, and returns the
// growth of the live heap they left behind.
func cycles(t *testing.T, n int, tr func() client.Transport, opts ...client.Option) int64 {
	t.Helper()
	for range 10 {
		cycle(t, tr(), opts...)
	}
	base := settledHeap()
	for range n {
		cycle(t, tr(), opts...)
	}
	return int64(settledHeap()) - int64(base)
}

// 1,000 connect, call and close cycles leave no goroutine behind (the
// server's included, once it is closed: the session ends with the client's
// DELETE or with the connection) and the live heap within cycleHeapSlack of
// where it was after the first ten: over HTTP against an in-process
// Streamable HTTP server, in the legacy era (a session, its standalone GET
// stream and DELETE) and the modern one, and over an in-process Conn.
func TestConnectCloseCyclesLeakNothing(t *testing.T) {
	const n = 1000
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run("http/"+era.String(), func(t *testing.T) {
			ignore, before := goleak.IgnoreCurrent(), runtime.NumGoroutine()
			h := streamable.NewHandler(echoServer(t))
			hs := httptest.NewServer(h)
			url := hs.URL + "/mcp"
			grew := cycles(t, n, func() client.Transport { return &client.HTTP{URL: url} }, client.WithEra(era))
			sessions := h.SessionCount()
			hs.Close() // also closes the idle connections of http.DefaultTransport, the client's
			h.Close()
			t.Logf("%d cycles: live heap %+.3f MiB (slack %d MiB); sessions left open on the server: %d", n, float64(grew)/mib, cycleHeapSlack/mib, sessions)
			if grew > cycleHeapSlack {
				t.Errorf("the live heap grew by %d bytes over %d cycles, want at most %d", grew, n, cycleHeapSlack)
			}
			if sessions != 0 {
				t.Errorf("%d sessions still open on the server after every client closed", sessions)
			}
			verifyNoGoroutines(t, ignore, before)
		})
	}
	t.Run("conn", func(t *testing.T) {
		ignore, before := goleak.IgnoreCurrent(), runtime.NumGoroutine()
		s := echoServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		grew := cycles(t, n, func() client.Transport { return &client.Conn{Conn: memory.Serve(ctx, s)} })
		cancel()
		t.Logf("%d cycles: live heap %+.3f MiB (slack %d MiB)", n, float64(grew)/mib, cycleHeapSlack/mib)
		if grew > cycleHeapSlack {
			t.Errorf("the live heap grew by %d bytes over %d cycles, want at most %d", grew, n, cycleHeapSlack)
		}
		verifyNoGoroutines(t, ignore, before)
	})
}
