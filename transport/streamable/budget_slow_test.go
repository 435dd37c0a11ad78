package streamable

import (
	"bufio"
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

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/transport"
)

// watchedBodies counts, for requests without credentials, those whose body
// the handler has begun to read or that it answered without reading (the
// request is settled: charged or refused), and those it has answered.
type watchedBodies struct {
	settled, answered atomic.Int32
}

type settleBody struct {
	io.ReadCloser
	once sync.Once
	w    *watchedBodies
}

func (b *settleBody) settle() { b.once.Do(func() { b.w.settled.Add(1) }) }

func (b *settleBody) Read(p []byte) (int, error) {
	b.settle()
	return b.ReadCloser.Read(p)
}

func (wb *watchedBodies) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Authorization") != "" {
			next.ServeHTTP(w, r)
			return
		}
		b := &settleBody{ReadCloser: r.Body, w: wb}
		r.Body = b
		next.ServeHTTP(w, r)
		b.settle()
		wb.answered.Add(1)
	})
}

// slowBody opens a connection from the loopback address from (nil: any)
// that declares a body of size bytes without credentials and sends its
// first byte only, leaving it open.
func slowBody(t *testing.T, from net.IP, addr string, size int) net.Conn {
	t.Helper()
	d := net.Dialer{}
	if from != nil {
		d.LocalAddr = &net.TCPAddr{IP: from}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		if from != nil {
			t.Skipf("cannot dial from %v: %v", from, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := fmt.Fprint(nc, postHead(addr, size)+"{"); err != nil {
		t.Fatal(err)
	}
	return nc
}

// keyedSession opens a 2025-era session as the principal name (bearerAuth).
func keyedSession(t *testing.T, url, name string) string {
	t.Helper()
	r := legacyRequest(t, url, "", initializeBody)
	r.Header.Set("Authorization", "Bearer "+name)
	resp := do(t, r)
	body := readAll(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s: status %d: %s", name, resp.StatusCode, body)
	}
	r = legacyRequest(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.Header.Set("Authorization", "Bearer "+name)
	resp = do(t, r)
	if readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized as %s: status %d", name, resp.StatusCode)
	}
	return sid
}

// keyedCall makes one call as name on its session and reports whether it
// was answered; a refusal for memory fails the test.
func keyedCall(t *testing.T, url, sid, name, body string) bool {
	t.Helper()
	r := legacyRequest(t, url, sid, body)
	r.Header.Set("Authorization", "Bearer "+name)
	resp := do(t, r)
	got := readAll(t, resp)
	if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(got, fmt.Sprint(jsonrpc.CodeOverloaded)) {
		t.Errorf("a keyed call was refused for memory: %.300s", got)
		return false
	}
	return resp.StatusCode == http.StatusOK && strings.Contains(got, `"result"`)
}

// TestSlowDeclaredBodiesDoNotStarveKeyedCallers: connections without
// credentials, each from its own loopback address, declare a 4 MiB body
// and send one byte, and are held open (the body deadline pushed far off,
// so that only the budget is tested). Under the default 32 MiB budget, 8
// of them once took all of it until the read timeout, and every other
// caller got 503 (-32005). Now a body holds what it has sent, so all of
// them are held, and a keyed caller meanwhile opens a session and gets
// every one of its calls answered, small ones and 1 MiB ones alike.
func TestSlowDeclaredBodiesDoNotStarveKeyedCallers(t *testing.T) {
	for _, slow := range []int{8, 100} {
		t.Run(fmt.Sprintf("%d slow bodies", slow), func(t *testing.T) {
			raiseOpenFiles(t, uint64(2*slow+256))
			const (
				small = 40
				large = 8
			)
			f := newFixture(t)
			budget := transport.NewMemoryBudget(transport.DefaultMemoryBudget)
			h := NewHandler(f.srv, WithMemoryBudget(budget), WithLimits(Limits{ReadTimeout: time.Hour, MinBodyRate: DefaultMinBodyRate, BodyGrace: time.Hour}))
			var wb watchedBodies
			ts := httptest.NewServer(wb.wrap(bearerAuth(h)))
			t.Cleanup(func() { h.Close(); ts.Close() })
			addr := ts.Listener.Addr().String()

			for i := range slow {
				slowBody(t, net.IPv4(127, 0, 1, byte(1+i)), addr, DefaultMaxBodyBytes)
			}
			testwait.WaitFor(t, "every slow body to be charged or refused", func() bool { return int(wb.settled.Load()) == slow })

			sid := keyedSession(t, ts.URL, "alice")
			answered := 0
			for i := range small + large {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, i+2)
				if i >= small {
					body = paddedCall(i+2, "echo", 1<<20)
				}
				if keyedCall(t, ts.URL, sid, "alice", body) {
					answered++
				}
			}
			held := slow - int(wb.answered.Load())
			t.Logf("%d slow 4 MiB bodies without credentials: %d still held after the keyed caller's calls, holding %d bytes; the keyed caller got %d of %d calls answered (%d of 1 MiB)",
				slow, held, h.shares.anon.InUse(), answered, small+large, large)
			if answered != small+large || held != slow {
				t.Fatalf("%d of %d keyed calls answered, %d of %d slow bodies held", answered, small+large, held, slow)
			}
		})
	}
}

// TestAnonymousSharesBoundSentBodies: bodies without credentials that
// have been sent in part, then stall, hold what they sent; from one address
// they hold at most the address share, and from every address together at
// most the anonymous share (half the budget): past either a body is refused
// with 503 and -32005 while it is still arriving. Callers with credentials
// keep the other half: a keyed caller's 1 MiB calls are all answered while
// the anonymous share is full.
func TestAnonymousSharesBoundSentBodies(t *testing.T) {
	const (
		size = 4 << 20 // declared
		sent = 3 << 20 // sent before stalling: the buffer grows to the whole body
	)
	f := newFixture(t)
	budget := transport.NewMemoryBudget(transport.DefaultMemoryBudget)
	h := NewHandler(f.srv, WithMemoryBudget(budget), WithLimits(Limits{ReadTimeout: time.Hour, MinBodyRate: DefaultMinBodyRate, BodyGrace: time.Hour}))
	ts := httptest.NewServer(bearerAuth(h))
	t.Cleanup(func() { h.Close(); ts.Close() })
	addr := ts.Listener.Addr().(*net.TCPAddr)
	anon := h.shares.anon

	// stall sends sent bytes of a size-byte body from the loopback address
	// 127.0.0.from, then stalls; the reply, if one comes, arrives on the
	// channel.
	stall := func(from byte) <-chan *http.Response {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, from)}}
		nc, err := d.Dial("tcp", addr.String())
		if err != nil {
			t.Skipf("cannot dial from 127.0.0.%d: %v", from, err)
		}
		t.Cleanup(func() { nc.Close() })
		body := paddedCall(int(from), "echo", size)
		replies := make(chan *http.Response, 1)
		go func() {
			_, _ = fmt.Fprint(nc, postHead(addr, size)+body[:sent])
		}()
		go func() {
			if resp, err := http.ReadResponse(bufio.NewReader(nc), nil); err == nil {
				replies <- resp
			}
		}()
		return replies
	}
	refused := func(what string, replies <-chan *http.Response) {
		t.Helper()
		resp := testwait.Recv(t, replies, what+" to be refused")
		body := readAll(t, resp)
		if rep := decodeReply(t, body); resp.StatusCode != http.StatusServiceUnavailable || rep.Error == nil || rep.Error.Code != jsonrpc.CodeOverloaded {
			t.Fatalf("%s: status %d: %s", what, resp.StatusCode, body)
		}
	}

	// One address: one body fits its share (4 MiB), a second does not.
	stall(2)
	testwait.WaitFor(t, "the first body from 127.0.0.2 to be charged whole", func() bool { return anon.InUse() == size })
	refused("a second body from 127.0.0.2", stall(2))

	// Four addresses fill the anonymous share (16 MiB); a fifth is refused.
	for from := byte(3); from <= 5; from++ {
		stall(from)
	}
	testwait.WaitFor(t, "four bodies to fill the anonymous share", func() bool { return anon.InUse() == anon.Limit() })
	refused("a body from a fifth address", stall(6))

	sid := keyedSession(t, ts.URL, "alice")
	const calls = 12
	answered := 0
	for i := range calls {
		if keyedCall(t, ts.URL, sid, "alice", paddedCall(i+2, "echo", 1<<20)) {
			answered++
		}
	}
	t.Logf("stalled bodies without credentials hold %d bytes (share %d of a budget of %d); the keyed caller got %d of %d 1 MiB calls answered",
		anon.InUse(), anon.Limit(), budget.Limit(), answered, calls)
	if answered != calls || anon.InUse() != anon.Limit() {
		t.Fatalf("%d of %d keyed calls answered; the anonymous share holds %d", answered, calls, anon.InUse())
	}
}

