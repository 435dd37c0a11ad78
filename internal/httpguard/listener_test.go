package httpguard_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/testwait"
)

// TestLimitListenerHoldsAtMostN: with 4 slots, 10 clients connect; 4 are
// accepted, and each one closed lets one more in.
func TestLimitListenerHoldsAtMostN(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := httpguard.LimitListener(inner, 4)
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 10 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	var held []net.Conn
	for range 4 {
		held = append(held, testwait.Recv(t, accepted, "an accepted connection"))
	}
	select {
	case c := <-accepted:
		t.Fatalf("a fifth connection was accepted (%v)", c.RemoteAddr())
	default:
	}
	held[0].Close()
	testwait.Recv(t, accepted, "one more accepted after a close")
	if len(accepted) != 0 {
		t.Fatalf("%d more accepted", len(accepted))
	}
}

// TestAuxServerClosesIdleAndServes: a listener with 2 slots and short
// timeouts: two connections that send nothing are closed by the server,
// after which a request is answered.
func TestAuxServerClosesIdleAndServes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int32
	stop := httpguard.ListenerLimits{MaxConns: 2, ReadHeaderTimeout: 50 * time.Millisecond, IdleTimeout: 50 * time.Millisecond}.
		Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1); _, _ = io.WriteString(w, "ok") }), nil, nil)
	defer stop()
	idle := make([]net.Conn, 2)
	for i := range idle {
		if idle[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			t.Fatal(err)
		}
		defer idle[i].Close()
	}
	for _, c := range idle {
		done := make(chan error, 1)
		go func() { _, err := c.Read(make([]byte, 1)); done <- err }()
		if err := testwait.Recv(t, done, "the server closing an idle connection"); err == nil {
			t.Fatal("read data from an idle connection")
		}
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || served.Load() != 1 {
		t.Fatalf("status %d, served %d", resp.StatusCode, served.Load())
	}
}

// TestServeCallsDrainsThenStops: when its context ends, a calls listener
// stops taking connections but lets the call under way finish and answer;
// stop then returns and the serve error is nil.
func TestServeCallsDrainsThenStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "done")
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc, stop := httpguard.ServeCalls(ctx, ln, h, 4)
	type answer struct {
		body string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := (&http.Client{Timeout: time.Minute}).Get("http://" + ln.Addr().String() + "/call")
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{string(b), err}
	}()
	testwait.Closed(t, entered, "the call reaching the handler")
	cancel()
	testwait.WaitFor(t, "the listener refusing new connections", func() bool {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release)
	if a := testwait.Recv(t, answered, "the call's answer"); a.err != nil || a.body != "done" {
		t.Fatalf("call under way at shutdown: body %q, error %v", a.body, a.err)
	}
	testwait.Returns(t, "stop", stop)
	if err := testwait.Recv(t, errc, "the serve error"); err != nil {
		t.Fatalf("serve error after a shutdown: %v", err)
	}
}
