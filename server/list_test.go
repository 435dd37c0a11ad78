package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

func addNamed(t *testing.T, s *server.Server, name string) {
	t.Helper()
	if err := server.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *server.CallRequest, in struct{}) (string, error) {
		return name, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// listAll lists every tool, page by page, in a 2025-11-25 session, or
// with meta (modernMeta) as 2026-07-28 requests.
func listAll(t *testing.T, p *peer, meta map[string]any) (names []string, pages int) {
	t.Helper()
	era := "2025-11-25"
	if meta != nil {
		era = "2026-07-28"
	}
	rs := walkPages(t, era, func(method string, params map[string]any) *jsonrpc.Response {
		if meta != nil {
			params["_meta"] = meta
		}
		return p.call(method, params)
	}, mcp.MethodListTools)
	for _, r := range rs {
		var res mcp.ListToolsResult
		decodeResult(t, r, &res)
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
	}
	return names, len(rs)
}

// walkPages calls a list method with call from the first page to the last,
// following nextCursor, and returns every page's response in order. Each
// page must carry ttlMs exactly when era is 2026-07-28, and the pages must
// end.
func walkPages(t *testing.T, era string, call func(method string, params map[string]any) *jsonrpc.Response, method string) []*jsonrpc.Response {
	t.Helper()
	var pages []*jsonrpc.Response
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		r := call(method, params)
		pages = append(pages, r)
		var raw map[string]json.RawMessage
		decodeResult(t, r, &raw)
		if _, ok := raw["ttlMs"]; ok != (era == "2026-07-28") {
			t.Errorf("%s %s: ttlMs present %v: %s", era, method, ok, r.Result)
		}
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		decodeResult(t, r, &page)
		if page.NextCursor == "" {
			return pages
		}
		cursor = page.NextCursor
		if len(pages) > 100 {
			t.Fatal("pagination does not end")
		}
	}
}

func TestListPagingIsSortedAndComplete(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"}, server.WithLimits(server.Limits{PageSize: 3}))
	for _, n := range []string{"k", "b", "z", "a", "m", "c", "q"} {
		addNamed(t, s, n)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	names, pages := listAll(t, p, nil)
	if fmt.Sprint(names) != "[a b c k m q z]" || pages != 3 {
		t.Errorf("got %v in %d pages", names, pages)
	}
	mnames, _ := listAll(t, p, modernMeta())
	if fmt.Sprint(mnames) != fmt.Sprint(names) {
		t.Errorf("modern order %v differs from legacy %v", mnames, names)
	}
}

func TestCursorStaysValidWhenToolsChange(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "s", Version: "1"}, server.WithLimits(server.Limits{PageSize: 2}))
	for _, n := range []string{"a", "b", "c", "d"} {
		addNamed(t, s, n)
	}
	p := connect(t, s)
	p.initialize("2025-11-25")
	var first mcp.ListToolsResult
	decodeResult(t, p.call("tools/list", nil), &first)
	// Remove the last tool of the first page and add one before it: the
	// next page still starts right after "b".
	s.RemoveTool("b")
	addNamed(t, s, "aa")
	var second mcp.ListToolsResult
	decodeResult(t, p.call("tools/list", map[string]any{"cursor": first.NextCursor}), &second)
	if len(second.Tools) != 2 || second.Tools[0].Name != "c" || second.Tools[1].Name != "d" || second.NextCursor != "" {
		t.Errorf("second page after change: %+v next %q", second.Tools, second.NextCursor)
	}
}

func TestInvalidCursor(t *testing.T) {
	p := connect(t, newTestServer(t))
	p.initialize("2025-11-25")
	for _, c := range []string{"not-a-cursor!", "Zm9v", "%%%"} {
		wantError(t, p.call("tools/list", map[string]any{"cursor": c}), jsonrpc.CodeInvalidParams)
	}
}

func TestModernListCarriesCaching(t *testing.T) {
	p := connect(t, newTestServer(t, server.WithListCaching(90*time.Second, mcp.CachePrivate)))
	var raw map[string]json.RawMessage
	decodeResult(t, p.call("tools/list", map[string]any{"_meta": modernMeta()}), &raw)
	if string(raw["ttlMs"]) != "90000" || string(raw["cacheScope"]) != `"private"` || string(raw["resultType"]) != `"complete"` {
		t.Errorf("caching members: ttlMs %s cacheScope %s resultType %s", raw["ttlMs"], raw["cacheScope"], raw["resultType"])
	}
	legacy := connect(t, newTestServer(t))
	legacy.initialize("2025-11-25")
	raw = nil
	decodeResult(t, legacy.call("tools/list", nil), &raw)
	for _, k := range []string{"ttlMs", "cacheScope", "resultType"} {
		if _, ok := raw[k]; ok {
			t.Errorf("legacy list carries %s", k)
		}
	}
}

func TestLegacyListChanged(t *testing.T) { synctest.Test(t, testLegacyListChanged) }

