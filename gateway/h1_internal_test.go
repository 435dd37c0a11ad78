package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// h1Server is an httptest server that counts the connections it accepts.
type h1Server struct {
	*httptest.Server
	conns atomic.Int64
}

func newH1Server(t *testing.T, h http.Handler, tlsOn bool) *h1Server {
	t.Helper()
	s := &h1Server{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if tlsOn {
		s.StartTLS()
	} else {
		s.Start()
	}
	return s
}

// h1Leaks checks, at the end of the test, that every goroutine started
// since it was called has ended (servers closed and pools emptied first,
// by the cleanups registered after it).
func h1Leaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

func newTestH1(t *testing.T, maxIdle int) *h1Transport {
	tr := newH1Transport(maxIdle)
	tr.proxy = func(*http.Request) (*url.URL, error) { return nil, nil } // whatever the environment says
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// h1Do sends a request through tr and reads its whole body.
func h1Do(t *testing.T, tr http.RoundTripper, method, u string, body []byte) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the body of %s %s: %v", method, u, err)
	}
	return resp, string(b)
}

// TestH1ReusesConnections: sequential exchanges share one connection,
// whether the response has a Content-Length or is chunked, a request body
// or none; concurrent ones use at most one connection each.
func TestH1ReusesConnections(t *testing.T) {
	h1Leaks(t)
	srv := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, _ := io.ReadAll(r.Body)
		out := "echo:" + string(in)
		if r.URL.Query().Get("chunked") != "" {
			io.WriteString(w, out[:3])
			w.(http.Flusher).Flush() // headers sent without a length: chunked
			io.WriteString(w, out[3:])
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		io.WriteString(w, out)
	}), false)
	t.Cleanup(srv.Close)
	tr := newTestH1(t, 4)
	for i := range 10 {
		q := ""
		if i%2 == 1 {
			q = "?chunked=1"
		}
		resp, got := h1Do(t, tr, http.MethodPost, srv.URL+q, []byte("m"+strconv.Itoa(i)))
		if want := "echo:m" + strconv.Itoa(i); got != want {
			t.Fatalf("exchange %d: body %q, want %q", i, got, want)
		}
		if chunked := len(resp.TransferEncoding) > 0; chunked != (i%2 == 1) {
			t.Fatalf("exchange %d: Transfer-Encoding %v", i, resp.TransferEncoding)
		}
	}
	h1Do(t, tr, http.MethodGet, srv.URL, nil)
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("11 sequential exchanges used %d connections, want 1", n)
	}

	// Concurrent rounds: at most as many connections as callers.
	const callers, rounds = 8, 5
	tr2 := newTestH1(t, callers)
	before := srv.conns.Load()
	var wg sync.WaitGroup
	errs := make(chan error, callers*rounds)
	for c := range callers {
		wg.Go(func() {
			for r := range rounds {
				msg := fmt.Sprintf("c%dr%d", c, r)
				req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(msg))
				resp, err := tr2.RoundTrip(req)
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil && string(b) != "echo:"+msg {
					err = fmt.Errorf("body %q, want %q", b, "echo:"+msg)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := srv.conns.Load() - before; n > callers {
		t.Fatalf("%d rounds of %d concurrent exchanges used %d connections, want at most %d", rounds, callers, n, callers)
	}
}

// TestH1PoolBound: no more than maxIdle connections are kept; the others
// are closed once their exchanges end.
func TestH1PoolBound(t *testing.T) {
	h1Leaks(t)
	var inside sync.WaitGroup
	release := make(chan struct{})
	srv := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside.Done()
		<-release
		io.WriteString(w, "ok")
	}), false)
	t.Cleanup(srv.Close)
	tr := newTestH1(t, 2)
	const n = 5
	inside.Add(n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { h1Do(t, tr, http.MethodGet, srv.URL, nil) })
	}
	inside.Wait()
	close(release)
	wg.Wait()
	k, _ := h1Origin(httptest.NewRequest(http.MethodGet, srv.URL, nil))
	tr.mu.Lock()
	idle := len(tr.pools[k].idle)
	tr.mu.Unlock()
	if idle != 2 {
		t.Fatalf("%d idle connections kept, want 2", idle)
	}
}

