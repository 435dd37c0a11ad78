package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
)

// legacySSE serves a toolwire server over the 2024-11-05 HTTP+SSE
// transport, as the TypeScript SDK's SSEServerTransport does: GET /sse
// opens a session whose first event names /message?sessionId=N; POSTs
// there are answered 202 and the replies come on the stream. POST /sse
// is 404, as it is on servers that predate Streamable HTTP.
type legacySSE struct {
	srv *httptest.Server
	s   *server.Server

	// endpoint, when set, is the endpoint event's data for session n;
	// "" sends no endpoint event at all.
	endpoint func(n int) string
	// after is written raw on a stream right after its endpoint event.
	after string

	gets, posts, inits atomic.Int32
	mu                 sync.Mutex
	sessions           map[string]*legacySession
	seq                int
}

type legacySession struct {
	conn *memory.Conn
	stop context.CancelFunc // ends the stream
}

func newLegacySSE(t *testing.T, s *server.Server) *legacySSE {
	t.Helper()
	l := &legacySSE{s: s, sessions: map[string]*legacySession{}}
	l.endpoint = func(n int) string { return fmt.Sprintf("/message?sessionId=%d", n) }
	l.srv = httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(func() {
		l.drop()
		l.srv.CloseClientConnections()
		l.srv.Close()
	})
	return l
}

func (l *legacySSE) url() string { return l.srv.URL + "/sse" }

func (l *legacySSE) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		l.stream(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/message":
		l.mu.Lock()
		sess := l.sessions[r.URL.Query().Get("sessionId")]
		l.mu.Unlock()
		if sess == nil {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		l.posts.Add(1)
		if strings.Contains(string(body), `"method":"initialize"`) {
			l.inits.Add(1)
		}
		if err := sess.conn.Write(r.Context(), body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "Accepted")
	default:
		http.NotFound(w, r)
	}
}

func (l *legacySSE) stream(w http.ResponseWriter, r *http.Request) {
	l.gets.Add(1)
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	l.mu.Lock()
	l.seq++
	n := l.seq
	id := fmt.Sprint(n)
	conn := memory.Serve(ctx, l.s)
	l.sessions[id] = &legacySession{conn: conn, stop: stop}
	ep := l.endpoint(n)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.sessions, id)
		l.mu.Unlock()
		conn.Close()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if ep != "" {
		fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", ep)
	}
	io.WriteString(w, "retry: 10\n\n") // reconnect soon (raised to MinReconnectDelay)
	io.WriteString(w, l.after)
	w.(http.Flusher).Flush()
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
		w.(http.Flusher).Flush()
	}
}

// drop ends every open stream, as a server that loses its connections.
func (l *legacySSE) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.sessions {
		s.stop()
	}
}

// sseServer is a server with the tools these tests call: echo, a slow
// one that reports progress and waits for release or cancellation, and
// big, whose result is n bytes of text.
type sseServer struct {
	s         *server.Server
	started   chan struct{} // a slow call began
	release   chan struct{}
	cancelled chan struct{} // a slow call saw its context end
	slowRuns  atomic.Int32
}

func newSSEServer(t *testing.T) *sseServer {
	t.Helper()
	x := &sseServer{s: server.New(mcp.Implementation{Name: "legacy-sse", Version: "1"}),
		started: make(chan struct{}, 8), release: make(chan struct{}), cancelled: make(chan struct{}, 8)}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(server.AddTool(x.s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *server.CallRequest, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return "Echo: " + in.Message, nil
	}))
	must(server.AddTool(x.s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		x.slowRuns.Add(1)
		_ = req.Progress(ctx, 1, 2, "half way")
		x.started <- struct{}{}
		select {
		case <-x.release:
			return "done", nil
		case <-ctx.Done():
			x.cancelled <- struct{}{}
			return "", ctx.Err()
		}
	}))
	must(server.AddTool(x.s, &mcp.Tool{Name: "big"}, func(_ context.Context, _ *server.CallRequest, in struct {
		N int `json:"n"`
	}) (string, error) {
		return strings.Repeat("x", in.N), nil
	}))
	return x
}

