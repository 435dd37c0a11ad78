package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
)

// getLog records when each GET of the standalone stream arrived.
type getLog struct {
	mu    sync.Mutex
	times []time.Time
	more  chan struct{}
}

func newGetLog() *getLog { return &getLog{more: make(chan struct{}, 1)} }

func (g *getLog) add() {
	g.mu.Lock()
	g.times = append(g.times, time.Now())
	g.mu.Unlock()
	select {
	case g.more <- struct{}{}:
	default:
	}
}

// wait returns the first n arrival times, failing the test if they have
// not come after testwait.Limit (a hang bound).
func (g *getLog) wait(t *testing.T, n int) []time.Time {
	t.Helper()
	deadline := time.After(testwait.Limit)
	for {
		g.mu.Lock()
		if len(g.times) >= n {
			out := append([]time.Time(nil), g.times[:n]...)
			g.mu.Unlock()
			return out
		}
		got := len(g.times)
		g.mu.Unlock()
		select {
		case <-g.more:
		case <-deadline:
			t.Fatalf("%d GETs after %v, want %d", got, testwait.Limit, n)
		}
	}
}

// retryZeroStream makes f's standalone stream send "retry: 0" and one
// event, then close, and returns the log of the GETs that open it.
func retryZeroStream(f *fake) *getLog {
	gets := newGetLog()
	f.get = func(w http.ResponseWriter, r *http.Request) {
		gets.add()
		writeSSE(w, "retry: 0\n"+sseData(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one event"}}`))
	}
	return gets
}

// A server whose standalone stream sends "retry: 0" and one event, then
// closes, must not make the client reconnect in a loop (9,207 GETs in 5 s
// once). Each reconnection waits at least the floor, doubled
// per reconnection in a row.
func TestHTTPStandaloneStreamBacksOff(t *testing.T) {
	f := newFake(t)
	gets := retryZeroStream(f)
	connect(t, f.transport(), legacy())
	times := gets.wait(t, 5)
	floor := 100 * time.Millisecond // client.DefaultMinReconnectDelay
	for i := 1; i < len(times); i++ {
		want := floor << (i - 1)
		if gap := times[i].Sub(times[i-1]); gap < want {
			t.Errorf("GET %d came %v after the previous one, want at least %v (floor and backoff)", i+1, gap, want)
		}
	}
}

// The floor and ceiling are the client's options.
func TestHTTPReconnectDelayOption(t *testing.T) {
	f := newFake(t)
	gets := retryZeroStream(f)
	connect(t, f.transport(), legacy(), client.WithLimits(client.Limits{MinReconnectDelay: 300 * time.Millisecond, MaxReconnectDelay: 400 * time.Millisecond}))
	times := gets.wait(t, 3)
	for i, want := range []time.Duration{300 * time.Millisecond, 400 * time.Millisecond} {
		if gap := times[i+1].Sub(times[i]); gap < want {
			t.Errorf("GET %d came %v after the previous one, want at least %v", i+2, gap, want)
		}
	}
}

// A server that redirects to another origin gets nothing there, whatever
// the redirect (301, 302, 303, 307, 308) and wherever it points (another
// port, another host): not the POST (body, session id, the caller's
// headers, Authorization among them), not a notification, not the
// standalone GET (not even after a same-origin hop), not the GET resuming
// a reply stream, not the DELETE of Close (the body, OTC-API-Key, -H
// headers and Mcp-Session-Id were once resent after a 307). The
// calls fail with a transport error naming the redirect. This holds for a
// caller's http.Client too, even one whose own CheckRedirect allows
// everything.
func TestHTTPNoCrossOriginRedirect(t *testing.T) {
	var stolen atomic.Int32
	evilHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<10))
		t.Errorf("the other origin got %s %s with headers %v and body %q", r.Method, r.URL, r.Header, body)
		w.WriteHeader(http.StatusOK)
	})
	evils := map[string]string{} // where -> base URL
	for where, addr := range map[string]string{"another port": "127.0.0.1:0", "another host": "127.0.0.2:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s (%s) not available: %v", where, addr, err)
			continue
		}
		evil := &httptest.Server{Listener: l, Config: &http.Server{Handler: evilHandler}}
		evil.Start()
		defer evil.Close()
		evils[where] = evil.URL
	}
	if len(evils) == 0 {
		t.Fatal("no listener for the other origin")
	}
	clients := map[string]*http.Client{
		"default":                      nil,
		"caller's client":              {},
		"caller's client allowing all": {CheckRedirect: func(*http.Request, []*http.Request) error { return nil }},
	}
	secrets := http.Header{"Authorization": {"Bearer secret-token"}, "Otc-Api-Key": {"secret"}, "X-Custom": {"also secret"}}
	statuses := []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect}
	for name, hc := range clients {
		for where, evilURL := range evils {
			t.Run(name+"/"+where, func(t *testing.T) {
				for _, status := range statuses {
					target := evilURL + "/mcp"
					f := newFake(t)
					f.route = func(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message) bool {
						switch m := msg.(type) {
						case *jsonrpc.Request:
							if m.Method != "tools/call" {
								return false
							}
							if strings.Contains(string(m.Params), `"name":"resume"`) {
								writeSSE(w, "id: ev-1\nretry: 1\ndata: \n\n") // ends early: resumed by GET
								return true
							}
						case *jsonrpc.Notification:
							if m.Method != "notifications/initialized" {
								return false
							}
						case nil:
							if r.Method == http.MethodGet && r.URL.Path == "/mcp" && r.Header.Get("Last-Event-ID") == "" {
								http.Redirect(w, r, "/mcp/hop", http.StatusTemporaryRedirect) // same origin, then away
								return true
							}
						default:
							return false
						}
						http.Redirect(w, r, target, status)
						return true
					}
					tr := &client.HTTP{URL: f.url(), Client: hc, Header: secrets}
					c := connect(t, tr, legacy(), client.WithLimits(client.Limits{MinReconnectDelay: time.Millisecond, MaxReconnectDelay: time.Millisecond}))
					for _, tool := range []string{"echo", "resume"} {
						_, err := c.CallTool(context.Background(), tool, map[string]string{"message": "private"}, client.WithOutputValidation(false))
						var te *client.TransportError
						if !errors.As(err, &te) || te.StatusCode != status || !strings.Contains(err.Error(), "redirect to \""+target) {
							t.Errorf("HTTP %d, %s: err = %v, want a transport error naming the redirect", status, tool, err)
						}
					}
					c.Close()
					var hops, deletes, resumes int
					for _, s := range f.requests() {
						switch {
						case s.Method == http.MethodDelete:
							deletes++
						case s.Method == http.MethodGet && s.Header.Get("Last-Event-ID") != "":
							resumes++
						case s.Method == http.MethodGet && s.Header.Get("Mcp-Session-Id") == "session-1":
							hops++ // /mcp, then /mcp/hop: the same-origin redirect is followed
						}
					}
					if hops != 2 || deletes != 1 || resumes != 1 {
						t.Errorf("HTTP %d: the endpoint saw %d standalone GETs (want 2: the redirect within the origin is followed), %d DELETEs (want 1), %d resuming GETs (want 1)", status, hops, deletes, resumes)
					}
				}
			})
		}
	}
	if hc := clients["caller's client allowing all"]; hc.CheckRedirect == nil {
		t.Error("the caller's http.Client was changed")
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("%d requests reached the other origin", n)
	}
}

