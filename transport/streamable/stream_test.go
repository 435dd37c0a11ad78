package streamable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestLegacyReplyKinds: a bare reply is JSON; progress before the reply
// switches it to SSE, primed with an id and a retry interval.
func TestLegacyReplyKinds(t *testing.T) {
	_, _, ts, sid := openSession(t)

	resp := do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`))
	body := readAll(t, resp)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
	if got := resp.Header.Get("Mcp-Session-Id"); got != sid {
		t.Fatalf("Mcp-Session-Id %q, want %q", got, sid)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(decodeReply(t, body).Result, &res); err != nil {
		t.Fatal(err)
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || txt.Text != "Echo: hi" {
		t.Fatalf("result %s", body)
	}

	resp = do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"tok"}}}`))
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	if resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("X-Accel-Buffering missing: %v", resp.Header)
	}
	sr := newSSEReader(resp.Body)
	prime, ok := sr.Next()
	if !ok || prime.ID == "" || prime.Data != "" || prime.Retry != "1000" {
		t.Fatalf("first event %+v, want a priming event with id and retry 1000", prime)
	}
	var progress []float64
	var final rpcReply
	for {
		e, ok := sr.Next()
		if !ok {
			break
		}
		if e.ID == "" {
			t.Fatalf("event without id: %+v", e)
		}
		r := decodeReply(t, e.Data)
		if r.Method == "notifications/progress" {
			var p mcp.ProgressParams
			if err := json.Unmarshal(r.Params, &p); err != nil {
				t.Fatal(err)
			}
			if string(p.ProgressToken) != `"tok"` {
				t.Fatalf("progress token %s", p.ProgressToken)
			}
			progress = append(progress, p.Progress)
			continue
		}
		final = r
	}
	if len(progress) != 3 || progress[0] != 1 || progress[2] != 3 {
		t.Fatalf("progress %v, want 1,2,3", progress)
	}
	if final.ID != float64(3) || !strings.Contains(string(final.Result), `"done"`) {
		t.Fatalf("final %+v", final)
	}
}

// TestResumeAfterServerClosesStream: the tool closes its POST stream
// (SEP-1699 polling); the client resumes with GET and Last-Event-ID, gets the
// progress event it missed, then the result live.
func TestResumeAfterServerClosesStream(t *testing.T) {
	f, _, ts, sid := openSession(t)

	resp := do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"reconnect","_meta":{"progressToken":1}}}`))
	var events []sseEvent
	sr := newSSEReader(resp.Body)
	for e, ok := sr.Next(); ok; e, ok = sr.Next() {
		events = append(events, e)
	}
	resp.Body.Close()
	if len(events) != 1 || events[0].Data != "" || events[0].ID == "" || events[0].Retry == "" {
		t.Fatalf("POST stream events %+v, want only the priming event", events)
	}

	get := func(last string) *http.Response {
		r, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
		r.Header.Set("Accept", "text/event-stream")
		r.Header.Set("Mcp-Session-Id", sid)
		r.Header.Set("Last-Event-ID", last)
		return do(t, r)
	}
	wantReconnectResumed(t, "with GET", get(events[0].ID), f.release)

	// A client that lost the result too can replay it once more; after the
	// replay that ends the stream, it is forgotten.
	again := get(events[0].ID)
	if body := readAll(t, again); again.StatusCode != http.StatusOK || !strings.Contains(body, `"reconnected"`) {
		t.Fatalf("second resume: status %d: %s", again.StatusCode, body)
	}
	gone := get(events[0].ID)
	if body := readAll(t, gone); gone.StatusCode != http.StatusBadRequest {
		t.Fatalf("third resume: status %d, want 400: %s", gone.StatusCode, body)
	}
}

// TestResumeAfterClientDrop: the client drops its POST stream mid-call;
// the call goes on, and its result is replayed on a GET with Last-Event-ID.
func TestResumeAfterClientDrop(t *testing.T) {
	f, h, ts, sid := openSession(t)

	ctx, cancel := context.WithCancel(context.Background())
	req := legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"gate"}}`).WithContext(ctx)
	done := doAsync(req)
	testwait.Recv(t, f.started, "gate to start")
	// "gate" sends nothing before its result; switch its reply to SSE the way
	// a first notification would, so that the client holds an event id.
	ls := h.lookup(sid)
	ls.mu.Lock()
	var st *stream
	for id, s := range ls.streams.All() {
		if id != standaloneStream {
			st = s
		}
	}
	ls.mu.Unlock()
	st.mu.Lock()
	if err := st.startLocked(); err != nil {
		t.Fatal(err)
	}
	st.mu.Unlock()
	resp := testwait.Recv(t, done, "SSE headers")
	if resp == nil {
		t.Fatal("POST failed")
	}
	prime, ok := newSSEReader(resp.Body).Next()
	if !ok || prime.ID == "" {
		t.Fatalf("no priming event: %+v", prime)
	}
	cancel() // the client goes away mid-call
	resp.Body.Close()

	close(f.release) // the call finishes with nobody listening
	// Resume: the result is waiting in the event store.
	var body string
	for i := 0; i < 1000; i++ {
		r, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
		r.Header.Set("Accept", "text/event-stream")
		r.Header.Set("Mcp-Session-Id", sid)
		r.Header.Set("Last-Event-ID", prime.ID)
		gr := do(t, r)
		if gr.StatusCode == http.StatusConflict {
			// The dropped connection is not noticed yet; try again.
			readAll(t, gr)
			continue
		}
		e, ok := newSSEReader(gr.Body).Next()
		gr.Body.Close()
		if ok {
			body = e.Data
		}
		break
	}
	if !strings.Contains(body, `"released"`) || !strings.Contains(body, `"id":8`) {
		t.Fatalf("replayed %q, want the result of request 8", body)
	}
}