func echoText(t *testing.T, c *client.Client, msg string) {
	t.Helper()
	res, err := c.CallTool(testwait.Context(t), "echo", map[string]string{"message": msg})
	if err != nil {
		t.Fatalf("echo: %s: %v", client.CodeOf(err), err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "Echo: "+msg {
		t.Fatalf("echo: %+v", res.Content)
	}
}

func TestSSETransportCallsWithProgressAndCancellation(t *testing.T) {
	x := newSSEServer(t)
	l := newLegacySSE(t, x.s)
	c := connect(t, &client.SSE{URL: l.url()})
	if c.Era() != mcp.EraLegacy {
		t.Fatalf("era %v over the HTTP+SSE transport", c.Era())
	}
	if n := l.gets.Load(); n != 1 {
		t.Errorf("%d GETs for one session", n)
	}
	tools, err := c.ListTools(testwait.Context(t))
	if err != nil || len(tools) != 3 {
		t.Fatalf("tools: %v, %d", err, len(tools))
	}
	echoText(t, c, "hello")

	progress := make(chan client.Progress, 4)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(testwait.Context(t), "slow", nil, client.WithProgress(func(p client.Progress) { progress <- p }))
		done <- err
	}()
	testwait.Recv(t, x.started, "the slow call to start")
	if p := testwait.Recv(t, progress, "its progress"); p.Progress != 1 || p.Total != 2 || p.Message != "half way" {
		t.Errorf("progress %+v", p)
	}
	x.release <- struct{}{}
	if err := testwait.Recv(t, done, "the slow call to end"); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(testwait.Context(t))
	go func() {
		_, err := c.CallTool(ctx, "slow", nil)
		done <- err
	}()
	testwait.Recv(t, x.started, "the second slow call to start")
	cancel()
	if err := testwait.Recv(t, done, "the cancelled call to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	testwait.Recv(t, x.cancelled, "the server to see notifications/cancelled")
}

func TestSSEFallbackFromStreamableHTTP(t *testing.T) {
	x := newSSEServer(t)
	l := newLegacySSE(t, x.s)
	for _, era := range []mcp.Era{mcp.EraAuto, mcp.EraLegacy} {
		c := connect(t, &client.HTTP{URL: l.url(), SSEFallback: true}, client.WithEra(era))
		if c.Era() != mcp.EraLegacy || !c.OverSSE() {
			t.Errorf("era %v, over SSE %v after the fallback", c.Era(), c.OverSSE())
		}
		echoText(t, c, "fell back")
	}
	// Without the fallback the refusal is the error.
	_, err := client.Connect(testwait.Context(t), &client.HTTP{URL: l.url()}, client.WithEra(mcp.EraLegacy))
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusNotFound {
		t.Errorf("Streamable HTTP only: %v", err)
	}
	// A Streamable HTTP server is not disturbed by the fallback.
	s := server.New(mcp.Implementation{Name: "modern", Version: "1"})
	url := testmcp.ServeHTTP(t, s)
	before := l.gets.Load()
	c := connect(t, &client.HTTP{URL: url, SSEFallback: true})
	if c.Era() != mcp.EraModern || l.gets.Load() != before || c.OverSSE() {
		t.Errorf("era %v (over SSE %v) over Streamable HTTP with the fallback on", c.Era(), c.OverSSE())
	}
}

func TestSSEEndpointEventMissing(t *testing.T) {
	x := newSSEServer(t)
	l := newLegacySSE(t, x.s)
	l.endpoint = func(int) string { return "" }
	_, err := client.Connect(testwait.Context(t), &client.SSE{URL: l.url()}, client.WithLimits(client.Limits{ProbeTimeout: 50 * time.Millisecond}))
	if client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "no endpoint event within 50ms") {
		t.Fatalf("no endpoint event: %s: %v", client.CodeOf(err), err)
	}
	// Through the fallback, the server's refusal of initialize is the error.
	_, err = client.Connect(testwait.Context(t), &client.HTTP{URL: l.url(), SSEFallback: true}, client.WithLimits(client.Limits{ProbeTimeout: 50 * time.Millisecond}))
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusNotFound {
		t.Errorf("fallback without an endpoint event: %v", err)
	}
}

func TestSSEEndpointOnAnotherOriginRefused(t *testing.T) {
	x := newSSEServer(t)
	l := newLegacySSE(t, x.s)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a message went to another origin: %s %s", r.Method, r.URL)
	}))
	defer other.Close()
	for _, ep := range []string{other.URL + "/message", "//" + strings.TrimPrefix(other.URL, "http://") + "/message", "https://" + strings.TrimPrefix(l.srv.URL, "http://") + "/message"} {
		l.endpoint = func(int) string { return ep }
		_, err := client.Connect(testwait.Context(t), &client.SSE{URL: l.url()})
		if client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "not on the stream's origin") {
			t.Errorf("endpoint %s: %v", ep, err)
		}
	}
	// An absolute endpoint on the stream's own origin is taken.
	l.endpoint = func(n int) string { return fmt.Sprintf("%s/message?sessionId=%d", l.srv.URL, n) }
	echoText(t, connect(t, &client.SSE{URL: l.url()}), "same origin")
}

