package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
)

// sessionRejections are the two answers that mean "no such session": the
// transport's 404 (here with the body Go's mux gives, not JSON-RPC) and the
// 400 with -32000 of servers built on the TypeScript SDK's Express example.
var sessionRejections = []struct {
	name   string
	status int
	write  func(w http.ResponseWriter)
}{
	{"404", http.StatusNotFound, func(w http.ResponseWriter) { http.NotFound(w, nil) }},
	{"404 with a JSON-RPC body", http.StatusNotFound, func(w http.ResponseWriter) {
		writeJSON(w, 404, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)
	}},
	{"400 -32000", http.StatusBadRequest, func(w http.ResponseWriter) {
		writeJSON(w, 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
	}},
}

// rejectAfterSession makes f answer every request with reject once armed:
// all of them (initialize included) when everything is set, else only
// those carrying a session id (initialize then starts a new session each
// time, which the next request finds rejected).
func rejectAfterSession(f *fake, reject func(http.ResponseWriter), everything bool) *atomic.Bool {
	var armed atomic.Bool
	f.route = func(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message) bool {
		if !armed.Load() || (!everything && r.Header.Get("Mcp-Session-Id") == "") {
			return false
		}
		reject(w)
		return true
	}
	return &armed
}

// count tallies the requests f saw after the first n, by "METHOD rpc".
func count(f *fake, n int) map[string]int {
	out := map[string]int{}
	for _, s := range f.requests()[n:] {
		out[strings.TrimSpace(s.Method+" "+s.RPC)]++
	}
	return out
}

// A server that rejects the session for ever, once one was established,
// gets one re-initialization per call and a bounded number of requests,
// and every call fails with CodeSessionInvalid naming the status: whether
// it then refuses the re-initialization too ("everything") or starts a new
// session that it rejects in turn. A later call on the same client tries
// once more (the server may have come back) and fails the same way.
func TestHTTPSessionRejectedForever(t *testing.T) {
	for _, rej := range sessionRejections {
		for _, everything := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/everything=%v", rej.name, everything), func(t *testing.T) {
				f := newFake(t)
				armed := rejectAfterSession(f, rej.write, everything)
				c, err := client.Connect(context.Background(), f.transport(), legacy())
				if err != nil {
					t.Fatal(err)
				}
				before := len(f.requests())
				armed.Store(true)
				for call := 1; call <= 3; call++ {
					start := len(f.requests())
					_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
					var se *client.SessionInvalidError
					if !errors.As(err, &se) || client.CodeOf(err) != client.CodeSessionInvalid || se.StatusCode != rej.status {
						t.Fatalf("call %d: err = %v (code %s), want CodeSessionInvalid with HTTP %d", call, err, client.CodeOf(err), rej.status)
					}
					got := count(f, start)
					// everything: the first call sends itself and the
					// re-initialization; later ones, without a session,
					// re-initialize first and send nothing more. Else every
					// call is sent, re-initializes (initialize,
					// notifications/initialized, the standalone GET) and is
					// sent again.
					want := map[string]int{"POST initialize": 1}
					if call == 1 || !everything {
						want["POST tools/call"] = 1
					}
					if !everything {
						want["POST tools/call"] = 2
						want["POST notifications/initialized"] = 1
						want["GET"] = 1
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("call %d: the server saw %v, want %v", call, got, want)
					}
					if !everything && se.SessionID != fmt.Sprintf("session-%d", call+1) {
						t.Errorf("call %d: rejected session %q, want the one the re-initialization started", call, se.SessionID)
					}
					if everything && se.SessionID != "session-1" {
						t.Errorf("call %d: rejected session %q, want session-1, the one lost", call, se.SessionID)
					}
				}
				c.Close()
				total := len(f.requests()) - before
				want := 2 + 1 + 1 // everything: and no DELETE without a session
				if !everything {
					want = 3*5 + 1 // five per call, and the DELETE of the last session
				}
				if total != want {
					t.Errorf("the server saw %d requests after the session was established, want %d", total, want)
				}
				t.Logf("requests after the session was established, 3 calls and Close: %d (%v)", total, count(f, before))
			})
		}
	}
}

// A server that was down while the client re-initialized (the
// re-initialization failed with a transport error) and then came back is
// re-initialized by the next call, which succeeds: the client is not left
// without a session for good.
func TestHTTPSessionRestoredAfterFailedReinitialize(t *testing.T) {
	f := newFake(t)
	var phase atomic.Int32 // 0: normal, 1: the session is lost and initialize fails with 503, 2: back
	f.route = func(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message) bool {
		req, _ := msg.(*jsonrpc.Request)
		switch {
		case phase.Load() != 1:
			return false
		case req != nil && req.Method == "initialize":
			http.Error(w, "restarting", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
		return true
	}
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method != "tools/call" {
			return false
		}
		writeResult(w, req.ID, textResult("ok from "+r.Header.Get("Mcp-Session-Id")))
		return true
	}
	c := connect(t, f.transport(), legacy())
	phase.Store(1)
	_, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusServiceUnavailable || client.CodeOf(err) != client.CodeTransport {
		t.Fatalf("while the server restarts: err = %v, want the transport error of the re-initialization (HTTP 503)", err)
	}
	phase.Store(2)
	start := len(f.requests())
	res, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	if err != nil {
		t.Fatalf("after the server came back: %v", err)
	}
	if got := textOf(res); got != "ok from session-2" {
		t.Errorf("result %q, want the call sent on the new session", got)
	}
	if got := count(f, start); got["POST initialize"] != 1 || got["POST tools/call"] != 1 {
		t.Errorf("after the server came back the call made %v, want one initialize and one tools/call", got)
	}
}
