package streamable

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// get opens a GET stream on session sid, resuming after last when set.
func get(t *testing.T, url, sid, last string) *http.Response {
	t.Helper()
	return do(t, testhttp.MCPGet(t, url, sid, last))
}

// TestResumeOnAnotherReplica: a POST stream A closed (the tool asked it to)
// resumes on B with Last-Event-ID: B replays what A stored after that id,
// then delivers live what A sends until the reply, each event once.
func TestResumeOnAnotherReplica(t *testing.T) {
	_, a, b, fa, _ := replicas(t)
	sid := initialize(t, a)
	resp := do(t, legacyRequest(t, a, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"reconnect","_meta":{"progressToken":1}}}`))
	sr := newSSEReader(resp.Body)
	prime, ok := sr.Next()
	for e, more := sr.Next(); more; e, more = sr.Next() {
		t.Fatalf("POST stream went on after the priming event: %+v", e)
	}
	resp.Body.Close()
	if !ok || prime.ID == "" {
		t.Fatalf("no priming event: %+v", prime)
	}
	wantReconnectResumed(t, "on B", get(t, b, sid, prime.ID), fa.release)
}

// TestCancelOnAnotherReplica: a notifications/cancelled posted to B stops
// the request running on A.
func TestCancelOnAnotherReplica(t *testing.T) {
	_, a, b, fa, _ := replicas(t)
	sid := initialize(t, a)
	go func() {
		resp, err := http.DefaultClient.Do(legacyRequest(t, a, sid, `{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"block"}}`))
		if err == nil {
			readAll(t, resp)
		}
	}()
	testwait.Recv(t, fa.started, "the call to start on A")
	resp := do(t, legacyRequest(t, b, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"changed my mind"}}`))
	if readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancellation on B: %d", resp.StatusCode)
	}
	if cause := testwait.Recv(t, fa.stopped, "the call on A to stop"); cause == nil {
		t.Error("the call stopped without a cause")
	}
}