// TestH1ConnectionClose: a response or a request saying Connection: close
// leaves its connection closed, not pooled.
func TestH1ConnectionClose(t *testing.T) {
	h1Leaks(t)
	srv := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("close") != "" {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "ok")
	}), false)
	t.Cleanup(srv.Close)
	tr := newTestH1(t, 4)
	k, _ := h1Origin(httptest.NewRequest(http.MethodGet, srv.URL, nil))
	pooled := func() int {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if p := tr.pools[k]; p != nil {
			return len(p.idle)
		}
		return 0
	}
	for range 3 {
		if resp, _ := h1Do(t, tr, http.MethodGet, srv.URL+"?close=1", nil); !resp.Close {
			t.Fatal("response Close is false; want the server's Connection: close")
		}
		if n := pooled(); n != 0 {
			t.Fatalf("%d connections pooled after a response saying Connection: close", n)
		}
	}
	if n := srv.conns.Load(); n != 3 {
		t.Fatalf("3 exchanges answered Connection: close used %d connections, want 3", n)
	}
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Close = true
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		if n := pooled(); n != 0 {
			t.Fatalf("%d connections pooled after a request saying Connection: close", n)
		}
	}
	if n := srv.conns.Load(); n != 6 {
		t.Fatalf("3 more exchanges asking Connection: close: %d connections in all, want 6", n)
	}
}

// TestH1PartialBodyNotReused: a body closed before its end closes its
// connection (the rest is not read, and would corrupt the next exchange).
func TestH1PartialBodyNotReused(t *testing.T) {
	h1Leaks(t)
	big := strings.Repeat("x", 64<<10)
	srv := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, big)
	}), false)
	t.Cleanup(srv.Close)
	tr := newTestH1(t, 4)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Fatal("a read after Close succeeded")
	}
	if _, got := h1Do(t, tr, http.MethodGet, srv.URL, nil); got != big {
		t.Fatalf("second exchange: %d bytes, want %d", len(got), len(big))
	}
	if n := srv.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the partly read one closed)", n)
	}
	// Read to the end and closed: reused.
	h1Do(t, tr, http.MethodGet, srv.URL, nil)
	if n := srv.conns.Load(); n != 2 {
		t.Fatalf("%d connections after a fully read exchange, want still 2", n)
	}
}

// TestH1CancelUnblocks: cancelling the request's context unblocks a wait
// for the response head and, after RoundTrip has returned, a body read
// (an SSE stream), with the context's error; the connection is not
// reused.
func TestH1CancelUnblocks(t *testing.T) {
	h1Leaks(t)
	stuck := make(chan struct{})
	srv := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("head") != "" {
			select {
			case <-stuck:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}), false)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stuck) })
	tr := newTestH1(t, 4)

	// A body read, long after RoundTrip returned.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "data: first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := br.ReadString('x') // blocks: the server sends nothing more
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("body read after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // a bound for a hang, not a speed
		t.Fatal("a body read was not unblocked by the cancellation")
	}
	resp.Body.Close()

	// A wait for the response head.
	ctx, cancel = context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"?head=1", nil)
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip cancelled while waiting: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("RoundTrip returned %v after the cancellation", d)
	}
	tr.mu.Lock()
	for _, p := range tr.pools {
		if len(p.idle) != 0 {
			t.Errorf("%d connections pooled after cancelled exchanges, want 0", len(p.idle))
		}
	}
	tr.mu.Unlock()
}

// rawServer accepts connections and hands each to serve; it counts them.
type rawServer struct {
	ln    net.Listener
	conns atomic.Int64
	wg    sync.WaitGroup
}

