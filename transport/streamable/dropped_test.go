package streamable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Replies to 2025-era POSTs the client closed early: stored only when the
// client holds an event id of their stream, reachable with Last-Event-ID
// then, and bounded across sessions by the event store's Limits.MaxEventBytes.

// addDropEcho adds "dropecho" to f's server: it optionally reports progress
// (which switches its reply to SSE, primed with an event id), signals
// f.started, waits until the client has dropped its POST and the handler has
// noticed, then echoes its message, repeated "times" times (default once).
// The reply is thus always sent with nobody listening. Repeating keeps the
// request small where only the reply's size matters: under the race
// detector, decoding a 4 MiB request costs seconds.
func addDropEcho(t *testing.T, f *fixture) {
	t.Helper()
	type in struct {
		Message  string `json:"message"`
		Times    int    `json:"times"`
		Progress bool   `json:"progress"`
	}
	var (
		mu      sync.Mutex
		lastIn  in
		lastOut string
	)
	// reply is the echo, made once per distinct input: a 4 MiB string costs
	// the race detector dearly each time it is built.
	reply := func(in in) string {
		mu.Lock()
		defer mu.Unlock()
		if in.Message != lastIn.Message || in.Times != lastIn.Times {
			lastIn, lastOut = in, "Echo: "+strings.Repeat(in.Message, max(in.Times, 1))
		}
		return lastOut
	}
	err := server.AddTool(f.srv, &mcp.Tool{Name: "dropecho", Description: "echoes once its POST is dropped"},
		func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
			if in.Progress {
				if err := req.Progress(ctx, 1, 2, "before the drop"); err != nil {
					return "", err
				}
			}
			st, _ := ctx.Value(streamKey{}).(*stream)
			if st == nil {
				return "", errors.New("dropecho: not a 2025-era POST stream")
			}
			f.started <- struct{}{}
			if _, dropped := testwait.Until(func() bool {
				st.mu.Lock()
				defer st.mu.Unlock()
				return st.c == nil
			}); !dropped {
				return "", errors.New("dropecho: the POST was never dropped")
			}
			return reply(in), nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// dropEchoBody is the tools/call request of dropecho echoing message times
// times.
func dropEchoBody(id int, message string, times int, progress bool) []byte {
	meta := ""
	if progress {
		meta = `,"_meta":{"progressToken":"p"}`
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"dropecho","arguments":{"message":%q,"times":%d,"progress":%t}%s}}`,
		id, message, times, progress, meta)
}

// droppedCall POSTs a dropecho call and closes the connection early: before
// any reply byte when progress is false, right after the priming event
// otherwise. It returns the priming event's id ("" without progress) once
// the call has finished on the server, its reply sent to nobody.
func droppedCall(t *testing.T, f *fixture, h *Handler, url, sid string, id int, message string, times int, progress bool) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := legacyRequest(t, url, sid, string(dropEchoBody(id, message, times, progress))).WithContext(ctx)
	type result struct {
		resp *http.Response
		err  error
	}
	results := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(r)
		results <- result{resp, err}
	}()
	testwait.Recv(t, f.started, "dropecho to start")
	primeID := ""
	if progress {
		res := testwait.Recv(t, results, "the SSE headers")
		if res.err != nil {
			t.Fatal(res.err)
		}
		prime, ok := newSSEReader(res.resp.Body).Next()
		if !ok || prime.ID == "" || prime.Data != "" {
			t.Fatalf("first event %+v, want a priming event", prime)
		}
		primeID = prime.ID
		cancel()
		res.resp.Body.Close()
	} else {
		cancel()
		if res := testwait.Recv(t, results, "the dropped POST to return"); res.err == nil {
			res.resp.Body.Close()
			t.Fatalf("the POST was answered (status %d) before it was dropped", res.resp.StatusCode)
		}
	}
	// The call ends on the server after its reply is sent (or stored).
	ls := h.lookup(sid)
	testwait.WaitFor(t, "the dropped call to finish", func() bool {
		ls.mu.Lock()
		defer ls.mu.Unlock()
		return ls.inFlight == 0
	})
	return primeID
}

// liveHeap is the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestDroppedRepliesHeapBounded is the case: 40 sessions, each with
// two 4 MiB echo calls whose POST the client closed early. Before the fix a
// reply sent after the drop was stored as the first event of a stream that
// never gave the client an event id, where no resumption could reach it; it
// stayed until DELETE or the idle TTL, and only the per-session bound (8 MiB)
// applied, so the 40 sessions held about 320 MiB of live heap.
//
// Dropped before any reply byte, nothing is stored. Dropped after the
// priming event, the replies are reachable and kept, but the store's global
// bound (Limits.MaxEventBytes, 16 MiB here) holds them all: the oldest are evicted
// (resuming them gets 400, events lost) and the newest is still delivered.
// Either way the live heap grows by at most the global bound plus a slack
// of 8 MiB (the sessions themselves, connections, allocator rounding).
func TestDroppedRepliesHeapBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 640 MiB of echo replies")
	}
	const (
		sessions = 40
		calls    = 2
		bound    = 16 << 20
		slack    = 8 << 20
	)
	// Each reply echoes a 4 KiB message 1,023 times: 4 MiB less 4 KiB, so
	// that two fit the default per-session bound of 8 MiB, as they did in the
	// issue (where the body limit of 4 MiB bounded them).
	message, times := strings.Repeat("x", 4<<10), 1<<10-1
	for _, tc := range []struct {
		name     string
		progress bool
	}{
		{"dropped before any event", false},
		{"dropped after the priming event", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			addDropEcho(t, f)
			store := NewMemoryEventStore(WithLimits(Limits{MaxEventBytes: bound}))
			h, ts := testServer(t, f, WithEventStore(store))
			// Warm up what the process allocates once (pools, the tool's
			// decoder), then forget it.
			warm := initialize(t, ts.URL)
			droppedCall(t, f, h, ts.URL, warm, 1, message, times, tc.progress)
			h.endSession(h.lookup(warm))
			http.DefaultClient.CloseIdleConnections()

			before := liveHeap()
			// Fewer collections while the replies come and go: under the
			// race detector each one is dear. liveHeap collects anyway, and
			// the memory limit keeps a regression that stores the replies
			// again from taking gigabytes before it fails.
			defer debug.SetGCPercent(debug.SetGCPercent(800))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
			sids := make([]string, sessions)
			var primes []string
			for i := range sessions {
				sids[i] = initialize(t, ts.URL)
				for c := range calls {
					primes = append(primes, droppedCall(t, f, h, ts.URL, sids[i], 2+c, message, times, tc.progress))
				}
			}
			http.DefaultClient.CloseIdleConnections()
			after := liveHeap()
			grown := int64(after) - int64(before)
			t.Logf("live heap before %d KiB, after %d KiB (+%d KiB); store holds %d events, %d KiB",
				before>>10, after>>10, grown>>10, store.Len(), store.Bytes()>>10)
			if h.SessionCount() != sessions {
				t.Fatalf("%d sessions open, want %d", h.SessionCount(), sessions)
			}
			if grown > bound+slack {
				t.Fatalf("the live heap grew by %d bytes, past the store's bound of %d plus %d of slack", grown, bound, slack)
			}
			if store.Bytes() > bound {
				t.Fatalf("the store holds %d bytes, past its bound of %d", store.Bytes(), bound)
			}
			if !tc.progress {
				// No client holds an event id of these streams: nothing is kept.
				if store.Len() != 0 {
					t.Fatalf("the store holds %d events of streams nobody can resume", store.Len())
				}
				return
			}
			// The newest reply is reachable; the oldest were evicted by the
			// global bound, and resuming them says so.
			last := primes[len(primes)-1]
			resp := get(t, ts.URL, sids[sessions-1], last)
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":3`) || !strings.Contains(body, "Echo: xxx") {
				t.Fatalf("resume of the newest reply: status %d: %.200s", resp.StatusCode, body)
			}
			resp = get(t, ts.URL, sids[0], primes[0])
			body = readAll(t, resp)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "no longer stored") {
				t.Fatalf("resume of the oldest reply: status %d, want 400 (events lost): %.200s", resp.StatusCode, body)
			}
		})
	}
}