func TestSSEOversizeEventRefused(t *testing.T) {
	x := newSSEServer(t)
	l := newLegacySSE(t, x.s)
	c := connect(t, &client.SSE{URL: l.url()}, client.WithLimits(client.Limits{MaxMessageBytes: 4096}))
	_, err := c.CallTool(testwait.Context(t), "big", map[string]int{"n": 8000})
	if client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "exceeds the 4096-byte limit") {
		t.Fatalf("oversize result: %s: %v", client.CodeOf(err), err)
	}
	// The stream was dropped with the event; the session is replaced.
	echoText(t, c, "after the oversize event")
	if n := l.gets.Load(); n != 2 {
		t.Errorf("%d streams, want 2", n)
	}

	// An oversize event before the endpoint fails the connection.
	l.endpoint = func(int) string { return "" }
	l.after = "data: " + strings.Repeat("y", 5000) + "\n\n"
	_, err = client.Connect(testwait.Context(t), &client.SSE{URL: l.url()}, client.WithLimits(client.Limits{MaxMessageBytes: 4096}))
	if !strings.Contains(fmt.Sprint(err), "exceeds the 4096-byte limit") {
		t.Errorf("oversize first event: %v", err)
	}
}

func TestSSEStreamDropThenReconnect(t *testing.T) {
	x := newSSEServer(t)
	l := newLegacySSE(t, x.s)
	c := connect(t, &client.SSE{URL: l.url()})
	echoText(t, c, "before")
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(testwait.Context(t), "slow", nil)
		done <- err
	}()
	testwait.Recv(t, x.started, "the slow call to start")
	l.drop()
	err := testwait.Recv(t, done, "the call on the dropped stream to fail")
	if client.CodeOf(err) != client.CodeTransport || !strings.Contains(err.Error(), "event stream ended") {
		t.Fatalf("call on the dropped stream: %s: %v", client.CodeOf(err), err)
	}
	// The client opens a new stream and initializes again by itself.
	testwait.WaitFor(t, "a new session", func() bool { return l.inits.Load() == 2 })
	echoText(t, c, "after")
	if n := x.slowRuns.Load(); n != 1 {
		t.Errorf("the slow tool ran %d times: a call was sent again", n)
	}
	if n := l.gets.Load(); n != 2 {
		t.Errorf("%d streams, want 2", n)
	}
	select {
	case <-c.Done():
		t.Errorf("Done closed by a lost stream: %v", c.Err())
	default:
	}
}

// startEverythingSSE starts server-everything in its sse mode (the
// 2024-11-05 HTTP+SSE transport: GET /sse, POST /message) on a free port
// of 127.0.0.1 and returns its stream URL.
func startEverythingSSE(t *testing.T) string {
	t.Helper()
	return "http://" + testenv.EverythingHTTP(t, "sse") + "/sse"
}

func TestInteropServerEverythingSSE(t *testing.T) {
	url := startEverythingSSE(t)
	for name, tr := range map[string]client.Transport{
		"sse":      &client.SSE{URL: url},
		"fallback": &client.HTTP{URL: url, SSEFallback: true},
	} {
		t.Run(name, func(t *testing.T) {
			c := connect(t, tr)
			if c.Era() != mcp.EraLegacy {
				t.Errorf("era %v", c.Era())
			}
			tools, err := c.ListTools(testwait.Context(t))
			if err != nil || len(tools) < 5 {
				t.Fatalf("tools: %v (%d)", err, len(tools))
			}
			echoText(t, c, "over sse")
			var reports atomic.Int32
			res, err := c.CallTool(testwait.Context(t), "trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 2},
				client.WithProgress(func(client.Progress) { reports.Add(1) }))
			if err != nil || res.IsError {
				t.Fatalf("long-running operation: %v %+v", err, res)
			}
			if n := reports.Load(); n != 2 {
				t.Errorf("%d progress reports, want 2", n)
			}
		})
	}
}