func newRawServer(t *testing.T, serve func(n int64, c net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := s.conns.Add(1)
			s.wg.Go(func() {
				defer c.Close()
				serve(n, c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/" }

// readRequest reads one request and its body from br.
func readRequest(br *bufio.Reader) (string, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(req.Body)
	return string(b), err
}

// readCounts counts, by X-Id, the requests a raw server read whole.
type readCounts struct{ m sync.Map } // X-Id: *atomic.Int64

// read reads one request and its body from br and counts it; false when
// the connection ended first.
func (rc *readCounts) read(br *bufio.Reader) (*http.Request, bool) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, false
	}
	if _, err := io.Copy(io.Discard, req.Body); err != nil {
		return nil, false
	}
	v, _ := rc.m.LoadOrStore(req.Header.Get("X-Id"), new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	return req, true
}

// serve is a raw server's connection handler that reads requests (read)
// and answers each "ok", unless lost says to lose it: then it closes the
// connection, after part of a response head when the request says
// X-Then: half.
func (rc *readCounts) serve(lost func(*http.Request) bool) func(int64, net.Conn) {
	return func(_ int64, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, ok := rc.read(br)
			if !ok {
				return
			}
			if lost(req) {
				if req.Header.Get("X-Then") == "half" {
					io.WriteString(c, "HTTP/1.1 200 O")
				}
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	}
}

// times is how often the request id was read whole.
func (rc *readCounts) times(id string) int64 {
	v, ok := rc.m.Load(id)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// TestH1WrittenRequestNotReplayed: a request written whole is never sent
// again, whatever follows: a reused connection closed without a byte of
// the response (the server may have run the request and died) or after
// part of its head, or a new connection closed without a byte. The error
// says the request was sent and not sent again.
func TestH1WrittenRequestNotReplayed(t *testing.T) {
	h1Leaks(t)
	var seen readCounts
	srv := newRawServer(t, seen.serve(func(req *http.Request) bool {
		// read and acted on, then gone without a byte or after half a head
		then := req.Header.Get("X-Then")
		return then == "close" || then == "half"
	}))
	tr := newTestH1(t, 4)
	send := func(id, then string) error {
		req, _ := http.NewRequest(http.MethodPost, srv.url(), strings.NewReader("call "+id))
		req.Header.Set("X-Id", id)
		req.Header.Set("X-Then", then)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}
	for _, tc := range []struct {
		id, then string
		pooled   bool // sent on a pooled connection
	}{
		{"closed-reused", "close", true},
		{"half-head-reused", "half", true},
		{"closed-new", "close", false},
	} {
		if tc.pooled {
			if err := send("pool-"+tc.id, ""); err != nil {
				t.Fatal(err)
			}
		}
		before := srv.conns.Load()
		err := send(tc.id, tc.then)
		if err == nil {
			t.Fatalf("%s: the exchange succeeded", tc.id)
		}
		if tc.then == "close" && !strings.Contains(err.Error(), "not sent again") {
			t.Errorf("%s: error %q does not say the request was sent and not sent again", tc.id, err)
		}
		if n := seen.times(tc.id); n != 1 {
			t.Fatalf("%s: the server read the request %d times, want 1", tc.id, n)
		}
		want := before
		if !tc.pooled {
			want++
		}
		if n := srv.conns.Load(); n != want {
			t.Fatalf("%s: %d connections, want %d (no new one for a retry)", tc.id, n, want)
		}
	}
}

// TestH1ReplaySafeRequestSentAgain: a request marked replay-safe (a list)
// that a reused connection loses after it was written, with no byte of the
// response or part of its head, is sent again once on a new connection and
// answered; the same request unmarked is not. A new connection's loss is
// not retried, marked or not, and a second loss ends the retries.
func TestH1ReplaySafeRequestSentAgain(t *testing.T) {
	h1Leaks(t)
	var seen readCounts
	var lose sync.Map // X-Id: *atomic.Int64, losses still to come for that request
	srv := newRawServer(t, seen.serve(func(req *http.Request) bool {
		l, ok := lose.Load(req.Header.Get("X-Id"))
		return ok && l.(*atomic.Int64).Add(-1) >= 0
	}))
	tr := newTestH1(t, 4)
	send := func(ctx context.Context, id, then string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.url(), strings.NewReader("list "+id))
		req.Header.Set("X-Id", id)
		req.Header.Set("X-Then", then)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	safe := withReplaySafe(context.Background())
	for _, tc := range []struct {
		id, then string
		ctx      context.Context
		pooled   bool  // sent on a pooled connection
		losses   int64 // connections lost under it
		answered bool
		reads    int64 // times the server reads it
		newConns int64
	}{
		{"safe-reused", "", safe, true, 1, true, 2, 1},
		{"safe-reused-half", "half", safe, true, 1, true, 2, 1},
		{"unmarked-reused", "", context.Background(), true, 1, false, 1, 0},
		{"safe-new", "", safe, false, 1, false, 1, 1},
		{"safe-reused-twice", "", safe, true, 2, false, 2, 1},
	} {
		if tc.pooled {
			if _, err := send(context.Background(), "pool-"+tc.id, ""); err != nil {
				t.Fatal(err)
			}
		}
		n := new(atomic.Int64)
		n.Store(tc.losses)
		lose.Store(tc.id, n)
		before := srv.conns.Load()
		body, err := send(tc.ctx, tc.id, tc.then)
		if tc.answered != (err == nil && body == "ok") {
			t.Errorf("%s: %q, %v; answered: want %v", tc.id, body, err, tc.answered)
		}
		if !tc.answered && err != nil && tc.then == "" && !strings.Contains(err.Error(), "not sent again") {
			t.Errorf("%s: error %q does not say the request was not sent again", tc.id, err)
		}
		if got := seen.times(tc.id); got != tc.reads {
			t.Errorf("%s: the server read the request %d times, want %d", tc.id, got, tc.reads)
		}
		if got := srv.conns.Load() - before; got != tc.newConns {
			t.Errorf("%s: %d new connections, want %d", tc.id, got, tc.newConns)
		}
	}
}

// patternBody is a request body of n bytes made as it is read, never held.
type patternBody struct{ left int64 }

func (b *patternBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), b.left))
	for i := range p[:n] {
		p[i] = 'x'
	}
	b.left -= int64(n)
	return n, nil
}

// bodyBeyondBuffers is a body size no pair of loopback socket buffers can
// hold: a server that stops reading partway makes the writer wait, so
// that its close fails the write rather than the read after it.
func bodyBeyondBuffers() int64 {
	size := int64(64 << 20)
	var sum int64
	for _, f := range []string{"/proc/sys/net/ipv4/tcp_wmem", "/proc/sys/net/ipv4/tcp_rmem"} {
		b, err := os.ReadFile(f)
		if fields := strings.Fields(string(b)); err == nil && len(fields) == 3 {
			n, _ := strconv.ParseInt(fields[2], 10, 64)
			sum += n
		}
	}
	return max(size, 4*sum)
}

// TestH1WriteFailureRetried: a pooled connection the server closes while
// the request is being written (it read the head and closed with the body
// unread, as a server closing an idle connection the moment it is used
// would) fails the write: the server cannot have acted on a request it
// did not receive whole, so the request is sent again on a new
// connection, once, and succeeds. A second failure is not retried, nor is
// a request whose body cannot be replayed.
func TestH1WriteFailureRetried(t *testing.T) {
	h1Leaks(t)
	size := bodyBeyondBuffers()
	var cut sync.Map // X-Id: true, once the server has cut that request short
	var heads, whole atomic.Int64
	srv := newRawServer(t, func(n int64, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			switch id := req.Header.Get("X-Id"); {
			case req.Header.Get("X-Cut") == "always":
				heads.Add(1)
				return // closed with the body unread: a reset
			case req.Header.Get("X-Cut") == "once":
				if _, done := cut.LoadOrStore(id, true); !done {
					heads.Add(1)
					return
				}
			}
			got, err := io.Copy(io.Discard, req.Body)
			if err != nil {
				return
			}
			if got == req.ContentLength {
				whole.Add(1)
			}
			s := strconv.FormatInt(got, 10)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(s), s)
		}
	})
	tr := newTestH1(t, 4)
	big := func(id, how string, replayable bool) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, srv.url(), io.NopCloser(&patternBody{left: size}))
		req.ContentLength = size
		if replayable {
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(&patternBody{left: size}), nil }
		}
		req.Header.Set("X-Id", id)
		req.Header.Set("X-Cut", how)
		return req
	}
	pool := func() {
		t.Helper()
		if _, got := h1Do(t, tr, http.MethodPost, srv.url(), []byte("abc")); got != "3" {
			t.Fatalf("a small exchange: body %q, want \"3\"", got)
		}
	}

	pool() // connection 1, pooled
	resp, err := tr.RoundTrip(big("once", "once", true))
	if err != nil {
		t.Fatalf("a request whose write failed on a pooled connection: %v, want it sent again and answered", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != strconv.FormatInt(size, 10) {
		t.Fatalf("answer %q, %v; want the %d bytes received whole", b, err, size)
	}
	if h, w, n := heads.Load(), whole.Load(), srv.conns.Load(); h != 1 || w != 2 || n != 2 {
		t.Fatalf("cut %d, received whole %d, connections %d; want 1, 2 (the small one and the retry), 2", h, w, n)
	}

	// Connection 2, pooled after the retry, is cut, and so is the retry's
	// connection 3: no third attempt.
	if _, err := tr.RoundTrip(big("always", "always", true)); err == nil {
		t.Fatal("a request cut on every connection succeeded")
	}
	if h, n := heads.Load(), srv.conns.Load(); h != 3 || n != 3 {
		t.Fatalf("cut %d times, %d connections; want 3 and 3 (one retry only)", h, n)
	}

	// A body without GetBody cannot be sent again.
	pool() // connection 4
	if _, err := tr.RoundTrip(big("unreplayable", "once", false)); err == nil {
		t.Fatal("a request whose body cannot be replayed succeeded after its write failed")
	}
	if h, n := heads.Load(), srv.conns.Load(); h != 4 || n != 4 {
		t.Fatalf("cut %d times, %d connections; want 4 and 4 (no retry)", h, n)
	}
}

// TestH1Informational: 1xx responses before the final one are skipped.
func TestH1Informational(t *testing.T) {
	h1Leaks(t)
	srv := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "final")
	}), false)
	t.Cleanup(srv.Close)
	tr := newTestH1(t, 4)
	resp, body := h1Do(t, tr, http.MethodGet, srv.URL, nil)
	if resp.StatusCode != http.StatusOK || body != "final" {
		t.Fatalf("%d %q, want 200 \"final\"", resp.StatusCode, body)
	}
}

