package streamable

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// expiringHandler returns a handler whose sessions expire by a fake clock.
func expiringHandler(t *testing.T, f *fixture, opts ...HandlerOption) (*Handler, *testclock.Clock, *httptest.Server) {
	t.Helper()
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	h := NewHandler(f.srv, append([]HandlerOption{WithLimits(Limits{SessionIdleTimeout: time.Minute})}, opts...)...)
	h.now = clock.Now
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return h, clock, ts
}

func TestSessionExpiry(t *testing.T) {
	f := newFixture(t)
	h, clock, ts := expiringHandler(t, f, WithLimits(Limits{SessionIdleTimeout: time.Minute}))
	idle := initialize(t, ts.URL)
	busy := initialize(t, ts.URL)

	clock.Advance(59 * time.Second)
	// Activity on one session restarts its clock.
	resp := do(t, legacyRequest(t, ts.URL, busy, `{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	readAll(t, resp)
	clock.Advance(2 * time.Second)
	h.sweep()

	resp = do(t, legacyRequest(t, ts.URL, idle, `{"jsonrpc":"2.0","id":3,"method":"ping"}`))
	if body := readAll(t, resp); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("idle session: status %d, want 404: %s", resp.StatusCode, body)
	}
	resp = do(t, legacyRequest(t, ts.URL, busy, `{"jsonrpc":"2.0","id":4,"method":"ping"}`))
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("active session: status %d: %s", resp.StatusCode, body)
	}
	if h.SessionCount() != 1 || f.srv.SessionCount() != 1 {
		t.Fatalf("sessions: handler %d, server %d; want 1 and 1", h.SessionCount(), f.srv.SessionCount())
	}
}

// TestSessionWithOpenStreamDoesNotExpire: a connected GET stream keeps a
// session alive however long it is quiet.
func TestSessionWithOpenStreamDoesNotExpire(t *testing.T) {
	f := newFixture(t)
	h, clock, ts := expiringHandler(t, f)
	sid := initialize(t, ts.URL)
	r, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Mcp-Session-Id", sid)
	resp := do(t, r)
	defer resp.Body.Close()
	if _, ok := newSSEReader(resp.Body).Next(); !ok {
		t.Fatal("no priming event on the GET stream")
	}
	clock.Advance(time.Hour)
	h.sweep()
	if h.SessionCount() != 1 {
		t.Fatal("a session with an open stream expired")
	}
}

func TestSessionCap(t *testing.T) {
	f := newFixture(t)
	h, clock, ts := expiringHandler(t, f, WithLimits(Limits{MaxSessions: 2}))
	initialize(t, ts.URL)
	initialize(t, ts.URL)
	resp := do(t, legacyRequest(t, ts.URL, "", initializeBody))
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "too many sessions") {
		t.Fatalf("third session: status %d: %s", resp.StatusCode, body)
	}
	// Expired sessions make room: the cap sweeps before refusing.
	clock.Advance(2 * time.Minute)
	initialize(t, ts.URL)
	if h.SessionCount() != 1 {
		t.Fatalf("sessions %d, want 1 after the expired two were swept", h.SessionCount())
	}
}

// TestAbandonedSessionsReleaseMemory opens 1,000 sessions, each with a
// stored event, abandons them, and shows the heap returns to where it was
// once the idle timeout passes. The clock is fake; no test waits.
func TestAbandonedSessionsReleaseMemory(t *testing.T) {
	f := newFixture(t)
	store := NewMemoryEventStore()
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	h := NewHandler(f.srv, WithLimits(Limits{SessionIdleTimeout: time.Minute, MaxSessions: 2000}), WithEventStore(store))
	h.now = clock.Now
	defer h.Close()

	call := func(session, body string) *httptest.ResponseRecorder { return servePost(h, session, body) }
	// Warm up everything allocated once per process.
	warm := call("", initializeBody).Header().Get("Mcp-Session-Id")
	h.endSession(h.lookup(warm))

	const n = 1000
	// round opens n sessions, each with events stored, abandons them, lets
	// the idle timeout pass, and returns the heap at its peak and after.
	round := func(r int) (peak, after uint64) {
		ignore := goleak.IgnoreCurrent()
		for i := range n {
			w := call("", initializeBody)
			sid := w.Header().Get("Mcp-Session-Id")
			if w.Code != http.StatusOK || sid == "" {
				t.Fatalf("session %d: status %d", i, w.Code)
			}
			if w := call(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); w.Code != http.StatusAccepted {
				t.Fatalf("session %d: initialized: status %d", i, w.Code)
			}
			// An SSE reply leaves events in the store.
			if w := call(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1}}}`, i)); w.Code != http.StatusOK {
				t.Fatalf("session %d: call: status %d", i, w.Code)
			}
		}
		// A list change reaches every session's standalone stream. No
		// session ever opened its GET stream, so no client holds an event id
		// of it: the change is not stored, since nothing could resume it.
		type none struct{}
		if err := server.AddTool(f.srv, &mcp.Tool{Name: fmt.Sprintf("late-%d", r), Description: "added later"},
			func(context.Context, *server.CallRequest, none) (string, error) { return "", nil }); err != nil {
			t.Fatal(err)
		}
		if got := store.Len(); got != n*5 { // priming, 3 progress, result
			t.Fatalf("store holds %d events, want %d", got, n*5)
		}
		if h.SessionCount() != n || f.srv.SessionCount() != n {
			t.Fatalf("open sessions: handler %d, server %d", h.SessionCount(), f.srv.SessionCount())
		}
		peak = liveHeap()
		clock.Advance(time.Minute + time.Second)
		h.sweep()
		if h.SessionCount() != 0 || f.srv.SessionCount() != 0 || store.Len() != 0 {
			t.Fatalf("after expiry: handler %d sessions, server %d, store %d events", h.SessionCount(), f.srv.SessionCount(), store.Len())
		}
		// Goroutines of the closed sessions (list-change senders, say) may
		// still be finishing on a loaded machine: the heap is read once
		// they have ended (idle pooled workers are kept for the next
		// request).
		h.waitWatchdogIdle(t)
		testwait.WaitForNil(t, "the closed sessions' goroutines to end", func() error {
			return goleak.Find(ignore, goleak.IgnoreTopFunction("github.com/toolwire/toolwire/transport/streamable.(*workers).work"))
		})
		return peak, liveHeap()
	}

	before := liveHeap()
	peak, after := round(1)
	peak2, after2 := round(2)
	peak3, after3 := round(3)
	t.Logf("heap KiB: start %d; round 1 peak %d, after expiry %d; round 2 peak %d, after expiry %d; round 3 peak %d, after expiry %d",
		before>>10, peak>>10, after>>10, peak2>>10, after2>>10, peak3>>10, after3>>10)
	grown := int64(peak) - int64(before)
	if grown < 1<<20 {
		t.Fatalf("1,000 sessions grew the heap by only %d bytes; the measurement is not seeing them", grown)
	}
	// What stays is the capacity of the maps that held the sessions (Go maps
	// keep their high-water size), not the sessions.
	if left := int64(after) - int64(before); left > grown/4 {
		t.Fatalf("after expiry the heap is %d bytes above the start, %d%% of the %d the sessions took", left, left*100/grown, grown)
	}
	// Later rounds leave nothing more behind: what sessions leave would grow
	// the heap after every round, whereas what a busy machine adds for a
	// while (more pooled workers, a collection not yet done) does not
	// recur: one of the two later rounds must leave less than a twentieth
	// of what the sessions took.
	more2, more3 := int64(after2)-int64(after), int64(after3)-int64(after2)
	if min(more2, more3) > grown/20 {
		t.Fatalf("every round of sessions left more behind: %d bytes after the second, %d more after the third", more2, more3)
	}
}
