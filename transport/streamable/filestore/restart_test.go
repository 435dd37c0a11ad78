package filestore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

const (
	initBody   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	readyBody  = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	echoBody   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
	logBody    = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log-error","arguments":{}}}`
	levelBody  = `{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"critical"}}`
	echoResult = "Echo: hi"
)

// endpoint serves an echo tool and a tool logging at error behind a
// Streamable HTTP handler on loopback, with opts.
func endpoint(tb testing.TB, opts ...streamable.HandlerOption) (url string, stop func()) {
	tb.Helper()
	s := server.New(mcp.Implementation{Name: "restart", Version: "1"})
	testtools.AddEcho(tb, s, "Echo: ")
	if err := server.AddTool(s, &mcp.Tool{Name: "log-error", Description: "logs at error"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		return "logged", req.Log(ctx, mcp.LevelError, "test", "something failed")
	}); err != nil {
		tb.Fatal(err)
	}
	h := streamable.NewHandler(s, append(opts, streamable.WithLimits(streamable.Limits{MaxSessions: 1 << 20}))...)
	ts := httptest.NewServer(h)
	var once bool
	stop = func() {
		if !once {
			once = true
			h.Close()
			ts.Close()
		}
	}
	tb.Cleanup(stop)
	return ts.URL, stop
}

// post sends one 2025-era message on session sid ("" for none) and
// returns the status, the body and the session id answered.
func post(tb testing.TB, hc *http.Client, url, sid, body string) (int, string, string) {
	tb.Helper()
	resp, b := testhttp.Do(tb, hc, testhttp.MCPPost(tb, url, sid, body))
	return resp.StatusCode, b, resp.Header.Get(streamable.HeaderSessionID)
}

var eventIDRE = regexp.MustCompile(`(?m)^id: ?(\S+)$`)

// get sends a GET for sid's stream, resuming after lastID if set; the
// response's body is closed when the test ends.
func get(t *testing.T, hc *http.Client, url, sid, lastID string) *http.Response {
	t.Helper()
	resp := testhttp.OpenMCPGet(t, hc, url, sid, lastID)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestSessionSurvivesRestart: a session opened on one handler and store
// is served, on its id and with the state its client set (its log level),
// by a new server, handler and stores on the same file, as after a process
// restart, with no second initialize; its GET stream resumes from an
// event id of before the restart; once deleted it stays gone through the
// next restart.
func TestSessionSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.log")
	hc := &http.Client{}
	start := func() (string, func()) {
		st, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		url, stop := endpoint(t, streamable.WithSessionStore(st), streamable.WithEventStore(NewEventStore(streamable.NewMemoryEventStore())))
		return url, func() {
			stop()
			if err := st.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	url, stop := start()
	status, _, sid := post(t, hc, url, "", initBody)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", status, sid)
	}
	if status, b, _ := post(t, hc, url, sid, readyBody); status/100 != 2 {
		t.Fatalf("notifications/initialized: %d %s", status, b)
	}
	// An event id of the GET stream, and one of a POST stream (a call
	// that logs, at the default level, answers on SSE).
	getID := testhttp.FirstEventID(t, hc, url, sid)
	status, b, _ := post(t, hc, url, sid, logBody)
	postID := eventIDRE.FindStringSubmatch(b)
	if status != http.StatusOK || !strings.Contains(b, "notifications/message") || postID == nil {
		t.Fatalf("a call that logs: %d %s", status, b)
	}
	if status, b, _ := post(t, hc, url, sid, levelBody); status != http.StatusOK {
		t.Fatalf("logging/setLevel: %d %s", status, b)
	}
	if status, b, _ := post(t, hc, url, sid, echoBody); status != http.StatusOK || !strings.Contains(b, echoResult) {
		t.Fatalf("a call before the restart: %d %s", status, b)
	}
	stop()

	url, stop = start()
	if status, b, _ := post(t, hc, url, sid, echoBody); status != http.StatusOK || !strings.Contains(b, echoResult) {
		t.Fatalf("a call on the old session after the restart: %d %s", status, b)
	}
	if status, b, _ := post(t, hc, url, sid, logBody); status != http.StatusOK || !strings.Contains(b, "logged") ||
		strings.Contains(b, "notifications/message") {
		t.Errorf("the client's log level (critical) was not kept: an error was logged to it: %d %s", status, b)
	}
	// The GET stream resumes from its id of before the restart, with
	// nothing to replay; the POST stream, whose request ended with the
	// process, does not.
	if resp := get(t, hc, url, sid, getID); resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("resuming the GET stream after the restart: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp := get(t, hc, url, sid, postID[1]); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("resuming a POST stream of before the restart: %d, want 400", resp.StatusCode)
	}
	r, _ := http.NewRequest(http.MethodDelete, url, nil)
	r.Header.Set(streamable.HeaderSessionID, sid)
	r.Header.Set(streamable.HeaderProtocolVersion, "2025-11-25")
	resp, err := hc.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	stop()

	url, stop = start()
	defer stop()
	if status, b, _ := post(t, hc, url, sid, echoBody); status != http.StatusNotFound {
		t.Errorf("a call on a deleted session after a restart: %d %s, want 404", status, b)
	}
}
