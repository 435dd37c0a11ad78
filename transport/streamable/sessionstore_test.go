package streamable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// flakyStore is a SessionStore that fails every operation while down, and
// counts its operations.
type flakyStore struct {
	SessionStore
	down  atomic.Bool
	calls atomic.Int64
}

var errStoreDown = errors.New("store down")

func (f *flakyStore) Create(ctx context.Context, rec *SessionRecord, ttl time.Duration) error {
	f.calls.Add(1)
	if f.down.Load() {
		return errStoreDown
	}
	return f.SessionStore.Create(ctx, rec, ttl)
}

func (f *flakyStore) Touch(ctx context.Context, id string, ttl time.Duration) (*SessionRecord, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return nil, errStoreDown
	}
	return f.SessionStore.Touch(ctx, id, ttl)
}

func (f *flakyStore) Update(ctx context.Context, id string, state []byte, ttl time.Duration) error {
	f.calls.Add(1)
	if f.down.Load() {
		return errStoreDown
	}
	return f.SessionStore.Update(ctx, id, state, ttl)
}

func (f *flakyStore) Delete(ctx context.Context, id string) error {
	f.calls.Add(1)
	if f.down.Load() {
		return errStoreDown
	}
	return f.SessionStore.Delete(ctx, id)
}

// replicas are two handlers, each on its own server (the same tools), that
// share one session store, one event store and one bus, as two processes
// behind a load balancer share Redis. A request's X-Test-User header, when set,
// becomes its principal.
func replicas(t *testing.T, opts ...HandlerOption) (store *flakyStore, a, b string, fa, fb *fixture) {
	t.Helper()
	store = &flakyStore{SessionStore: NewMemorySessionStore()}
	events := NewMemoryEventStore()
	fa, fb = newFixture(t), newFixture(t)
	bus := NewMemorySessionBus()
	opts = append([]HandlerOption{WithSessionStore(store), WithEventStore(events), WithSessionBus(bus)}, opts...)
	serve := func(f *fixture) string {
		h := NewHandler(f.srv, opts...)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u := r.Header.Get("X-Test-User"); u != "" {
				r = r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{Subject: u}))
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(func() { h.Close(); ts.Close() })
		return ts.URL
	}
	return store, serve(fa), serve(fb), fa, fb
}

// call posts a 2025-era request on session sid and returns the reply.
func call(t *testing.T, url, sid, body string) (int, rpcReply) {
	t.Helper()
	resp := do(t, legacyRequest(t, url, sid, body))
	text := readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, rpcReply{}
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The reply is the stream's last event with data.
		rd := newSSEReader(strings.NewReader(text))
		for ev, ok := rd.Next(); ok; ev, ok = rd.Next() {
			if ev.Data != "" {
				text = ev.Data
			}
		}
	}
	return resp.StatusCode, decodeReply(t, text)
}

const echoCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`

// TestSessionOnAnyReplica: a session opened on A serves on B (resumed from
// the store, with no second initialize), and back on A; a request costs one
// store operation; a DELETE on B ends it on A too.
func TestSessionOnAnyReplica(t *testing.T) {
	store, a, b, _, _ := replicas(t)
	sid := initialize(t, a)
	for i, url := range []string{b, a, b} {
		before := store.calls.Load()
		status, r := call(t, url, sid, echoCall)
		if status != http.StatusOK || r.Error != nil || !strings.Contains(string(r.Result), "Echo: hi") {
			t.Fatalf("call %d on %s: status %d, %+v", i, url, status, r)
		}
		if n := store.calls.Load() - before; n != 1 {
			t.Errorf("call %d: %d store operations, want 1", i, n)
		}
	}
	resp := do(t, deleteRequest(t, b, sid))
	readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE on B: %d", resp.StatusCode)
	}
	if status, _ := call(t, a, sid, echoCall); status != http.StatusNotFound {
		t.Errorf("a call on A after the DELETE on B: %d, want 404", status)
	}
}

// TestSessionStateFollowsTheClient: logging/setLevel served on B is what A
// serves the session with next: a tool on A logging at error sends nothing
// to a session whose client asked B for critical.
func TestSessionStateFollowsTheClient(t *testing.T) {
	store, a, b, fa, _ := replicas(t)
	if err := server.AddTool(fa.srv, &mcp.Tool{Name: "log-error", Description: "logs at error"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			return "logged", req.Log(ctx, mcp.LevelError, "test", "something failed")
		}); err != nil {
		t.Fatal(err)
	}
	logCall := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log-error","arguments":{}}}`
	sid := initialize(t, a)
	if body := rawCall(t, a, sid, logCall); !strings.Contains(body, "notifications/message") {
		t.Fatalf("at the default level the error message is not sent: %s", body)
	}
	if status, r := call(t, b, sid, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"critical"}}`); status != http.StatusOK || r.Error != nil {
		t.Fatalf("setLevel on B: %d %+v", status, r)
	}
	rec, err := store.Touch(context.Background(), sid, time.Minute)
	if err != nil || !strings.Contains(string(rec.State), `"logLevel":"critical"`) {
		t.Fatalf("stored state after setLevel on B: %s, %v", rec.State, err)
	}
	if body := rawCall(t, a, sid, logCall); strings.Contains(body, "notifications/message") || !strings.Contains(body, "logged") {
		t.Errorf("A still sends the error message after the client asked B for critical: %s", body)
	}
}

// rawCall posts a request and returns the whole response body.
func rawCall(t *testing.T, url, sid, body string) string {
	t.Helper()
	resp := do(t, legacyRequest(t, url, sid, body))
	return readAll(t, resp)
}

// TestSessionStoreDown: with the store unreachable no session opens (503),
// a session this replica holds is served, one it does not is 503; when the
// store is back everything works again.
func TestSessionStoreDown(t *testing.T) {
	store, a, b, _, _ := replicas(t)
	sid := initialize(t, a)
	store.down.Store(true)
	resp := do(t, legacyRequest(t, a, "", initializeBody))
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "session store is unavailable") {
		t.Errorf("initialize with the store down: %d %s", resp.StatusCode, body)
	}
	if status, r := call(t, a, sid, echoCall); status != http.StatusOK || r.Error != nil {
		t.Errorf("a call on the replica holding the session: %d %+v", status, r)
	}
	if status, _ := call(t, b, sid, echoCall); status != http.StatusServiceUnavailable {
		t.Errorf("a call on the other replica: %d, want 503", status)
	}
	modern := do(t, modernRequest(t, b, 1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}}))
	if readAll(t, modern); modern.StatusCode != http.StatusOK {
		t.Errorf("a 2026-07-28 call with the store down: %d", modern.StatusCode)
	}
	store.down.Store(false)
	if status, r := call(t, b, sid, echoCall); status != http.StatusOK || r.Error != nil {
		t.Errorf("the other replica once the store is back: %d %+v", status, r)
	}
}

// TestSessionOwnerAcrossReplicas: a session opened by one principal is
// refused (403) to another on the other replica too, and nothing is
// resumed there for it.
func TestSessionOwnerAcrossReplicas(t *testing.T) {
	_, a, b, _, fb := replicas(t)
	r := legacyRequest(t, a, "", initializeBody)
	r.Header.Set("X-Test-User", "alice")
	resp := do(t, r)
	readAll(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	before := fb.srv.SessionCount()
	r = legacyRequest(t, b, sid, echoCall)
	r.Header.Set("X-Test-User", "mallory")
	resp = do(t, r)
	readAll(t, resp)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another principal on B: %d, want 403", resp.StatusCode)
	}
	if fb.srv.SessionCount() != before {
		t.Error("B resumed a session for a principal that does not own it")
	}
	r = legacyRequest(t, b, sid, echoCall)
	r.Header.Set("X-Test-User", "alice")
	resp = do(t, r)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Echo: hi") {
		t.Errorf("its owner on B: %d %s", resp.StatusCode, body)
	}
}

// TestMemorySessionStore: records come back as stored (copies), Touch and
// Update restart the expiry, expired and deleted sessions are not found.
func TestMemorySessionStore(t *testing.T) {
	ctx := context.Background()
	m := NewMemorySessionStore()
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	state := []byte(`{"v":1}`)
	if err := m.Create(ctx, &SessionRecord{ID: "s1", Owner: "o", Prime: true, State: state}, time.Minute); err != nil {
		t.Fatal(err)
	}
	state[0] = 'X' // the store kept its own copy
	rec, err := m.Touch(ctx, "s1", time.Minute)
	if err != nil || rec.Owner != "o" || !rec.Prime || string(rec.State) != `{"v":1}` {
		t.Fatalf("Touch: %+v, %v", rec, err)
	}
	now = now.Add(50 * time.Second)
	if err := m.Update(ctx, "s1", []byte(`{"v":2}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	now = now.Add(50 * time.Second) // 100 s after Create, 50 s after Update
	if rec, err := m.Touch(ctx, "s1", time.Minute); err != nil || string(rec.State) != `{"v":2}` {
		t.Fatalf("after Update: %+v, %v", rec, err)
	}
	now = now.Add(time.Minute)
	if _, err := m.Touch(ctx, "s1", time.Minute); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("expired: %v", err)
	}
	if err := m.Update(ctx, "s1", nil, time.Minute); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("Update of an expired session: %v", err)
	}
	m.Create(ctx, &SessionRecord{ID: "s2"}, time.Minute)
	m.Delete(ctx, "s2")
	if _, err := m.Touch(ctx, "s2", time.Minute); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("deleted: %v", err)
	}
	// Expired records do not pile up: Create sweeps as the map grows.
	for i := range 1000 {
		m.Create(ctx, &SessionRecord{ID: fmt.Sprint("x", i)}, time.Second)
		now = now.Add(time.Second)
	}
	m.mu.Lock()
	n := len(m.recs)
	m.mu.Unlock()
	if n > 130 || m.Len() != 0 {
		t.Errorf("%d records held (Len %d) of 1000 created, each expired a second later", n, m.Len())
	}
}