// TestReplyAfterPrimingDropIsReachable: a call whose POST the client closed
// after reading the priming event is answered into the event store; a GET
// with that event's id as Last-Event-ID replays what the client missed, the
// reply last, and then the stream is forgotten: a second resume gets 400 and
// the store holds none of its events.
func TestReplyAfterPrimingDropIsReachable(t *testing.T) {
	f := newFixture(t)
	addDropEcho(t, f)
	store, h, ts, sid := storedSession(t, f)
	prime := droppedCall(t, f, h, ts.URL, sid, 5, "late", 1, true)
	if store.Len() != 3 { // priming, progress, reply
		t.Fatalf("the store holds %d events, want 3 (priming, progress, reply)", store.Len())
	}
	resp := get(t, ts.URL, sid, prime)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume: status %d: %s", resp.StatusCode, readAll(t, resp))
	}
	var events []sseEvent
	sr := newSSEReader(resp.Body)
	for e, ok := sr.Next(); ok; e, ok = sr.Next() {
		events = append(events, e)
	}
	resp.Body.Close()
	if len(events) != 2 || !strings.Contains(events[0].Data, `"notifications/progress"`) {
		t.Fatalf("replayed %+v, want the progress then the reply", events)
	}
	var reply rpcReply
	if err := json.Unmarshal([]byte(events[1].Data), &reply); err != nil || reply.ID != float64(5) || !strings.Contains(string(reply.Result), "Echo: late") {
		t.Fatalf("replayed reply %q (%v), want the echo of request 5", events[1].Data, err)
	}
	again := get(t, ts.URL, sid, prime)
	if body := readAll(t, again); again.StatusCode != http.StatusBadRequest {
		t.Fatalf("second resume: status %d, want 400: %s", again.StatusCode, body)
	}
	if store.Len() != 0 {
		t.Fatalf("the store holds %d events after the replay that ended the stream", store.Len())
	}
}

