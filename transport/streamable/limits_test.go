package streamable

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

// TestMaxInFlightPerSession: one 2025-era session that opens more slow calls
// than its limit, dropping each connection at once, gets 429 with
// Retry-After for the call past the limit, while a second session is still
// served.
func TestMaxInFlightPerSession(t *testing.T) {
	f := newFixture(t)
	const perSession = 2
	_, ts := testServer(t, f, WithLimits(Limits{MaxInFlight: perSession + 1, MaxInFlightPerSession: perSession}))
	a, b := initialize(t, ts.URL), initialize(t, ts.URL)
	defer close(f.release)

	type reply struct {
		status int
		retry  string
		body   string
	}
	for i := 1; i <= perSession+1; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		r := legacyRequest(t, ts.URL, a, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"gate"}}`, i+1)).WithContext(ctx)
		replies := make(chan reply, 1)
		go func() {
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				replies <- reply{}
				return
			}
			defer resp.Body.Close()
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			replies <- reply{resp.StatusCode, resp.Header.Get("Retry-After"), string(buf[:n])}
		}()
		select {
		case <-f.started:
			cancel() // the client drops the connection; the call goes on
			if i > perSession {
				t.Fatalf("call %d was served past the per-session limit of %d", i, perSession)
			}
		case rep := <-replies:
			cancel()
			if i <= perSession {
				t.Fatalf("call %d: status %d: %s", i, rep.status, rep.body)
			}
			if rep.status != http.StatusTooManyRequests || rep.retry == "" || !strings.Contains(rep.body, "per-session limit of 2") {
				t.Fatalf("call past the limit: status %d, Retry-After %q: %s", rep.status, rep.retry, rep.body)
			}
			decodeReply(t, rep.body)
		case <-time.After(testwait.Limit): // a hang bound, not a speed check
			t.Fatalf("call %d: neither started nor answered", i)
		}
	}
	resp := do(t, legacyRequest(t, ts.URL, b, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`))
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Echo: hi") {
		t.Fatalf("second session: status %d: %s", resp.StatusCode, body)
	}
}

// TestCancelledCallAnswersPOST: a 2025-era call cancelled with
// notifications/cancelled gets no JSON-RPC response (the spec says none is
// sent), but its POST is still answered with a media type a client can
// read: an SSE stream that ends with no message and no event id.
func TestCancelledCallAnswersPOST(t *testing.T) {
	f, _, ts, sid := openSession(t)
	replies := doAsync(legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`))
	testwait.Recv(t, f.started, "the call")
	resp := do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	if readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: status %d", resp.StatusCode)
	}
	resp = testwait.Recv(t, replies, "the call's reply")
	if resp == nil {
		t.Fatal("the call's POST failed")
	}
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("cancelled call: status %d, Content-Type %q: %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	sr := newSSEReader(strings.NewReader(body))
	for e, ok := sr.Next(); ok; e, ok = sr.Next() {
		if e.Data != "" || e.ID != "" {
			t.Fatalf("cancelled call's stream carries an event: %+v", e)
		}
	}
}

// TestDeleteDuringCallAnswersPOST: a call whose session is deleted while it
// runs gets a JSON-RPC error response with its id, as application/json, not
// an empty 200.
func TestDeleteDuringCallAnswersPOST(t *testing.T) {
	f, _, ts, sid := openSession(t)
	replies := doAsync(legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"gate"}}`))
	testwait.Recv(t, f.started, "the call")
	del, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	del.Header.Set("Mcp-Session-Id", sid)
	if resp := do(t, del); readAll(t, resp) != "" || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: status %d", resp.StatusCode)
	}
	resp := testwait.Recv(t, replies, "the call's reply")
	if resp == nil {
		t.Fatal("the call's POST failed")
	}
	body := readAll(t, resp)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("call of a deleted session: status %d, Content-Type %q: %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	rep := decodeReply(t, body)
	if rep.ID != "c1" || rep.Error == nil || !strings.Contains(rep.Error.Message, "session ended") {
		t.Fatalf("call of a deleted session: status %d: %s", resp.StatusCode, body)
	}
}

// TestErrorsNameNoGoTypes: malformed params are reported in protocol terms,
// never with Go type names from the JSON decoder.
func TestErrorsNameNoGoTypes(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f)
	for _, meta := range []any{[]any{1}, "x", 3} {
		resp := do(t, modernRequest(t, ts.URL, 1, "tools/list", map[string]any{"_meta": meta}))
		body := readAll(t, resp)
		if strings.Contains(body, "Go ") || strings.Contains(body, "json.RawMessage") || strings.Contains(body, "map[") {
			t.Fatalf("_meta %v: error names Go types: %s", meta, body)
		}
		if rep := decodeReply(t, body); rep.Error == nil {
			t.Fatalf("_meta %v: no error: %s", meta, body)
		}
	}
}

// postHead is the head of a raw HTTP/1.1 POST to host's root with a
// Content-Length of length, for tests that write (or withhold) the body
// themselves on a connection of their own.
func postHead(host any, length int) string {
	return fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", host, length)
}

// TestDeclaredBodyOverLimitRefusedAtOnce: a POST whose Content-Length
// exceeds the body limit is refused with 413 before any of it is read, not
// after waiting out the read timeout for a body that never comes.
func TestDeclaredBodyOverLimitRefusedAtOnce(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f, WithLimits(Limits{MaxBodyBytes: 1 << 10, ReadTimeout: time.Hour}))
	nc, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(testwait.Limit)) // fails the test instead of hanging
	fmt.Fprint(nc, postHead(ts.Listener.Addr(), 1<<30))
	resp, body := readReply(t, nc, "a 1 GiB Content-Length with no body")
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "limit of 1024 bytes") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	decodeReply(t, body)
}
