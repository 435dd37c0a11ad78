package streamable

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// Limits under hostile load, measured: a 1 GiB body, an initialize flood,
// and a thousand session lifecycles. (The slowloris attack is in
// slowloris_test.go.)

// hugeBody is an endless JSON request body (a tools/call whose message never
// ends) of size bytes, counting what its reader hands out.
type hugeBody struct {
	size int64
	read atomic.Int64
}

const hugeBodyHead = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`

func (b *hugeBody) Read(p []byte) (int, error) {
	off := b.read.Load()
	if off >= b.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), b.size-off)]
	for i := range p {
		if at := off + int64(i); at < int64(len(hugeBodyHead)) {
			p[i] = hugeBodyHead[at]
		} else {
			p[i] = 'x'
		}
	}
	b.read.Add(int64(len(p)))
	return len(p), nil
}

// countingListener counts the bytes the server reads from its connections,
// and gives each a receive buffer of rcvBuf, so that what a client has
// written and what the server has taken differ by at most that buffer and
// the client's send buffer.
type countingListener struct {
	net.Listener
	read *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(rcvBuf)
	}
	return countingConn{c, l.read}, nil
}

// dialCounted serves h on a listener counting the bytes the server reads
// and dials it: the raw connection (closed when the test ends), the
// server's address and the count.
func dialCounted(t *testing.T, h *Handler) (net.Conn, net.Addr, *atomic.Int64) {
	t.Helper()
	var read atomic.Int64
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = countingListener{ts.Listener, &read}
	ts.Start()
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	nc, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc, ts.Listener.Addr(), &read
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// CloseWrite shuts the sending side, as a *net.TCPConn's does.
func (c countingConn) CloseWrite() error {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		return tc.CloseWrite()
	}
	return nil
}

// Socket buffers of TestHugeBodyRefused: the kernel doubles each for its
// bookkeeping, and holds at most that much data in between.
const (
	rcvBuf = 64 << 10
	sndBuf = 16 << 10
)

// TestHugeBodyRefused streams a 1 GiB body at the handler, chunked (no
// Content-Length) and with a declared Content-Length of 1 GiB, from a
// reader that counts what it hands out. Either way the POST gets 413 with a
// JSON-RPC error naming the limit (the default 4 MiB), and the server has
// read at most the limit plus 64 KiB from the connection, headers and chunk
// framing included: net/http's own habit of reading up to 256 KiB more of a
// chunked body after the handler, to reuse the connection, is cut short.
// The client's reader gave at most that plus what the socket buffers (made
// small here) and one chunk in hand can hold: the stream was stopped, not
// drained.
func TestHugeBodyRefused(t *testing.T) {
	const (
		size    = 1 << 30
		limit   = DefaultMaxBodyBytes
		slack   = 64 << 10
		chunk   = 16 << 10
		inTrans = 2*rcvBuf + 2*sndBuf + chunk
	)
	for _, chunked := range []bool{true, false} {
		name := "Content-Length"
		if chunked {
			name = "chunked"
		}
		t.Run(name, func(t *testing.T) {
			nc, addr, serverRead := dialCounted(t, NewHandler(newFixture(t).srv))
			_ = nc.(*net.TCPConn).SetWriteBuffer(sndBuf)
			_ = nc.SetDeadline(time.Now().Add(60 * time.Second)) // fails the test instead of hanging
			head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", addr)
			if chunked {
				head += "Transfer-Encoding: chunked\r\n\r\n"
			} else {
				head += "Content-Length: " + strconv.Itoa(size) + "\r\n\r\n"
			}
			body := &hugeBody{size: size}
			sent := make(chan error, 1)
			go func() {
				if _, err := io.WriteString(nc, head); err != nil {
					sent <- err
					return
				}
				data := make([]byte, chunk)
				var out []byte
				for {
					n, err := body.Read(data)
					if err == io.EOF {
						if chunked {
							_, err = io.WriteString(nc, "0\r\n\r\n")
						}
						sent <- err
						return
					}
					// One write per chunk, framing included.
					out = out[:0]
					if chunked {
						out = fmt.Appendf(out, "%x\r\n", n)
					}
					out = append(out, data[:n]...)
					if chunked {
						out = append(out, "\r\n"...)
					}
					if _, err := nc.Write(out); err != nil {
						sent <- err
						return
					}
				}
			}()
			resp, reply := readReply(t, nc, "a body past the limit")
			// The server closes the connection after refusing: the writer
			// stops on its next write.
			if err := testwait.Recv(t, sent, "the body writer to stop"); err == nil {
				t.Fatal("the whole 1 GiB body was sent")
			}
			t.Logf("status %d; the server read %d bytes, the client's reader gave %d (limit %d)", resp.StatusCode, serverRead.Load(), body.read.Load(), limit)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(reply, fmt.Sprintf("limit of %d bytes", limit)) {
				t.Fatalf("status %d: %s", resp.StatusCode, reply)
			}
			decodeReply(t, reply)
			if got := serverRead.Load(); got > limit+slack {
				t.Fatalf("the server read %d bytes, past the limit of %d plus %d", got, limit, slack)
			}
			if got := body.read.Load(); got > limit+slack+inTrans {
				t.Fatalf("the client's reader gave %d bytes, past the limit of %d plus %d plus %d the sockets and the writer hold", got, limit, slack, inTrans)
			}
		})
	}
}

// TestRefusedBodyNotDrained: a body declared past the limit but short of
// 256 KiB is refused with 413 and not read: net/http would otherwise read
// it whole after the handler returns (it drains up to 256 KiB of an unread
// body to reuse the connection).
func TestRefusedBodyNotDrained(t *testing.T) {
	const (
		limit = 1 << 10
		size  = 200 << 10
	)
	nc, addr, serverRead := dialCounted(t, NewHandler(newFixture(t).srv, WithLimits(Limits{MaxBodyBytes: limit})))
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second)) // fails the test instead of hanging
	go func() {
		fmt.Fprint(nc, postHead(addr, size))
		_, _ = io.Copy(nc, &hugeBody{size: size})
	}()
	resp, reply := readReply(t, nc, "a body past the limit")
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(reply, "limit of 1024 bytes") {
		t.Fatalf("status %d: %s", resp.StatusCode, reply)
	}
	// The server closes the connection: reading on ends.
	_ = nc.SetReadDeadline(time.Now().Add(testwait.Limit)) // a hang bound
	_, err := io.Copy(io.Discard, nc)
	got := serverRead.Load()
	t.Logf("the server read %d bytes of a %d-byte body refused at %d", got, size, limit)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the connection was not closed (%v); the server read %d bytes", err, got)
	}
	if got > limit+64<<10 {
		t.Fatalf("the server read %d bytes of a %d-byte body refused at %d", got, size, limit)
	}
}

// TestInitializeFloodGets503: 200 initialize requests from 10 clients at
// once against Limits.MaxSessions 20 open exactly 20 sessions; every other
// one gets 503 with Retry-After and a JSON-RPC error that carries its id
// and names the limit. Ending one session makes room for one more.
func TestInitializeFloodGets503(t *testing.T) {
	const (
		maxSessions = 20
		flood       = 200
		clients     = 10
	)
	f := newFixture(t)
	h, ts := testServer(t, f, WithLimits(Limits{MaxSessions: maxSessions}))
	type outcome struct {
		status int
		retry  string
		body   string
		sid    string
	}
	outcomes := make(chan outcome, flood)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < flood; i += clients {
				body := strings.Replace(initializeBody, `"id":1`, fmt.Sprintf(`"id":"init-%d"`, i), 1)
				resp, err := ts.Client().Do(legacyRequest(t, ts.URL, "", body))
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				outcomes <- outcome{resp.StatusCode, resp.Header.Get("Retry-After"), string(b), resp.Header.Get("Mcp-Session-Id")}
			}
		})
	}
	wg.Wait()
	close(outcomes)
	var opened, refused int
	var sids []string
	for o := range outcomes {
		switch o.status {
		case http.StatusOK:
			opened++
			sids = append(sids, o.sid)
		case http.StatusServiceUnavailable:
			refused++
			rep := decodeReply(t, o.body)
			id, _ := rep.ID.(string)
			if o.retry != "1" || rep.Error == nil || !strings.HasPrefix(id, "init-") ||
				!strings.Contains(rep.Error.Message, fmt.Sprintf("limit of %d is reached", maxSessions)) {
				t.Fatalf("refused initialize: Retry-After %q: %s", o.retry, o.body)
			}
		default:
			t.Fatalf("initialize: status %d: %s", o.status, o.body)
		}
	}
	t.Logf("%d initialize requests: %d opened a session, %d got 503", flood, opened, refused)
	if opened != maxSessions || refused != flood-maxSessions || h.SessionCount() != maxSessions {
		t.Fatalf("%d opened, %d refused, %d sessions open; want %d, %d, %d", opened, refused, h.SessionCount(), maxSessions, flood-maxSessions, maxSessions)
	}
	del, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	del.Header.Set("Mcp-Session-Id", sids[0])
	if resp := do(t, del); readAll(t, resp) != "" || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: status %d", resp.StatusCode)
	}
	initialize(t, ts.URL)
}

// TestSessionCyclesLeaveNothing runs 1,000 session lifecycles over HTTP
// (initialize, initialized, a call answered on SSE, DELETE) and shows that
// they leave no goroutine behind and the live heap back at its baseline,
// within 1 MiB (the maps that held the sessions keep their high-water
// size; nothing else should stay).
func TestSessionCyclesLeaveNothing(t *testing.T) {
	const (
		cycles = 1000
		slack  = 1 << 20
	)
	f := newFixture(t)
	store := NewMemoryEventStore()
	h, ts := testServer(t, f, WithEventStore(store))
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	var sid string // of the last reply that named one
	call := func(r *http.Request) (int, string) {
		t.Helper()
		resp, body := testhttp.Do(t, client, r)
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
		return resp.StatusCode, body
	}
	cycle := func(i int) {
		status, body := call(legacyRequest(t, ts.URL, "", initializeBody))
		if status != http.StatusOK || h.SessionCount() != 1 {
			t.Fatalf("cycle %d: initialize: status %d, %d sessions open: %s", i, status, h.SessionCount(), body)
		}
		if status, _ := call(legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)); status != http.StatusAccepted {
			t.Fatalf("cycle %d: initialized: status %d", i, status)
		}
		status, body = call(legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1}}}`))
		if status != http.StatusOK || !strings.Contains(body, `"done"`) {
			t.Fatalf("cycle %d: call: status %d: %s", i, status, body)
		}
		del, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
		del.Header.Set("Mcp-Session-Id", sid)
		del.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
		if status, _ := call(del); status != http.StatusOK {
			t.Fatalf("cycle %d: DELETE: status %d", i, status)
		}
	}
	// Warm up what the process starts and allocates once: the janitor, a
	// pooled worker, the client's connection, pools.
	for i := range 50 {
		cycle(i)
	}
	h.waitWatchdogIdle(t)
	ignore := goleak.IgnoreCurrent()
	before := liveHeap()
	for i := range cycles {
		cycle(i)
	}
	if h.SessionCount() != 0 || f.srv.SessionCount() != 0 || store.Len() != 0 {
		t.Fatalf("after %d cycles: %d sessions in the handler, %d in the server, %d stored events", cycles, h.SessionCount(), f.srv.SessionCount(), store.Len())
	}
	h.waitWatchdogIdle(t)
	// Idle pooled workers are kept (at most maxIdleWorkers) for the next
	// request; a worker stuck in a request would show another top function.
	testwait.WaitForNil(t, "the goroutines of the cycles to end", func() error {
		return goleak.Find(ignore, goleak.IgnoreTopFunction("github.com/toolwire/toolwire/transport/streamable.(*workers).work"))
	})
	h.workers.mu.Lock()
	idle := len(h.workers.idle)
	h.workers.mu.Unlock()
	if idle > maxIdleWorkers {
		t.Fatalf("%d idle workers, past the pool's %d", idle, maxIdleWorkers)
	}
	// What the ended sessions held may still be referenced for a moment (a
	// connection's close lingers on a timer): wait for the heap to settle,
	// which a leak never lets it do.
	after := liveHeap()
	testwait.WaitForNil(t, "the live heap to come back near its baseline", func() error {
		if after = min(after, liveHeap()); after > before+slack {
			return fmt.Errorf("after %d cycles the live heap is %d bytes above its baseline, past the %d allowed", cycles, int64(after)-int64(before), slack)
		}
		return nil
	})
	t.Logf("live heap before %d KiB, after %d cycles %d KiB (%+d bytes)", before>>10, cycles, after>>10, int64(after)-int64(before))
}

// waitWatchdogIdle waits until the watchdog's ticker has stopped: it runs
// only while a read or write is watched, and stops at its next tick after.
func (h *Handler) waitWatchdogIdle(t *testing.T) {
	t.Helper()
	testwait.WaitFor(t, "the watchdog to stop", func() bool {
		h.wd.mu.Lock()
		defer h.wd.mu.Unlock()
		return !h.wd.running
	})
}