// TestH1TLS: https with crypto/tls, connections reused.
func TestH1TLS(t *testing.T) {
	h1Leaks(t)
	srv := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			t.Error("a request over plain TCP")
		}
		fmt.Fprintf(w, "hello %s", r.Proto)
	}), true)
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	tr := newTestH1(t, 4)
	tr.tlsConf = &tls.Config{RootCAs: roots}
	for range 3 {
		resp, body := h1Do(t, tr, http.MethodPost, srv.URL, []byte("x"))
		if body != "hello HTTP/1.1" || resp.TLS == nil {
			t.Fatalf("body %q, TLS %v", body, resp.TLS != nil)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("3 https exchanges used %d connections, want 1", n)
	}
	// Without the test CA the certificate is refused.
	tr2 := newTestH1(t, 4)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if _, err := tr2.RoundTrip(req); err == nil {
		t.Fatal("a certificate from an unknown authority was accepted")
	}
}

// TestH1ProxyFallback: an origin the proxy settings send through a proxy
// goes through net/http's transport, to that proxy.
func TestH1ProxyFallback(t *testing.T) {
	h1Leaks(t)
	proxy := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "proxied %s", r.URL) // a proxy sees the absolute URL
	}), false)
	t.Cleanup(proxy.Close)
	pu, _ := url.Parse(proxy.URL)
	tr := newTestH1(t, 4)
	tr.proxy = http.ProxyURL(pu)
	tr.fallback.Proxy = http.ProxyURL(pu)
	_, body := h1Do(t, tr, http.MethodGet, "http://upstream.invalid/mcp", nil)
	if body != "proxied http://upstream.invalid/mcp" {
		t.Fatalf("body %q, want the proxy's answer", body)
	}
}

// TestH1DialFailure: a refused connection fails the exchange and closes
// the request body.
func TestH1DialFailure(t *testing.T) {
	h1Leaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tr := newTestH1(t, 4)
	body := &closeCounter{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", body)
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("an exchange with a closed port succeeded")
	}
	if body.closed.Load() != 1 {
		t.Fatalf("request body closed %d times, want 1", body.closed.Load())
	}
}

type closeCounter struct {
	io.Reader
	closed atomic.Int64
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

// TestH1ExtraBytesNotReused: a connection on which the server sent more
// than its response is not pooled (the extra bytes would be read as the
// next exchange's response).
func TestH1ExtraBytesNotReused(t *testing.T) {
	h1Leaks(t)
	srv := newRawServer(t, func(n int64, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := readRequest(br); err != nil {
				return
			}
			reply := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
			if n == 1 {
				reply += "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\njunk"
			}
			io.WriteString(c, reply)
		}
	})
	tr := newTestH1(t, 4)
	for range 3 {
		if _, body := h1Do(t, tr, http.MethodGet, srv.url(), nil); body != "ok" {
			t.Fatalf("body %q, want \"ok\"", body)
		}
	}
	if n := srv.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the first, with extra bytes, not reused)", n)
	}
}
