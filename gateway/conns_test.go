package gateway_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestHTTPUpstreamReusesConnections: calls in flight to an HTTP upstream
// reuse the connections of earlier calls instead of dialling anew (with
// net/http's default of two idle connections per host, each round of 16
// calls in flight together would open 14 new connections).
func TestHTTPUpstreamReusesConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dialled atomic.Int64
	// gather returns once all callers' calls of a round are in flight, so
	// each round needs one connection per caller at the same time.
	const callers, rounds = 16, 5
	up := echoServer("web")
	var mu sync.Mutex
	waiting, release := 0, make(chan struct{})
	must(server.AddTool(up, &mcp.Tool{Name: "gather"}, func(ctx context.Context, _ *server.CallRequest, _ struct{}) (struct{}, error) {
		mu.Lock()
		ch := release
		if waiting++; waiting == callers {
			close(release)
			waiting, release = 0, make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return struct{}{}, ctx.Err()
	}))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "web", URL: serveHTTPOn(t, ln, up, &dialled)}}})
	c := downstream(t, g)
	if !testwait.Concurrently(t, callers, rounds, func(int, int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := c.CallTool(ctx, "web__gather", nil)
		cancel()
		if err == nil && res.IsError {
			err = context.Canceled
		}
		return err
	}) {
		return
	}
	// At most one connection per caller, plus the session's own requests
	// (initialize, the list_changed stream, lists), with room to spare.
	if n := dialled.Load(); n > callers+8 {
		t.Fatalf("%d connections for %d rounds of %d calls in flight: not reused", n, rounds, callers)
	}
}