func testLegacyListChanged(t *testing.T) {
	s := newTestServer(t)
	p := connect(t, s)
	p.initialize("2025-11-25")
	if len(p.notes) != 0 {
		t.Fatal("notification before any change")
	}
	addNamed(t, s, "new-tool")
	if n := p.note(); n.Method != mcp.NotificationToolsListChanged {
		t.Errorf("got %s", n.Method)
	}
	s.RemoveTool("new-tool")
	if n := p.note(); n.Method != mcp.NotificationToolsListChanged {
		t.Errorf("got %s", n.Method)
	}
	if s.RemoveTool("new-tool") {
		t.Error("removing a missing tool reported success")
	}
	p.noNote()
}

func TestModernListenSubscription(t *testing.T) { synctest.Test(t, testModernListenSubscription) }

func testModernListenSubscription(t *testing.T) {
	s := newTestServer(t)
	p := connect(t, s)
	id, ch, ap := p.listen(map[string]any{"toolsListChanged": true, "promptsListChanged": true})
	if !ap.Notifications.ToolsListChanged || ap.Notifications.PromptsListChanged {
		t.Errorf("acknowledged %+v: prompts are not served, tools are", ap.Notifications)
	}
	if fmt.Sprint(ap.Meta[mcp.MetaSubscriptionID]) != fmt.Sprint(id.Int()) {
		t.Errorf("ack subscriptionId %v, want %v", ap.Meta[mcp.MetaSubscriptionID], id)
	}
	addNamed(t, s, "later")
	p.listened(mcp.NotificationToolsListChanged, id)
	// Cancelling the listen request ends it with no reply.
	p.send(&jsonrpc.Notification{Method: mcp.NotificationCancelled, Params: json.RawMessage(fmt.Sprintf(`{"requestId":%d}`, id.Int()))})
	quiesce()
	select {
	case r := <-ch:
		t.Errorf("cancelled listen answered: %+v", r)
	default:
	}
	addNamed(t, s, "after-cancel")
	p.noNote()
}

func TestListenEndsGracefullyOnClose(t *testing.T) {
	s := newTestServer(t)
	ss := s.NewSession(nil)
	w := &recorder{}
	req := &jsonrpc.Request{ID: jsonrpc.StringID("L"), Method: "subscriptions/listen",
		Params: testwait.MustJSON(t, map[string]any{"_meta": modernMeta(), "notifications": map[string]any{"toolsListChanged": true}})}
	done := make(chan *jsonrpc.Response)
	go func() { done <- ss.HandleRequest(context.Background(), req, w) }()
	testwait.WaitFor(t, "the acknowledgement", func() bool { return w.count() > 0 })
	ss.Close()
	r := testwait.Recv(t, done, "the listen request to end")
	if r == nil || r.Error != nil {
		t.Fatalf("graceful end: %+v", r)
	}
	var got struct {
		ResultType string         `json:"resultType"`
		Meta       map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(r.Result, &got); err != nil || got.ResultType != "complete" ||
		got.Meta["io.modelcontextprotocol/subscriptionId"] != "L" || got.Meta["io.modelcontextprotocol/serverInfo"] == nil || len(got.Meta) != 2 {
		t.Errorf("graceful end: %s", r.Result)
	}
	if s.SessionCount() != 0 {
		t.Errorf("closed session still counted")
	}
}

// ackProbe is a Sender that, when the subscription's acknowledgement goes
// out, records whether the server already counts the listening session
// (and so would tell it of a list change made at that moment).
type ackProbe struct {
	recorder
	s       *server.Server
	tracked chan int
}

func (a *ackProbe) Send(ctx context.Context, m jsonrpc.Message) error {
	if n, ok := m.(*jsonrpc.Notification); ok && n.Method == mcp.NotificationListenAck {
		a.tracked <- a.s.SessionCount()
	}
	return a.recorder.Send(ctx, m)
}

// TestListenKnownBeforeAcknowledged: by the time a subscription is
// acknowledged, its session is one the server notifies, so a list changed
// right after the acknowledgement reaches it (a client may change a list
// the moment it is acknowledged).
func TestListenKnownBeforeAcknowledged(t *testing.T) {
	s := newTestServer(t)
	ss := s.NewSession(nil)
	defer ss.Close()
	w := &ackProbe{s: s, tracked: make(chan int, 1)}
	req := &jsonrpc.Request{ID: jsonrpc.StringID("L"), Method: "subscriptions/listen",
		Params: testwait.MustJSON(t, map[string]any{"_meta": modernMeta(), "notifications": map[string]any{"toolsListChanged": true}})}
	go ss.HandleRequest(context.Background(), req, w)
	if n := testwait.Recv(t, w.tracked, "the acknowledgement"); n != 1 {
		t.Fatalf("sessions the server notifies when the subscription is acknowledged: %d, want 1", n)
	}
	addNamed(t, s, "right-after")
	testwait.WaitFor(t, "a list_changed after the acknowledgement", func() bool { return w.count() >= 2 })
	w.mu.Lock()
	second := w.msgs[1].(*jsonrpc.Notification)
	w.mu.Unlock()
	if second.Method != mcp.NotificationToolsListChanged {
		t.Fatalf("second message %s", second.Method)
	}
}