// A GET redirected within the endpoint's origin is followed, with the
// session id.
func TestHTTPSameOriginGETRedirectFollowed(t *testing.T) {
	f := newFake(t)
	opened := make(chan http.Header, 1)
	f.get = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			http.Redirect(w, r, "/mcp/stream", http.StatusTemporaryRedirect)
			return
		}
		select {
		case opened <- r.Header.Clone():
		default:
		}
		writeSSE(w, ": open\n\n")
		<-r.Context().Done()
	}
	connect(t, f.transport(), legacy())
	if h := testwait.Recv(t, opened, "the redirected GET (the same-origin redirect followed)"); h.Get("Mcp-Session-Id") != "session-1" {
		t.Errorf("redirected GET headers: %v", h)
	}
}

// A server that rejects the session with 400 and -32000 "No valid session
// ID provided" even after re-initializing (as server-everything answers an
// unknown session) gets exactly one re-initialization, then the call fails
// with CodeSessionInvalid. A 400 with another code, or with -32000 that
// does not name the session, is the request's own error.
func TestHTTPSessionRejected400(t *testing.T) {
	for _, tc := range []struct {
		body      string
		lost      bool
		wantCalls int
	}{
		{`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":%s}`, true, 2},
		{`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`, true, 2},
		{`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid session params"},"id":%s}`, false, 1},
		{`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":%s}`, false, 1},
	} {
		f := newFake(t)
		f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
			writeJSON(w, 400, strings.Replace(tc.body, "%s", req.ID.String(), 1))
		})
		c := connect(t, f.transport(), legacy())
		_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
		var se *client.SessionInvalidError
		if tc.lost {
			if !errors.As(err, &se) || client.CodeOf(err) != client.CodeSessionInvalid || se.StatusCode != 400 || se.SessionID != "session-2" {
				t.Errorf("%s: err = %v, want session invalid after one re-initialization", tc.body, err)
			}
		} else if client.CodeOf(err) != client.CodeJSONRPC {
			t.Errorf("%s: err = %v, want the JSON-RPC error as sent", tc.body, err)
		}
		if n := len(f.calls("tools/call")); n != tc.wantCalls {
			t.Errorf("%s: %d tools/call requests, want %d", tc.body, n, tc.wantCalls)
		}
		if n := len(f.calls("initialize")); n != tc.wantCalls {
			t.Errorf("%s: %d initialize requests, want %d", tc.body, n, tc.wantCalls)
		}
	}
}