// TestStalledBodyRefusedAfterGrace: a body that stops arriving is refused
// with 400 once WithMinBodyRate's grace has passed, though the read timeout
// is an hour away; its memory is given back and its connection closed.
func TestStalledBodyRefusedAfterGrace(t *testing.T) {
	f := newFixture(t)
	budget := transport.NewMemoryBudget(transport.DefaultMemoryBudget)
	h := NewHandler(f.srv, WithMemoryBudget(budget), WithLimits(Limits{ReadTimeout: time.Hour, MinBodyRate: 1 << 10, BodyGrace: 100 * time.Millisecond}))
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	nc := slowBody(t, nil, ts.Listener.Addr().String(), DefaultMaxBodyBytes)
	_ = nc.SetReadDeadline(time.Now().Add(testwait.Limit)) // a failure bound, not a speed check
	resp, body := readReply(t, nc, "a stalled body")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "request body too slow: 1 bytes received") || !resp.Close {
		t.Fatalf("status %d (close %v): %s", resp.StatusCode, resp.Close, body)
	}
	testwait.WaitFor(t, "the stalled body's memory to be given back", func() bool { return budget.InUse() == 0 && h.shares.addresses() == 0 })
}

// A body's deadline: the grace, then a second per rate bytes, never past
// the read timeout; no rate, the read timeout.
func TestBodyDeadline(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	o := newHandlerConfig([]HandlerOption{WithLimits(Limits{MinBodyRate: 1000, BodyGrace: 2 * time.Second, ReadTimeout: 10 * time.Second})})
	for _, c := range []struct {
		got  int64
		want time.Duration
	}{{0, 2 * time.Second}, {500, 2500 * time.Millisecond}, {3000, 5 * time.Second}, {1 << 20, 10 * time.Second}} {
		if got := o.bodyDeadline(start, c.got).Sub(start); got != c.want {
			t.Errorf("after %d bytes: due in %v, want %v", c.got, got, c.want)
		}
	}
	o = newHandlerConfig([]HandlerOption{WithLimits(Limits{MinBodyRate: -1, BodyGrace: 0, ReadTimeout: 10 * time.Second})})
	if got := o.bodyDeadline(start, 0).Sub(start); got != 10*time.Second {
		t.Errorf("without a rate: due in %v", got)
	}
	d := newHandlerConfig(nil)
	if d.minBodyRate != DefaultMinBodyRate || d.bodyGrace != DefaultBodyGrace {
		t.Errorf("defaults: %d bytes/s after %v", d.minBodyRate, d.bodyGrace)
	}
}

