package httpguard

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// ListenerLimits bound an HTTP listener toolwire opens beside its MCP
// endpoint (admin, metrics, health, debug, Open Tool Calling): how many
// connections it holds at once, and how long a request may take to
// arrive, to be answered, and a kept-alive connection may idle. A zero
// field takes the default of AuxLimits. None of these listeners streams,
// so whole-request read and write timeouts apply.
type ListenerLimits struct {
	MaxConns          int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
}

// AuxLimits are the defaults of ListenerLimits: 64 connections (an
// operator's browser and a few scrapers and probes need far fewer), 5 s
// for the headers, 30 s to read a request and to write an answer, 15 s of
// idle keep-alive, 64 KiB of headers.
var AuxLimits = ListenerLimits{
	MaxConns:          64,
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      30 * time.Second,
	IdleTimeout:       15 * time.Second,
	MaxHeaderBytes:    64 << 10,
}

func (l ListenerLimits) withDefaults() ListenerLimits {
	d := AuxLimits
	limits.SetPositive(&d.MaxConns, l.MaxConns)
	limits.SetPositive(&d.ReadHeaderTimeout, l.ReadHeaderTimeout)
	limits.SetPositive(&d.ReadTimeout, l.ReadTimeout)
	limits.SetPositive(&d.WriteTimeout, l.WriteTimeout)
	limits.SetPositive(&d.IdleTimeout, l.IdleTimeout)
	limits.SetPositive(&d.MaxHeaderBytes, l.MaxHeaderBytes)
	return d
}

// Serve serves h on ln within l until the returned stop is called (which
// closes the listener and every connection at once). errLog receives the
// server's own errors.
func (l ListenerLimits) Serve(ln net.Listener, h http.Handler, errLog *log.Logger, onErr func(error)) (stop func()) {
	l = l.withDefaults()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes, ErrorLog: errLog}
	go func() {
		if err := srv.Serve(LimitListener(ln, l.MaxConns)); err != nil && err != http.ErrServerClosed && onErr != nil {
			onErr(err)
		}
	}()
	return func() { _ = srv.Close() }
}

// CallsShutdownTimeout bounds how long ServeCalls's stop waits for the
// calls under way to finish before it closes their connections.
const CallsShutdownTimeout = 10 * time.Second

// ServeCalls serves h on ln for callers whose requests run as long as the
// tools they call (Open Tool Calling): no write timeout, 10 s for the
// headers, a minute to read a request, two minutes of idle keep-alive,
// AuxLimits' header bound, and at most maxConns connections at once (<= 0:
// no bound). It serves until ctx ends or stop is called; stop shuts down
// gracefully within CallsShutdownTimeout and returns once Serve has. The
// channel receives Serve's error once (nil after a shutdown).
func ServeCalls(ctx context.Context, ln net.Listener, h http.Handler, maxConns int) (errc <-chan error, stop func()) {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: AuxLimits.MaxHeaderBytes}
	ch := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := hs.Serve(LimitListener(ln, maxConns))
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		ch <- err
	}()
	stop = sync.OnceFunc(func() {
		sctx, cancel := context.WithTimeout(context.Background(), CallsShutdownTimeout)
		defer cancel()
		_ = hs.Shutdown(sctx)
		<-done
	})
	context.AfterFunc(ctx, stop)
	return ch, stop
}

// LimitListener returns a listener that holds at most n accepted
// connections at once: past it, Accept waits for one to close, and the
// connections waiting meanwhile stay in the kernel's backlog, taking no
// descriptor of this process. n <= 0 is no limit.
func LimitListener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
