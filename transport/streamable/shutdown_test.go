package streamable

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestShutdownLetsCallsFinish: during Shutdown new requests get 503 while a
// call in flight finishes and is answered.
func TestShutdownLetsCallsFinish(t *testing.T) {
	f, h, ts, sid := openSession(t)

	replies := make(chan string, 2)
	go func() {
		resp := do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gate"}}`))
		replies <- readAll(t, resp)
	}()
	go func() {
		resp := do(t, modernRequest(t, ts.URL, 3, "tools/call", map[string]any{"name": "gate"}))
		replies <- readAll(t, resp)
	}()
	testwait.Recv(t, f.started, "first call")
	testwait.Recv(t, f.started, "second call")

	done := make(chan error, 1)
	go func() { done <- h.Shutdown(context.Background()) }()
	// Wait until draining has begun, then check new work is refused.
	for {
		h.mu.Lock()
		d := h.draining
		h.mu.Unlock()
		if d {
			break
		}
		runtime.Gosched()
	}
	resp := do(t, modernRequest(t, ts.URL, 4, "tools/list", nil))
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("request during shutdown: status %d: %s", resp.StatusCode, body)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with calls in flight", err)
	default:
	}
	close(f.release)
	for range 2 {
		if r := testwait.Recv(t, replies, "a reply"); !strings.Contains(r, `"released"`) {
			t.Fatalf("reply %s", r)
		}
	}
	if err := testwait.Recv(t, done, "Shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if h.SessionCount() != 0 {
		t.Fatalf("%d sessions left after Shutdown", h.SessionCount())
	}
}

// TestShutdownEndsSubscription: a subscriptions/listen stream gets its
// acknowledgement, a list change, and at shutdown its closing result.
func TestShutdownEndsSubscription(t *testing.T) {
	f := newFixture(t)
	h, ts := testServer(t, f)
	resp := do(t, modernRequest(t, ts.URL, "L1", "subscriptions/listen",
		map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
	defer resp.Body.Close()
	sr := newSSEReader(resp.Body)
	ack, ok := sr.Next()
	if !ok || !strings.Contains(ack.Data, `"notifications/subscriptions/acknowledged"`) || !strings.Contains(ack.Data, `"L1"`) {
		t.Fatalf("first event %+v, want the acknowledgement", ack)
	}
	type none struct{}
	if err := server.AddTool(f.srv, &mcp.Tool{Name: "added", Description: "new"},
		func(context.Context, *server.CallRequest, none) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	changed, ok := sr.Next()
	if !ok || !strings.Contains(changed.Data, `"notifications/tools/list_changed"`) {
		t.Fatalf("second event %+v, want list_changed", changed)
	}
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	end, ok := sr.Next()
	if !ok || !strings.Contains(end.Data, `"id":"L1"`) || !strings.Contains(end.Data, `"result"`) {
		t.Fatalf("last event %+v, want the closing result", end)
	}
}

// TestServeGracefulShutdown runs Serve and stops it through its context.
func TestServeGracefulShutdown(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(f.srv)
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, WithOnListen(func(u string) { urls <- u })) }()
	url := testwait.Recv(t, urls, "listening")
	if !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("url %q", url)
	}
	replies := make(chan string, 1)
	go func() {
		resp := do(t, modernRequest(t, url, 1, "tools/call", map[string]any{"name": "gate"}))
		replies <- readAll(t, resp)
	}()
	testwait.Recv(t, f.started, "the call")
	cancel()
	close(f.release)
	if r := testwait.Recv(t, replies, "the reply"); !strings.Contains(r, `"released"`) {
		t.Fatalf("reply %s", r)
	}
	if err := testwait.Recv(t, served, "Serve to return"); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
