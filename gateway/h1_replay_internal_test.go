package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

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