// TestModernCancelOnClose: closing a 2026-era request's response cancels it.
func TestModernCancelOnClose(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	req := modernRequest(t, ts.URL, 1, "tools/call", map[string]any{"name": "block"}).WithContext(ctx)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	testwait.Recv(t, f.started, "block to start")
	cancel()
	if err := testwait.Recv(t, errc, "client to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("client error %v, want context.Canceled", err)
	}
	cause := testwait.Recv(t, f.stopped, "the tool to see its context end")
	if cause == nil {
		t.Fatal("the tool's context ended without a cause")
	}
}

// TestModernProgressUsesSSE: progress reaches a 2026-era client before the
// result, on an SSE stream without session or priming.
func TestModernProgressUsesSSE(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f)
	meta := map[string]any{}
	for k, v := range modernMeta {
		meta[k] = v
	}
	meta["progressToken"] = 5
	resp := do(t, modernRequest(t, ts.URL, 11, "tools/call", map[string]any{"name": "progress", "_meta": meta}))
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("headers %v", resp.Header)
	}
	var methods []string
	sr := newSSEReader(resp.Body)
	for e, ok := sr.Next(); ok; e, ok = sr.Next() {
		r := decodeReply(t, e.Data)
		if r.Method != "" {
			methods = append(methods, r.Method)
		} else {
			methods = append(methods, "result")
			if !strings.Contains(string(r.Result), `"resultType":"complete"`) {
				t.Fatalf("result %s", r.Result)
			}
		}
	}
	want := "notifications/progress,notifications/progress,notifications/progress,result"
	if got := strings.Join(methods, ","); got != want {
		t.Fatalf("stream %s, want %s", got, want)
	}
}

// openGET opens a session's standalone stream, or resumes after last.
func openGET(t *testing.T, url, sid, last string) *http.Response {
	t.Helper()
	r, _ := http.NewRequest(http.MethodGet, url, nil)
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Mcp-Session-Id", sid)
	if last != "" {
		r.Header.Set("Last-Event-ID", last)
	}
	return do(t, r)
}

// TestStandaloneStream: list changes reach the GET stream; one GET stream
// per session; a dropped GET stream resumes with what it missed.
func TestStandaloneStream(t *testing.T) {
	f, h, ts, sid := openSession(t)
	resp := openGET(t, ts.URL, sid, "")
	sr := newSSEReader(resp.Body)
	prime, ok := sr.Next()
	if !ok || prime.ID == "" || prime.Data != "" {
		t.Fatalf("GET stream starts with %+v, want a priming event", prime)
	}

	second := openGET(t, ts.URL, sid, "")
	if body := readAll(t, second); second.StatusCode != http.StatusConflict {
		t.Fatalf("second GET: status %d, want 409: %s", second.StatusCode, body)
	}

	type none struct{}
	add := func(name string) {
		if err := server.AddTool(f.srv, &mcp.Tool{Name: name, Description: "d"},
			func(context.Context, *server.CallRequest, none) (string, error) { return "", nil }); err != nil {
			t.Fatal(err)
		}
	}
	add("one")
	e, ok := sr.Next()
	if !ok || !strings.Contains(e.Data, "notifications/tools/list_changed") {
		t.Fatalf("GET event %+v, want list_changed", e)
	}
	resp.Body.Close()
	// Wait until the server has let go of the dropped stream.
	ls := h.lookup(sid)
	for {
		ls.getStandalone().mu.Lock()
		attached := ls.getStandalone().c != nil
		ls.getStandalone().mu.Unlock()
		if !attached {
			break
		}
		runtime.Gosched()
	}
	add("two") // sent while nobody listens: stored
	resumed := openGET(t, ts.URL, sid, e.ID)
	defer resumed.Body.Close()
	r, ok := newSSEReader(resumed.Body).Next()
	if !ok || !strings.Contains(r.Data, "notifications/tools/list_changed") || r.ID == e.ID {
		t.Fatalf("resumed GET event %+v, want the list_changed sent while away", r)
	}
}

// TestKeepAlive: an idle SSE stream gets comment lines.
func TestKeepAlive(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f, WithLimits(Limits{KeepAliveInterval: time.Millisecond}))
	sid := initialize(t, ts.URL)
	resp := openGET(t, ts.URL, sid, "")
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == ": keep-alive" {
			return
		}
	}
	t.Fatalf("stream ended without a keep-alive: %v", sc.Err())
}

// TestWriteTimeoutDropsStuckClient: a client that stops reading loses its
// stream once a write has waited past the write timeout.
func TestWriteTimeoutDropsStuckClient(t *testing.T) {
	f := newFixture(t)
	h, ts := testServer(t, f, WithLimits(Limits{WriteTimeout: 20 * time.Millisecond, KeepAliveInterval: -1}))
	sid := initialize(t, ts.URL)
	resp := openGET(t, ts.URL, sid, "")
	defer resp.Body.Close() // never read
	ls := h.lookup(sid)
	big := &jsonrpc.Notification{Method: "notifications/message", Params: json.RawMessage(`{"data":"` + strings.Repeat("x", 1<<20) + `"}`)}
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("the stuck stream was never dropped")
		}
		_ = ls.getStandalone().Send(context.Background(), big)
		ls.getStandalone().mu.Lock()
		attached := ls.getStandalone().c != nil
		ls.getStandalone().mu.Unlock()
		if !attached {
			return
		}
	}
}
