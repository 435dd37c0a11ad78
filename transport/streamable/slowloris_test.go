//go:build linux || darwin

package streamable

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

// raiseOpenFiles makes sure the process may hold n descriptors, raising the
// soft limit up to the hard one if need be; it skips the test when even the
// hard limit is too low.
func raiseOpenFiles(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot read the open-file limit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Skipf("needs %d open files; the hard limit is %d (raise it with ulimit -Hn)", n, lim.Max)
	}
	old := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("needs %d open files; the soft limit is %d and cannot be raised: %v", n, old.Cur, err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// connClock records when the server accepted and when it closed each
// connection, by the client's address.
type connClock struct {
	net.Listener
	conns sync.Map // remote address -> *clockedConn
}

type clockedConn struct {
	net.Conn
	accepted time.Time
	closed   atomic.Int64 // UnixNano of the first Close, 0 before
}

func (c *clockedConn) Close() error {
	c.closed.CompareAndSwap(0, time.Now().UnixNano())
	return c.Conn.Close()
}

func (l *connClock) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &clockedConn{Conn: c, accepted: time.Now()}
	l.conns.Store(c.RemoteAddr().String(), cc)
	return cc, nil
}

// TestSlowlorisClosedByReadHeaderTimeout: 1,000 connections each send a
// request line and headers a byte at a time, never finishing them, against
// a server started with Serve and a 2 s Limits.ReadHeaderTimeout. The clients
// go on dripping until the server closes their connection, and nothing in
// the server but that timeout closes a connection whose headers are not
// complete: the server closing every one, none before the timeout after
// its accept, shows the timeout at work. All the while a normal client's
// calls go on succeeding. The times are the server's, from its accept to
// its Close of the connection; how long after the timeout a machine gets to
// close them depends on its load, and is logged, never asserted.
func TestSlowlorisClosedByReadHeaderTimeout(t *testing.T) {
	const timeout = 2 * time.Second
	raiseOpenFiles(t, 2*slowConns+256) // both ends of each connection live in this process

	f := newFixture(t)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &connClock{Listener: inner}
	h := NewHandler(f.srv)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, WithLimits(Limits{ReadHeaderTimeout: timeout})) }()
	defer func() {
		cancel()
		if err := testwait.Recv(t, served, "Serve to return"); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	closed := slowloris(t, ln)
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	t.Logf("%d slow connections closed by the server %v (min), %v (median), %v (max) after its accept; ReadHeaderTimeout %v",
		slowConns, ms(closed[0]), ms(closed[slowConns/2]), ms(closed[slowConns-1]), timeout)
	if closed[0] < timeout {
		t.Fatalf("a slow connection was closed after %v, before ReadHeaderTimeout (%v)", closed[0], timeout)
	}
}

// slowConns is how many slow connections slowloris opens.
const slowConns = 1000

// slowloris runs one attack on the server listening on ln and returns how
// long after its accept the server closed each slow connection, sorted. It
// fails the test if a normal call fails or no normal call is answered
// during the attack, or if the server has not closed a slow connection
// after testwait.Limit (a hang bound: nothing but the timeout closes them).
func slowloris(t *testing.T, ln *connClock) (closed []time.Duration) {
	t.Helper()
	const (
		conns    = slowConns
		drip     = 500 * time.Millisecond // between two bytes
		drippers = 20
	)
	giveUp := testwait.Limit
	url := "http://" + ln.Addr().String() + DefaultPath

	// The normal client calls until the attack is over.
	var (
		attackOver = make(chan struct{})
		calls      atomic.Int64 // answered while attack connections were open
		open       atomic.Int64 // attack connections open
		callErr    = make(chan error, 1)
	)
	go func() {
		client := &http.Client{Transport: &http.Transport{}}
		defer client.CloseIdleConnections()
		for i := 0; ; i++ {
			select {
			case <-attackOver:
				callErr <- nil
				return
			default:
			}
			r := modernRequest(t, url, i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}})
			resp, err := client.Do(r)
			if err != nil {
				callErr <- err
				return
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Echo: hi") {
				callErr <- fmt.Errorf("call %d: status %d: %s (%v)", i, resp.StatusCode, body, err)
				return
			}
			if open.Load() > 0 {
				calls.Add(1)
			}
			time.Sleep(20 * time.Millisecond) // a client working, not a load test
		}
	}()

	partial := "POST " + DefaultPath + " HTTP/1.1\r\nHost: " + ln.Addr().String() + "\r\nContent-Type: application/json\r\nX-Slow: " + strings.Repeat("z", 64)
	// A few goroutines drip a byte into each of their connections in turn,
	// so that the attackers themselves take little of the machine. A write
	// fails once the server has closed the connection (the one after the
	// close draws a reset).
	type slow struct {
		nc    net.Conn
		addr  string
		ended bool
	}
	slows := make([]slow, conns)
	var wg sync.WaitGroup
	var dialErrs atomic.Int64
	for g := range drippers {
		wg.Go(func() {
			mine := slows[g*conns/drippers : (g+1)*conns/drippers]
			for i := range mine {
				nc, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					dialErrs.Add(1)
					mine[i].ended = true
					continue
				}
				mine[i].nc, mine[i].addr = nc, nc.LocalAddr().String()
				open.Add(1)
			}
			start := time.Now()
			for n := 0; time.Since(start) < giveUp; n++ {
				left := 0
				for i := range mine {
					s := &mine[i]
					if s.ended {
						continue
					}
					if _, err := s.nc.Write([]byte{partial[n%len(partial)]}); err != nil {
						s.ended = true
						s.nc.Close()
						open.Add(-1)
						continue
					}
					left++
				}
				if left == 0 {
					return
				}
				time.Sleep(drip)
			}
		})
	}
	wg.Wait()
	close(attackOver)
	if err := testwait.Recv(t, callErr, "the normal client"); err != nil {
		t.Fatalf("a normal call failed during the attack: %v", err)
	}
	if n := dialErrs.Load(); n > 0 {
		t.Fatalf("%d of %d connections could not be made", n, conns)
	}
	closed = make([]time.Duration, 0, conns) // from the server's accept to its close
	for _, s := range slows {
		if !s.ended {
			s.nc.Close()
			t.Fatalf("slow connection %s was still open after %v", s.addr, giveUp)
		}
		v, ok := ln.conns.Load(s.addr)
		if !ok {
			t.Fatalf("slow connection %s ended but was never accepted", s.addr)
		}
		cc := v.(*clockedConn)
		at := cc.closed.Load()
		if at == 0 {
			t.Fatalf("slow connection %s ended but the server never closed it", s.addr)
		}
		closed = append(closed, time.Unix(0, at).Sub(cc.accepted))
	}
	slices.Sort(closed)
	t.Logf("%d normal calls answered during the attack", calls.Load())
	if calls.Load() == 0 {
		t.Fatal("no normal call was answered while the slow connections were open")
	}
	return closed
}
