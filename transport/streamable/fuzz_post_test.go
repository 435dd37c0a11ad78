package streamable

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// FuzzHTTPPost drives the POST handler with a fuzzed body and fuzzed values
// of the headers it reads: Content-Type, Accept, Mcp-Session-Id,
// MCP-Protocol-Version, Mcp-Method, Mcp-Name, Origin and Host. A header
// value "" leaves the header out; a value with newlines sends one header
// line per part (a repeated header); the session "@live" names a session
// opened for the input, and "@live" followed by more names a wrong one.
// Each input gets a handler of its own (body limit fuzzBodyLimit, so that
// 413 is in reach), and the reply must keep the handler's documented
// contract (see ServeHTTP):
//
//   - no panic, and no hang: the handler returns, at the latest once its
//     request is cancelled;
//   - the status is one of postStatuses;
//   - 202 has no body; any status of 300 or more has an application/json
//     JSON-RPC error response with a message;
//   - 200 is application/json or text/event-stream, and the body (each
//     event's data) decodes strictly as JSON-RPC; the reply to a request
//     carries a response with the request's id;
//   - an error response carries the request's id when the body had a
//     readable one: the id jsonrpc.Decode returns with its error for an
//     invalid message, the request's for a valid request, and null for a
//     valid notification or response (whose id names a request of the
//     server's, not one of the client's); the refusals decided from the
//     headers before the body is read (403, 406, 413, 415) carry null;
//
// and afterwards the handler still answers a normal call in each era.
func FuzzHTTPPost(f *testing.F) {
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte, contentType, accept, session, version, method, name, origin, host string) {
		h := NewHandler(srv, WithLimits(Limits{MaxBodyBytes: fuzzBodyLimit}))
		defer h.Close()
		live := fuzzInitialize(t, h)

		r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host = headerValue(host); host != "" {
			r.Host = host
		}
		if strings.HasPrefix(session, "@live") {
			session = live + session[len("@live"):]
		}
		for _, hv := range [...]struct{ name, value string }{
			{"Content-Type", contentType}, {"Accept", accept}, {HeaderSessionID, session},
			{HeaderProtocolVersion, version}, {HeaderMethod, method}, {HeaderName, name}, {"Origin", origin},
		} {
			for v := range strings.SplitSeq(hv.value, "\n") {
				if v = headerValue(v); v != "" {
					r.Header.Add(hv.name, v)
				}
			}
		}
		w, cancelled := serveFuzz(t, h, r)
		if !cancelled {
			checkPostReply(t, body, w)
		}

		// The handler still serves normal calls, in both eras.
		echo := map[string]any{"name": "echo", "arguments": map[string]any{"message": "ok"}}
		if w := serveDirect(t, h, modernRequest(t, "http://127.0.0.1/mcp", "after", "tools/call", echo)); w.status != http.StatusOK || !strings.Contains(w.body.String(), "Echo: ok") {
			t.Fatalf("a 2026-era call afterwards: status %d: %s", w.status, w.body.String())
		}
		legacy := legacyRequest(t, "http://127.0.0.1/mcp", live, `{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"echo","arguments":{"message":"ok"}}}`)
		if w := serveDirect(t, h, legacy); w.status != http.StatusOK || !strings.Contains(w.body.String(), "Echo: ok") {
			t.Fatalf("a 2025-era call afterwards: status %d: %s", w.status, w.body.String())
		}
	})
}

// fuzzBodyLimit is the body limit of the fuzzed handler: small enough for
// inputs to pass it.
const fuzzBodyLimit = 2048

// postStatuses are the statuses ServeHTTP documents for a POST.
var postStatuses = []int{
	http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound,
	http.StatusNotAcceptable, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
	http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable,
}

// fuzzServer is a server with tools that answer at once: a fuzzed request
// must not wait on anything but itself.
func fuzzServer(f *testing.F) *server.Server {
	srv := server.New(mcp.Implementation{Name: "streamable-fuzz", Version: "1.0.0"})
	testtools.AddEcho(f, srv, "Echo: ")
	type none struct{}
	if err := server.AddTool(srv, &mcp.Tool{Name: "progress", Description: "reports progress 1..2"},
		func(ctx context.Context, req *server.CallRequest, in none) (string, error) {
			for i := 1; i <= 2; i++ {
				if err := req.Progress(ctx, float64(i), 2, "step"); err != nil {
					return "", err
				}
			}
			return "done", nil
		}); err != nil {
		f.Fatal(err)
	}
	return srv
}

// fuzzInitialize opens a 2025-11-25 session on h and returns its id.
func fuzzInitialize(t *testing.T, h *Handler) string {
	t.Helper()
	w := serveDirect(t, h, legacyRequest(t, "http://127.0.0.1/mcp", "", initializeBody))
	sid := w.header.Get(HeaderSessionID)
	if w.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d: %s", w.status, w.body.String())
	}
	if w := serveDirect(t, h, legacyRequest(t, "http://127.0.0.1/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)); w.status != http.StatusAccepted {
		t.Fatalf("initialized: status %d", w.status)
	}
	return sid
}

// headerValue is v as net/http would hand it to a handler: trimmed of
// spaces and tabs, with the control characters it refuses on the wire
// taken out.
func headerValue(v string) string {
	v = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, v)
	return strings.Trim(v, " \t")
}