// When the server refuses the client's answer to a request it sent during
// a call (HTTP 400 to the POSTed response), the call fails at once with a
// transport error saying so, rather than waiting for its timeout (it was
// once only logged, and the call waited 60 s).
func TestHTTPRefusedAnswerFailsTheCall(t *testing.T) {
	f := newFake(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method != "tools/call" {
			return false
		}
		writeSSE(w, "id: 1\ndata: \n\n", sseData(`{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}`))
		<-r.Context().Done() // the response never comes: the server is waiting for the answer
		return true
	}
	f.answer = func(w http.ResponseWriter, r *http.Request, resp *jsonrpc.Response) bool {
		writeJSON(w, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: unexpected response"}}`)
		return true
	}
	handler := client.WithRequestHandler(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		return map[string]any{"action": "decline"}, nil
	})
	// A call that waited for its timeout (half the test's bound; the
	// server never answers) would end with context.DeadlineExceeded.
	c := connect(t, f.transport(), legacy(), handler, client.WithTimeout(testwait.Limit/2))
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "ask", nil, client.WithOutputValidation(false))
		done <- err
	}()
	err := testwait.Recv(t, done, "the call to fail")
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != 400 || errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "answer to elicitation/create") || !strings.Contains(err.Error(), "unexpected response") {
		t.Fatalf("err = %v, want a transport error naming the refused answer", err)
	}
}

// pagedTools is a 2026-07-28 server that lists its tools three to a page
// with ttlMs 0 (mcp-go's default); every tool's structuredContent is
// {"v": "<name>"}, as its outputSchema says. add lists one more tool.
type pagedTools struct {
	f     *fake
	mu    sync.Mutex
	names []string
}

func newPagedTools(t *testing.T, names ...string) *pagedTools {
	p := &pagedTools{f: newFake(t), names: names}
	p.f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		switch req.Method {
		case "server/discover":
			writeResult(w, req.ID, discoverResult)
		case "tools/list":
			var params struct {
				Cursor string `json:"cursor"`
			}
			json.Unmarshal(req.Params, &params)
			start := 0
			fmt.Sscan(params.Cursor, &start)
			p.mu.Lock()
			names := p.names
			p.mu.Unlock()
			var tools []string
			for _, n := range names[start:min(start+3, len(names))] {
				tools = append(tools, `{"name":"`+n+`","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"v":{"type":"string","const":"`+n+`"}},"required":["v"]}}`)
			}
			next := ""
			if start+3 < len(names) {
				next = fmt.Sprintf(`,"nextCursor":"%d"`, start+3)
			}
			writeResult(w, req.ID, `{"resultType":"complete","tools":[`+strings.Join(tools, ",")+`]`+next+`,"ttlMs":0,"cacheScope":"public"}`)
		case "tools/call":
			var params struct {
				Name string `json:"name"`
			}
			json.Unmarshal(req.Params, &params)
			writeResult(w, req.ID, `{"resultType":"complete","content":[],"structuredContent":{"v":"`+params.Name+`"}}`)
		default:
			return false
		}
		return true
	}
	return p
}

func (p *pagedTools) add(name string) {
	p.mu.Lock()
	p.names = append(p.names, name)
	p.mu.Unlock()
}

// With ttlMs 0 the client does not list every page before every call
// (once 7 extra requests per call at page size 3): the
// listing is reused, validated calls go on against its outputSchemas, and
// a tool the listing lacks makes it list again, once.
func TestToolsTTLZeroIsNotRelistedPerCall(t *testing.T) {
	p := newPagedTools(t, "t1", "t2", "t3", "t4", "t5", "t6", "t7")
	c := connect(t, p.f.transport())
	ctx := context.Background()
	lists := func() int { return len(p.f.calls("tools/list")) }
	for i := range 5 {
		if _, err := c.CallTool(ctx, fmt.Sprintf("t%d", i+1), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := lists(); n != 3 {
		t.Fatalf("%d tools/list requests for 5 calls, want 3 (one listing of three pages)", n)
	}
	// A tool added since the listing: the miss lists again, and its
	// outputSchema is then used.
	p.add("t8")
	for range 2 {
		if _, err := c.CallTool(ctx, "t8", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := lists(); n != 6 {
		t.Errorf("%d tools/list requests after calling a new tool twice, want 6 (one more listing)", n)
	}
	// A tool the server does not list at all: one listing, not one per call.
	for range 3 {
		if _, err := c.CallTool(ctx, "unlisted", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := lists(); n != 9 {
		t.Errorf("%d tools/list requests after calling an unlisted tool three times, want 9 (one more listing)", n)
	}
}

// WithLimits(Limits{MinToolsTTL: -1}) takes the server's ttlMs as it is: with 0, every
// validated call lists again.
func TestMinToolsTTLOption(t *testing.T) {
	p := newPagedTools(t, "t1", "t2", "t3", "t4")
	c := connect(t, p.f.transport(), client.WithLimits(client.Limits{MinToolsTTL: -1}))
	for range 2 {
		if _, err := c.CallTool(context.Background(), "t1", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(p.f.calls("tools/list")); n != 4 {
		t.Errorf("%d tools/list requests, want 4 (two pages before each call)", n)
	}
}
