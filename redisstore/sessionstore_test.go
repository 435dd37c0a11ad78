package redisstore

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// TestSessionStore: records come back as stored, each operation is one
// round trip, the TTL restarts on Touch and Update, and ids never stored,
// deleted or expired are not found.
func TestSessionStore(t *testing.T) {
	c := openRedis(t)
	s := c.SessionStore()
	rt := countRoundTrips(c)
	ctx := context.Background()
	state := []byte("{\"v\":1}\x00\xff binary")
	// Warm: a script's first run on a connection loads it (two round trips).
	s.Create(ctx, &streamable.SessionRecord{ID: "warm"}, time.Minute)
	s.Touch(ctx, "warm", time.Minute)
	s.Update(ctx, "warm", nil, time.Minute)
	s.Delete(ctx, "warm")
	op := func(what string, f func() error) error {
		t.Helper()
		before := rt.count()
		err := f()
		if n := rt.count() - before; n != 1 {
			t.Errorf("%s: %d round trips, want 1", what, n)
		}
		return err
	}
	if err := op("Create", func() error {
		return s.Create(ctx, &streamable.SessionRecord{ID: "s1", Owner: "iss\x00alice", Prime: true, State: state}, time.Minute)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "s1"}, time.Minute); err == nil {
		t.Error("a second Create of one id succeeded")
	}
	var rec *streamable.SessionRecord
	op("Touch", func() (err error) { rec, err = s.Touch(ctx, "s1", time.Hour); return })
	if rec == nil || rec.ID != "s1" || rec.Owner != "iss\x00alice" || !rec.Prime || string(rec.State) != string(state) {
		t.Fatalf("Touch: %+v", rec)
	}
	if ms, _ := do(t, c, "PTTL", s.key("s1")).Int64(); ms < 59*60*1000 {
		t.Errorf("TTL after Touch with an hour: %d ms", ms)
	}
	if err := op("Update", func() error { return s.Update(ctx, "s1", []byte("two"), time.Minute) }); err != nil {
		t.Fatal(err)
	}
	if rec, _ := s.Touch(ctx, "s1", time.Minute); rec == nil || string(rec.State) != "two" || rec.Owner != "iss\x00alice" {
		t.Errorf("after Update: %+v", rec)
	}
	if err := op("Delete", func() error { return s.Delete(ctx, "s1") }); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "never", strings.Repeat("x", MaxNameLen+1), ""} {
		if _, err := s.Touch(ctx, id, time.Minute); !errors.Is(err, streamable.ErrSessionNotFound) {
			t.Errorf("Touch %.20q: %v, want ErrSessionNotFound", id, err)
		}
		if err := s.Update(ctx, id, nil, time.Minute); err == nil {
			t.Errorf("Update %.20q succeeded", id)
		}
	}
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "big", State: make([]byte, MaxSessionState+1)}, time.Minute); err == nil {
		t.Error("a state past MaxSessionState was stored")
	}
	s.Create(ctx, &streamable.SessionRecord{ID: "short"}, 100*time.Millisecond)
	testwait.WaitFor(t, "a session expiring", func() bool {
		n, _ := do(t, c, "EXISTS", s.key("short")).Int()
		return n == 0
	})
	if _, err := s.Touch(ctx, "short", time.Minute); !errors.Is(err, streamable.ErrSessionNotFound) {
		t.Errorf("an expired session: %v", err)
	}
	// Under the prefix only.
	if keys, _ := do(t, c, "KEYS", "*").StringSlice(); len(keys) != 0 {
		t.Errorf("keys left: %v", keys)
	}
}

// waiting and stopped report the "wait" tool's start and end, on any
// replica.
var waiting, stopped = make(chan struct{}, 8), make(chan struct{}, 8)

// replica is one gateway-like process: a server with an echo and a wait
// tool behind a streamable handler, its session store, event store and bus
// on its own Redis client.
func replica(t *testing.T, url string, opts ...Option) (string, *Client) {
	t.Helper()
	c := open(t, url, opts...)
	s := server.New(mcp.Implementation{Name: "replica", Version: "1"})
	testtools.AddEcho(t, s, "Echo: ")
	if err := server.AddTool(s, &mcp.Tool{Name: "wait", Description: "runs until cancelled"}, func(ctx context.Context, _ *server.CallRequest, _ struct{}) (string, error) {
		waiting <- struct{}{}
		<-ctx.Done()
		stopped <- struct{}{}
		return "", ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	h := streamable.NewHandler(s, streamable.WithSessionStore(c.SessionStore()), streamable.WithEventStore(c.EventStore()),
		streamable.WithSessionBus(c.SessionBus()))
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	return ts.URL, c
}

// post sends one 2025-era message and returns the status, the body and
// the session id answered.
func post(t *testing.T, url, sid, body string) (int, string, string) {
	t.Helper()
	return postWith(t, http.DefaultClient, url, sid, body)
}

// postWith is post on hc.
func postWith(tb testing.TB, hc *http.Client, url, sid, body string) (int, string, string) {
	tb.Helper()
	resp, b := testhttp.Do(tb, hc, testhttp.MCPPost(tb, url, sid, body))
	return resp.StatusCode, b, resp.Header.Get("Mcp-Session-Id")
}

const (
	initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	echoBody = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
)

// TestSessionsAcrossReplicas: two replicas sharing Redis (each its own
// client): a session opened on A serves on B; with Redis stopped no
// session opens (503) and B cannot serve A's session while A still can;
// once Redis is back (a fresh, empty one: nothing was saved) the session
// is gone everywhere and a new one opens.
func TestSessionsAcrossReplicas(t *testing.T) {
	srv := testenv.Redis(t)
	a, _ := replica(t, srv.URL(), WithLimits(Limits{CommandTimeout: upTimeout, HealthInterval: 50 * time.Millisecond}))
	b, cb := replica(t, srv.URL(), WithLimits(Limits{CommandTimeout: upTimeout, HealthInterval: 50 * time.Millisecond}))
	status, _, sid := post(t, a, "", initBody)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize on A: %d", status)
	}
	post(t, a, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, url := range []string{b, a} {
		if status, body, _ := post(t, url, sid, echoBody); status != http.StatusOK || !strings.Contains(body, "Echo: hi") {
			t.Fatalf("a call on %s: %d %s", url, status, body)
		}
	}
	srv.Stop()
	if status, body, _ := post(t, a, "", initBody); status != http.StatusServiceUnavailable {
		t.Errorf("initialize with Redis down: %d %s", status, body)
	}
	if status, body, _ := post(t, a, sid, echoBody); status != http.StatusOK || !strings.Contains(body, "Echo: hi") {
		t.Errorf("A, holding the session, with Redis down: %d %s", status, body)
	}
	srv.Start()
	testwait.WaitFor(t, "B's client healthy again", cb.Healthy)
	if status, _, _ := post(t, b, sid, echoBody); status != http.StatusNotFound {
		t.Errorf("the session after Redis restarted empty: %d, want 404", status)
	}
	if status, _, sid2 := post(t, b, "", initBody); status != http.StatusOK || sid2 == "" {
		t.Errorf("a new session once Redis is back: %d", status)
	}
}