// The shares' sizes: by default half and an eighth of the budget, never
// less than one body of the largest size (nor more than their parent), and
// as set; a negative size means none; without a budget, nothing is
// charged.
func TestBudgetShareSizes(t *testing.T) {
	b := transport.NewMemoryBudget(32 << 20)
	for _, c := range []struct {
		opts       []HandlerOption
		anon, addr int64
	}{
		{nil, 16 << 20, 4 << 20},
		{[]HandlerOption{WithMemoryBudget(transport.NewMemoryBudget(8 << 20))}, 4 << 20, 4 << 20},
		{[]HandlerOption{WithMemoryBudget(transport.NewMemoryBudget(1 << 20))}, 1 << 20, 1 << 20},
		{[]HandlerOption{WithLimits(Limits{MaxAnonymousBytes: 1 << 20, MaxAddressBytes: 64 << 10})}, 1 << 20, 64 << 10},
		{[]HandlerOption{WithLimits(Limits{MaxAddressBytes: -1})}, 16 << 20, 16 << 20},
		{[]HandlerOption{WithLimits(Limits{MaxAnonymousBytes: -1, MaxAddressBytes: -1})}, 32 << 20, 32 << 20},
	} {
		o := newHandlerConfig(append([]HandlerOption{WithMemoryBudget(b)}, c.opts...))
		s := newBudgetShares(&o)
		ch := s.charge(httptest.NewRequest("POST", "/", nil))
		if s.anon.Limit() != c.anon || ch.pool.Limit() != c.addr {
			t.Errorf("%d options: anonymous share %d, address share %d; want %d and %d", len(c.opts), s.anon.Limit(), ch.pool.Limit(), c.anon, c.addr)
		}
		ch.release()
		if s.addresses() != 0 {
			t.Errorf("an address share outlives its charge")
		}
	}
	o := newHandlerConfig([]HandlerOption{WithMemoryBudget(nil)})
	if s := newBudgetShares(&o); s.anon != nil || s.charge(httptest.NewRequest("POST", "/", nil)).pool != nil {
		t.Error("without a budget something is charged")
	}
}