// TestAnswerOnAnotherReplica: a tool on A asks the client (roots/list);
// the client posts its answer to B; the tool on A gets it.
func TestAnswerOnAnotherReplica(t *testing.T) {
	_, a, b, fa, _ := replicas(t)
	if err := server.AddTool(fa.srv, &mcp.Tool{Name: "roots", Description: "asks the client for its roots"},
		func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
			res, err := req.ListRoots(ctx)
			if err != nil {
				return "", err
			}
			return "roots: " + res.Roots[0].URI, nil
		}); err != nil {
		t.Fatal(err)
	}
	resp := do(t, legacyRequest(t, a, "", strings.Replace(initializeBody, `"capabilities":{}`, `"capabilities":{"roots":{}}`, 1)))
	readAll(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	do(t, legacyRequest(t, a, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)).Body.Close()

	call := do(t, legacyRequest(t, a, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"roots"}}`))
	defer call.Body.Close()
	sr := newSSEReader(call.Body)
	var ask rpcReply
	for e, ok := sr.Next(); ok; e, ok = sr.Next() {
		if e.Data != "" {
			ask = decodeReply(t, e.Data)
			break
		}
	}
	if ask.Method != "roots/list" {
		t.Fatalf("the tool's request to the client: %+v", ask)
	}
	idJSON := strings.TrimSpace(string(testwait.MustJSON(t, ask.ID)))
	answer := do(t, legacyRequest(t, b, sid, `{"jsonrpc":"2.0","id":`+idJSON+`,"result":{"roots":[{"uri":"file:///work","name":"work"}]}}`))
	if readAll(t, answer); answer.StatusCode != http.StatusAccepted {
		t.Fatalf("the answer posted to B: %d", answer.StatusCode)
	}
	for e, ok := sr.Next(); ok; e, ok = sr.Next() {
		if strings.Contains(e.Data, `"id":9`) {
			if !strings.Contains(e.Data, "roots: file:///work") {
				t.Fatalf("the tool's reply: %s", e.Data)
			}
			return
		}
	}
	t.Fatal("no reply on A's POST stream")
}

// TestOutOfRequestOnAnotherReplica: a resource update for a session whose
// GET stream B holds reaches the client through B, while a list change on
// A alone is not forwarded (each replica tells its own clients).
func TestOutOfRequestOnAnotherReplica(t *testing.T) {
	_, a, b, fa, fb := replicas(t)
	for _, f := range []*fixture{fa, fb} {
		if err := server.AddResource(f.srv, &mcp.Resource{URI: "file:///watched", Name: "watched"},
			func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	sid := initialize(t, a)
	if status, r := call(t, a, sid, `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"file:///watched"}}`); status != http.StatusOK || r.Error != nil {
		t.Fatalf("subscribe on A: %d %+v", status, r)
	}
	stream := get(t, b, sid, "")
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET on B: %d", stream.StatusCode)
	}
	sr := newSSEReader(stream.Body)
	// B's copy of the session exists once the GET is open; a list change
	// on A alone, then the update.
	if err := server.AddTool(fa.srv, &mcp.Tool{Name: "only-on-a", Description: "x"},
		func(context.Context, *server.CallRequest, struct{}) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	fa.srv.NotifyResourceUpdated("file:///watched")
	for e, ok := sr.Next(); ok; e, ok = sr.Next() {
		if e.Data == "" {
			continue
		}
		if !strings.Contains(e.Data, `"notifications/resources/updated"`) || !strings.Contains(e.Data, "file:///watched") {
			t.Fatalf("first message on B's GET stream: %s, want the resource update from A", e.Data)
		}
		return
	}
	t.Fatal("B's GET stream ended with nothing")
}

// TestDeleteEndsCopiesElsewhere: a DELETE on B closes the GET stream the
// session has on A at once.
func TestDeleteEndsCopiesElsewhere(t *testing.T) {
	_, a, b, _, _ := replicas(t)
	sid := initialize(t, a)
	stream := get(t, a, sid, "")
	defer stream.Body.Close()
	ended := make(chan struct{})
	go func() {
		sr := newSSEReader(stream.Body)
		for _, ok := sr.Next(); ok; _, ok = sr.Next() {
		}
		close(ended)
	}()
	resp := do(t, deleteRequest(t, b, sid))
	if readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE on B: %d", resp.StatusCode)
	}
	testwait.Closed(t, ended, "A's GET stream to end")
}

// TestHeldStreamKeepsTheSession: a GET stream held open on A, with no
// request for longer than the idle timeout, keeps the session alive for
// every replica. The replicas and their store share a fake clock, and the
// test runs their janitors' rounds itself: five idle timeouts pass without
// a request, however late a loaded machine would have run a real ticker.
func TestHeldStreamKeepsTheSession(t *testing.T) {
	const idle = 200 * time.Millisecond
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	store := NewMemorySessionStore()
	store.now = clock.Now
	events, bus := NewMemoryEventStore(), NewMemorySessionBus()
	serve := func() (*Handler, string) {
		h := NewHandler(newFixture(t).srv, WithSessionStore(store), WithEventStore(events), WithSessionBus(bus),
			WithLimits(Limits{SessionIdleTimeout: idle}))
		h.now = clock.Now
		ts := httptest.NewServer(h)
		t.Cleanup(func() { h.Close(); ts.Close() })
		return h, ts.URL
	}
	ha, a := serve()
	hb, b := serve()
	sid := initialize(t, a)
	stream := get(t, a, sid, "")
	defer stream.Body.Close()
	for range 20 { // five idle timeouts, in the janitors' steps
		clock.Advance(idle / 4)
		for _, h := range []*Handler{ha, hb} {
			h.sweep()
			h.keepShared()
		}
	}
	if status, r := call(t, b, sid, echoCall); status != http.StatusOK || r.Error != nil {
		t.Fatalf("a call on B after the GET stream on A held the session: %d %+v", status, r)
	}
}
