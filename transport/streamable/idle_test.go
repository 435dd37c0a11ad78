package streamable

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// TestIdleSessionsStaySmall opens 1,000 2025-11-25 sessions (initialize,
// then notifications/initialized and one tools/list, as a client that
// only calls tools does) and bounds the live heap each one holds at 1 KiB
// once idle: a session makes no GET stream, no end-of-session channel and
// no state for shared stores until something needs them, and keeps no
// table of its requests or their streams once they are answered.
func TestIdleSessionsStaySmall(t *testing.T) {
	f := newFixture(t)
	h := NewHandler(f.srv)
	t.Cleanup(func() { h.Close() })
	post := func(session, body string) *httptest.ResponseRecorder { return servePost(h, session, body) }
	open := func() string {
		w := post("", initializeBody)
		sid := w.Header().Get("Mcp-Session-Id")
		if w.Code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: status %d: %s", w.Code, w.Body)
		}
		if w := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); w.Code != http.StatusAccepted {
			t.Fatalf("initialized: status %d", w.Code)
		}
		if w := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"progress"`) {
			t.Fatalf("tools/list: status %d: %s", w.Code, w.Body)
		}
		return sid
	}
	open() // one-time setup is not charged to the sessions
	before := liveHeap()
	const n = 1000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = open()
	}
	per := (float64(liveHeap()) - float64(before)) / n
	t.Logf("live heap per idle session: %.0f bytes", per)
	if per > 1024 {
		t.Errorf("an idle session holds %.0f bytes of live heap, want at most 1024", per)
	}
	if per < 64 {
		t.Fatalf("an idle session holds %.0f bytes: the measurement is not seeing the sessions", per)
	}
	ls := h.lookup(ids[n-1])
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.standalone != nil || ls.done != nil || ls.shared != nil || ls.streams.Len() != 0 {
		t.Errorf("an idle session holds state it never needed: GET stream %v, end channel %v, shared part %v, POST streams %v",
			ls.standalone != nil, ls.done != nil, ls.shared != nil, ls.streams.Len() != 0)
	}
}

// TestGETOpenedLaterGetsNotifications: a session that stayed without a GET
// stream gets the server's notifications once it opens one, and ending the
// session (DELETE) ends that stream.
func TestGETOpenedLaterGetsNotifications(t *testing.T) {
	f, _, ts, sid := openSession(t)
	type none struct{}
	add := func(name string) {
		t.Helper()
		if err := server.AddTool(f.srv, &mcp.Tool{Name: name, Description: "d"},
			func(context.Context, *server.CallRequest, none) (string, error) { return "", nil }); err != nil {
			t.Fatal(err)
		}
	}
	// No GET stream yet: nobody to tell, nothing kept. The server tells
	// its sessions from a goroutine of its own, so on a busy machine this
	// notice may reach the stream opened below; it is then one more
	// list_changed, never anything else.
	add("before")

	resp := openGET(t, ts.URL, sid, "")
	defer resp.Body.Close()
	sr := newSSEReader(resp.Body)
	if prime, ok := sr.Next(); !ok || prime.ID == "" {
		t.Fatalf("GET stream starts with %+v, want a priming event", prime)
	}
	add("after")
	e, ok := sr.Next()
	if !ok || !strings.Contains(e.Data, "notifications/tools/list_changed") {
		t.Fatalf("GET event %+v, want list_changed", e)
	}
	// Each notice sets what the goroutine sends, which sends while any is
	// set: the two notices make one or two list_changed, never more.
	seen := 1

	del, err := http.NewRequest(http.MethodDelete, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	del.Header.Set("Mcp-Session-Id", sid)
	if dr := do(t, del); readAll(t, dr) != "" || dr.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: status %d", dr.StatusCode)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("after DELETE the GET stream failed (%v), want its end", err)
	}
	late := newSSEReader(strings.NewReader(string(rest)))
	for e, ok := late.Next(); ok; e, ok = late.Next() {
		seen++
		if !strings.Contains(e.Data, "notifications/tools/list_changed") || seen > 2 {
			t.Fatalf("after DELETE the GET stream gave %q; want its end, after at most one more list_changed", rest)
		}
	}
}