// TestDeliveredJSONReplyNotStored: a reply delivered as application/json
// leaves nothing in the store.
func TestDeliveredJSONReplyNotStored(t *testing.T) {
	f := newFixture(t)
	store, _, ts, sid := storedSession(t, f)
	resp := do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`))
	if body := readAll(t, resp); !strings.Contains(body, "Echo: hi") {
		t.Fatalf("reply %s", body)
	}
	if store.Len() != 0 {
		t.Fatalf("the store holds %d events of a reply delivered as JSON", store.Len())
	}
}

// TestStandaloneEventsNeedAnID: messages for the standalone stream of a
// session that never opened it are not stored, since a GET without
// Last-Event-ID replays nothing; once a GET stream has handed out an event
// id, messages sent while it is away are stored and replayed on resume.
func TestStandaloneEventsNeedAnID(t *testing.T) {
	f := newFixture(t)
	store, h, ts, sid := storedSession(t, f)
	ls := h.lookup(sid)
	note := func(n int) *jsonrpc.Notification {
		return &jsonrpc.Notification{Method: "notifications/message", Params: fmt.Appendf(nil, `{"level":"info","data":%d}`, n)}
	}
	if err := ls.Send(context.Background(), note(1)); err != nil {
		t.Fatal(err)
	}
	if store.Len() != 0 {
		t.Fatalf("the store holds %d events of a stream no client can resume", store.Len())
	}
	resp := openGET(t, ts.URL, sid, "")
	prime, ok := newSSEReader(resp.Body).Next()
	if !ok || prime.ID == "" {
		t.Fatalf("GET stream starts with %+v, want a priming event", prime)
	}
	resp.Body.Close()
	testwait.WaitFor(t, "the dropped GET stream to be let go", func() bool {
		st := ls.getStandalone()
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.c == nil
	})
	if err := ls.Send(context.Background(), note(2)); err != nil {
		t.Fatal(err)
	}
	resumed := openGET(t, ts.URL, sid, prime.ID)
	defer resumed.Body.Close()
	e, ok := newSSEReader(resumed.Body).Next()
	if !ok || !strings.Contains(e.Data, `"data":2`) {
		t.Fatalf("resumed GET event %+v, want the message sent while away", e)
	}
}

// TestCloseSSEStreamNeedsAnID: in a session on 2025-06-18, which has no
// priming event, CloseSSEStream on a stream that has sent nothing would
// leave the client no event id to resume with, and the reply would be lost.
// It refuses, and the reply arrives on the open POST.
func TestCloseSSEStreamNeedsAnID(t *testing.T) {
	f := newFixture(t)
	type none struct{}
	if err := server.AddTool(f.srv, &mcp.Tool{Name: "tryclose", Description: "closes its stream if it can"},
		func(ctx context.Context, req *server.CallRequest, in none) (string, error) {
			return fmt.Sprintf("closed=%t", CloseSSEStream(ctx)), nil
		}); err != nil {
		t.Fatal(err)
	}
	_, ts := testServer(t, f)
	resp := do(t, legacyRequest(t, ts.URL, "", strings.Replace(initializeBody, mcp.Version20251125, "2025-06-18", 1)))
	readAll(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d", resp.StatusCode)
	}
	r := legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"tryclose"}}`)
	r.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp = do(t, r)
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "closed=false") || !strings.Contains(body, `"id":4`) {
		t.Fatalf("status %d, Content-Type %q: %q; want the reply on the POST", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}