// fuzzWriter records a reply; the handler may write from another goroutine
// than the one serving the request.
type fuzzWriter struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   bytes.Buffer
}

func newFuzzWriter() *fuzzWriter { return &fuzzWriter{header: http.Header{}} }

func (w *fuzzWriter) Header() http.Header { return w.header }

func (w *fuzzWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = status
	}
}

func (w *fuzzWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

func (w *fuzzWriter) Flush() {}

// stuckAfter is how long a fuzzed request may run before it is cancelled:
// far longer than any call of fuzzServer takes, shorter than a stream that
// only ends when its client leaves (subscriptions/listen).
const stuckAfter = 2 * time.Second

// serveFuzz serves r, cancelling it if it runs past stuckAfter; cancelled
// reports that it did, in which case the reply is whatever was written
// before (and is not checked). A handler that does not return once its
// request is cancelled fails the test.
func serveFuzz(t *testing.T, h *Handler, r *http.Request) (w *fuzzWriter, cancelled bool) {
	t.Helper()
	return serveWithin(t, h, r, stuckAfter)
}

// serveWithin serves r, cancelling it if it runs past d.
func serveWithin(t *testing.T, h *Handler, r *http.Request, d time.Duration) (w *fuzzWriter, cancelled bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w = newFuzzWriter()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, r.WithContext(ctx))
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		return w, false
	case <-timer.C:
	}
	cancel()
	testwait.Closed(t, done, "the handler to return after its request was cancelled")
	return w, true
}

// serveDirect serves a request that must be answered: one that is not
// after testwait.Limit has hung.
func serveDirect(t *testing.T, h *Handler, r *http.Request) *fuzzWriter {
	t.Helper()
	w, cancelled := serveWithin(t, h, r, testwait.Limit)
	if cancelled {
		t.Fatalf("%s %s: the handler did not answer", r.Method, r.Header.Get(HeaderMethod))
	}
	return w
}

// checkPostReply checks the reply to a POST of body against the handler's
// contract.
func checkPostReply(t *testing.T, body []byte, w *fuzzWriter) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	status := w.status
	if status == 0 {
		status = http.StatusOK // what net/http sends for a handler that wrote nothing
	}
	reply := w.body.Bytes()
	ct := w.header.Get("Content-Type")
	if !slices.Contains(postStatuses, status) {
		t.Fatalf("status %d is not among those documented for a POST: %s", status, reply)
	}
	msg, decodedID, derr := jsonrpc.Decode(body)
	req, isReq := msg.(*jsonrpc.Request)
	var wantID jsonrpc.ID // what an error response must carry; the zero ID is null
	switch {
	case derr != nil:
		wantID = decodedID
	case isReq:
		wantID = req.ID
	}
	// Refusals decided from the headers come before the body is read.
	if status == http.StatusForbidden || status == http.StatusNotAcceptable ||
		status == http.StatusRequestEntityTooLarge || status == http.StatusUnsupportedMediaType {
		wantID = jsonrpc.ID{}
	}

	// checkResponse checks one response of the reply.
	checkResponse := func(resp *jsonrpc.Response) {
		if resp.Error != nil && resp.Error.Message == "" {
			t.Fatalf("status %d: error without a message: %s", status, reply)
		}
		if resp.Error != nil && resp.ID != wantID {
			t.Fatalf("status %d: error response with id %v, want %v: %s", status, resp.ID.Value(), wantID.Value(), reply)
		}
	}
	switch {
	case status == http.StatusAccepted:
		if len(reply) != 0 {
			t.Fatalf("202 with a body: %q", reply)
		}
	case status >= 300:
		if ct != "application/json" {
			t.Fatalf("status %d with Content-Type %q: %q", status, ct, reply)
		}
		m, _, err := jsonrpc.Decode(reply)
		resp, ok := m.(*jsonrpc.Response)
		if err != nil || !ok || resp.Error == nil {
			t.Fatalf("status %d without a JSON-RPC error response (%v): %q", status, err, reply)
		}
		checkResponse(resp)
	case ct == "application/json":
		m, _, err := jsonrpc.Decode(reply)
		resp, ok := m.(*jsonrpc.Response)
		if err != nil || !ok {
			t.Fatalf("200 whose body is not a JSON-RPC response (%v): %q", err, reply)
		}
		checkResponse(resp)
		if isReq && resp.ID != req.ID {
			t.Fatalf("200 answering request %v with id %v: %q", req.ID, resp.ID, reply)
		}
	case ct == "text/event-stream":
		var last *jsonrpc.Response
		sr := newSSEReader(bytes.NewReader(reply))
		for e, ok := sr.Next(); ok; e, ok = sr.Next() {
			if e.Data == "" {
				continue // a priming event
			}
			m, _, err := jsonrpc.Decode([]byte(e.Data))
			if err != nil {
				t.Fatalf("SSE event that is not JSON-RPC (%v): %q", err, e.Data)
			}
			if resp, ok := m.(*jsonrpc.Response); ok {
				checkResponse(resp)
				last = resp
			}
		}
		if isReq && (last == nil || last.ID != req.ID) {
			t.Fatalf("SSE reply to request %v without its response: %q", req.ID, reply)
		}
	default:
		t.Fatalf("200 with Content-Type %q: %q", ct, reply)
	}
}
