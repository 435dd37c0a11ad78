package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

// peerEnded says whether the server's FIN or reset has reached nc's
// socket: a peek that takes nothing (unlike peerClosed, whose verdict it
// checks), so that a test waits for the close to arrive, not for a time.
func peerEnded(t *testing.T, nc net.Conn) bool {
	t.Helper()
	n, perr := peek(t, nc, syscall.MSG_DONTWAIT)
	if perr == syscall.EAGAIN {
		return false
	}
	if n > 0 {
		t.Fatal("the server sent bytes nobody asked for")
	}
	return true // 0: its FIN; an error: its reset
}

// pooledConns are the idle connections of tr's pool for u.
func pooledConns(tr *h1Transport, u string) []*h1Conn {
	k, _ := h1Origin(httptest.NewRequest(http.MethodGet, u, nil))
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if p := tr.pools[k]; p != nil {
		return append([]*h1Conn(nil), p.idle...)
	}
	return nil
}

// TestH1ClosedIdleNotUsed: a pooled connection the server has closed
// (FIN, or reset) since its last exchange, without saying Connection:
// close, is found closed before it is used, however recently it was used:
// the request goes on a new connection, once, and is answered. (Written on
// the closed one, it would fail after being sent, and not be sent again.)
func TestH1ClosedIdleNotUsed(t *testing.T) {
	for _, how := range []string{"fin", "reset"} {
		t.Run(how, func(t *testing.T) {
			h1Leaks(t)
			var requests atomic.Int64
			srv := newRawServer(t, func(n int64, c net.Conn) {
				body, err := readRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				requests.Add(1)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
				if how == "reset" {
					c.(*net.TCPConn).SetLinger(0)
				}
				// One exchange per connection, then the close, unannounced.
			})
			tr := newTestH1(t, 4)
			for i := range 3 {
				msg := "call" + strconv.Itoa(i)
				for _, c := range pooledConns(tr, srv.url()) {
					testwait.WaitFor(t, "the server's close to reach the pooled connection", func() bool { return peerEnded(t, c.nc) })
				}
				if _, body := h1Do(t, tr, http.MethodPost, srv.url(), []byte(msg)); body != msg {
					t.Fatalf("request %d: body %q, want %q", i, body, msg)
				}
			}
			if n, r := srv.conns.Load(), requests.Load(); n != 3 || r != 3 {
				t.Fatalf("%d connections, %d requests read; want 3 and 3 (each closed one left unused)", n, r)
			}
		})
	}
}

// TestH1AliveSeesClose: alive, and probe (what alive does where the socket
// cannot be read without waiting), tell a connection the server closed
// from one it keeps open, whatever the idle time.
func TestH1AliveSeesClose(t *testing.T) {
	h1Leaks(t)
	release := make(chan struct{})
	srv := newRawServer(t, func(n int64, c net.Conn) {
		if _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		if n == 2 { // the second connection stays open
			<-release
		}
	})
	t.Cleanup(func() { close(release) })
	tr1, tr2 := newTestH1(t, 4), newTestH1(t, 4)
	h1Do(t, tr1, http.MethodPost, srv.url(), []byte("a"))
	closed := pooledConns(tr1, srv.url())[0]
	testwait.WaitFor(t, "the server's close to reach the pooled connection", func() bool { return peerEnded(t, closed.nc) })
	h1Do(t, tr2, http.MethodPost, srv.url(), []byte("b"))
	open := pooledConns(tr2, srv.url())[0]
	for _, idle := range []time.Duration{0, 2 * h1ProbeIdle} {
		if closed.alive(idle) {
			t.Errorf("alive(%v): true for a connection the server closed", idle)
		}
		if !open.alive(idle) {
			t.Errorf("alive(%v): false for an open connection", idle)
		}
	}
	if closed.probe() {
		t.Error("probe: true for a connection the server closed")
	}
	if !open.probe() {
		t.Error("probe: false for an open connection")
	}
}
