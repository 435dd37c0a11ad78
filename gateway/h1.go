package gateway

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Limits of the HTTP/1.1 upstream transport; the timeouts are net/http's
// DefaultTransport's.
const (
	h1DialTimeout = 30 * time.Second
	h1TLSTimeout  = 10 * time.Second
	h1IdleTimeout = 90 * time.Second       // a pooled connection idle longer is closed
	h1KeepAlive   = 30 * time.Second       // TCP keep-alive probes on every connection
	h1ProbeIdle   = time.Second            // where the socket cannot be read without waiting: a connection idle longer is probed before reuse
	h1Max1xx      = 5                      // informational responses skipped before the final one
	h1BufferSize  = 4 << 10                // a request's write buffer and a response's read buffer, as net/http's
	h1ProbeWait   = 100 * time.Microsecond // how long the liveness probe waits for a byte or the end
)

// h1Past is a deadline already passed: it unblocks reads and writes at once.
var h1Past = time.Unix(1, 0)

// h1Writers and h1Readers are the buffers of the exchanges under way. A
// connection takes a writer while it writes a request and a reader from
// the first byte of the response to the end of its body: one waiting for
// its upstream's answer (where a slow tool call spends its time) or idle
// in the pool holds neither, so the memory of an upstream's connections
// follows the exchanges moving bytes, not the calls in flight.
var (
	h1Writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, h1BufferSize) }}
	h1Readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, h1BufferSize) }}
)

// h1Transport is the round tripper of an HTTP upstream: HTTP/1.1 over a
// pool of keep-alive connections, each request written and its response
// read on the caller's goroutine. net/http.Transport hands every request
// to a writer and a reader goroutine per connection; on a busy gateway
// those hand-offs cost more than the exchange itself.
//
// A connection returns to the pool once its response body has been read
// to the end and closed, unless the request or the response said
// Connection: close; a body closed early, a failed read or a cancelled
// request closes it. A pooled connection the server has closed is not
// used (see alive); one that fails before the request is written whole is
// replaced, and the request sent again, once. A request written whole is
// never sent again, whatever follows: the server may have acted on it (as
// net/http, which does not replay a POST it has written). At most maxIdle
// connections per origin are kept; calls in flight beyond that open
// connections closed afterwards. https uses crypto/tls with HTTP/1.1 (no
// HTTP/2), no response is decompressed (no Accept-Encoding is sent), and
// an origin that HTTP_PROXY, HTTPS_PROXY and NO_PROXY send through a
// proxy goes through a net/http.Transport instead.
type h1Transport struct {
	maxIdle  int
	dialer   net.Dialer
	fallback *http.Transport // proxied origins
	proxy    func(*http.Request) (*url.URL, error)
	tlsConf  *tls.Config // the base of every https origin's; nil: the defaults

	mu    sync.Mutex
	pools map[h1Key]*h1Pool
}

// h1Key is an origin: "http" or "https" and host:port.
type h1Key struct{ scheme, addr string }

type h1Pool struct {
	proxied bool        // the environment's proxy settings apply: use fallback
	idle    []*h1Conn   // the most recently used last
	tlsConf *tls.Config // https only
}

// h1Conn is one connection, with its read buffer while a response is
// read (see h1Readers).
type h1Conn struct {
	nc     net.Conn
	br     *bufio.Reader // nil but from a response's first byte to the end of its body
	wait   *readWait     // waits for a response before br is taken; nil: take it at once
	since  time.Time     // when it was last put in the pool
	reused bool          // taken from the pool: its server may have closed it meanwhile
	werr   error         // why writing a request failed; the connection is then closed
}

func newH1Transport(maxIdle int) *h1Transport {
	fb := http.DefaultTransport.(*http.Transport).Clone()
	fb.MaxIdleConns = maxIdle
	fb.MaxIdleConnsPerHost = maxIdle
	fb.IdleConnTimeout = h1IdleTimeout
	return &h1Transport{
		maxIdle:  maxIdle,
		dialer:   net.Dialer{Timeout: h1DialTimeout, KeepAlive: h1KeepAlive},
		fallback: fb,
		proxy:    http.ProxyFromEnvironment,
		pools:    map[h1Key]*h1Pool{},
	}
}

// pool returns the origin's pool, deciding once whether the environment
// sends it through a proxy (net/http reads the environment once too).
func (t *h1Transport) pool(req *http.Request, k h1Key) *h1Pool {
	t.mu.Lock()
	p := t.pools[k]
	t.mu.Unlock()
	if p != nil {
		return p
	}
	p = &h1Pool{}
	if u, err := t.proxy(req); err != nil || u != nil {
		p.proxied = true // a malformed proxy setting is net/http's to report
	}
	if k.scheme == "https" {
		if t.tlsConf != nil {
			p.tlsConf = t.tlsConf.Clone()
		} else {
			p.tlsConf = &tls.Config{}
		}
		if p.tlsConf.ServerName == "" {
			p.tlsConf.ServerName = req.URL.Hostname()
		}
		p.tlsConf.NextProtos = []string{"http/1.1"}
	}
	t.mu.Lock()
	if q := t.pools[k]; q != nil {
		p = q
	} else {
		t.pools[k] = p
	}
	t.mu.Unlock()
	return p
}

// RoundTrip sends req on a pooled connection, or a new one, and reads the
// response head; the body is read from the connection as the caller reads
// it. req's context bounds the exchange and the reading of the body.
func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	k, err := h1Origin(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	p := t.pool(req, k)
	if p.proxied {
		return t.fallback.RoundTrip(req)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	c := t.get(p)
	for retried := false; ; retried = true {
		if c == nil {
			if c, err = t.dial(ctx, k, p); err != nil {
				closeBody(req)
				return nil, err
			}
		}
		resp, err := t.exchange(ctx, c, req, p)
		if err == nil {
			return resp, nil
		}
		if retried || !c.reused || !(unsent(err) || lost(err) && replaySafe(ctx)) || ctx.Err() != nil || !replayable(req) {
			return nil, err
		}
		// The pooled connection failed before the whole request was
		// written, so the server cannot have acted on it; or after, for a
		// request it does nothing with but answer (a list), as a server
		// closing an idle connection just as it is reused makes happen.
		// Send it again on a new connection, once.
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			r2 := *req
			r2.Body = body
			req = &r2
		}
		c = nil
	}
}

// h1Origin is the request's origin, with the scheme's default port.
func h1Origin(req *http.Request) (h1Key, error) {
	u := req.URL
	if u == nil {
		return h1Key{}, errors.New("http: nil Request.URL")
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return h1Key{}, fmt.Errorf("unsupported protocol scheme %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return h1Key{}, errors.New("http: no Host in request URL")
	}
	return h1Key{scheme, net.JoinHostPort(u.Hostname(), port)}, nil
}

// exchange writes req on c and reads the response head. On success the
// connection belongs to the response's body; on error it is closed.
func (t *h1Transport) exchange(ctx context.Context, c *h1Conn, req *http.Request, p *h1Pool) (*http.Response, error) {
	// A cancellation unblocks whatever read or write is under way, now
	// or, for the body, later.
	stop := h1NoStop
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(h1Past) })
	}
	fail := func(err error) (*http.Response, error) {
		stop()
		c.nc.Close()
		c.release()
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	bw := h1Writers.Get().(*bufio.Writer)
	bw.Reset(h1Writer{c})
	err := req.Write(bw) // also closes req.Body
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	h1Writers.Put(bw)
	if err != nil {
		if c.werr == nil {
			return fail(err) // the body's own error
		}
		// req.Write reports the connection's error past the head as if
		// the body's, hence c.werr.
		return fail(&h1Error{err: fmt.Errorf("writing the request: %w", c.werr), unsent: true})
	}
	if err := c.wait.await(); err != nil {
		return fail(&h1Error{err: err})
	}
	c.br = h1Readers.Get().(*bufio.Reader)
	c.br.Reset(c.nc)
	resp, err := http.ReadResponse(c.br, req)
	for n := 0; err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200; n++ {
		if resp.StatusCode == http.StatusSwitchingProtocols || n == h1Max1xx {
			return fail(fmt.Errorf("unexpected HTTP status %s", resp.Status))
		}
		resp, err = http.ReadResponse(c.br, req)
	}
	if err != nil {
		return fail(&h1Error{err: err})
	}
	if tc, ok := c.nc.(*tls.Conn); ok {
		st := tc.ConnectionState()
		resp.TLS = &st
	}
	keep := !req.Close && !resp.Close
	if resp.Body == http.NoBody {
		if stop() && keep {
			t.put(p, c)
		} else {
			c.nc.Close()
			c.release()
		}
		return resp, nil
	}
	resp.Body = &h1Body{t: t, p: p, c: c, body: resp.Body, ctx: ctx, stop: stop, keep: keep}
	return resp, nil
}

// h1NoStop is the cancellation watch of a request that cannot be cancelled.
func h1NoStop() bool { return true }

// h1Writer is the connection as the request writer sees it: it keeps
// the connection's write error apart from the body's read errors.
type h1Writer struct{ c *h1Conn }

func (w h1Writer) Write(p []byte) (int, error) {
	n, err := w.c.nc.Write(p)
	if err != nil {
		w.c.werr = err
	}
	return n, err
}

// h1Error is a connection failing an exchange. unsent: the request could
// not be written whole, so the server cannot have acted on it; otherwise
// it was written, and the server may have acted on it even though no
// response came (a server that ran a tool call and died before answering
// looks, from here, like one that closed the connection unread).
type h1Error struct {
	err    error
	unsent bool
}

func (e *h1Error) Error() string {
	if e.unsent {
		return e.err.Error()
	}
	return "the connection failed after the request was sent and before a response; not sent again, since the server may have acted on it: " + e.err.Error()
}

func (e *h1Error) Unwrap() error { return e.err }

// unsent says whether err is the failure to write a request whole, the
// only failure after which a request is sent again (as net/http, which
// never replays a POST it has written).
func unsent(err error) bool {
	var he *h1Error
	return errors.As(err, &he) && he.unsent
}

// lost says whether err is the connection failing between the request
// and its response.
func lost(err error) bool {
	var he *h1Error
	return errors.As(err, &he)
}

type replaySafeKey struct{}

// withReplaySafe marks ctx's requests as safe to send twice: the server
// runs nothing for them (the lists, and the initialize handshake), so one
// that a reused connection lost after it was written is sent again on a
// new connection, as net/http does for idempotent requests. A tools/call
// is never marked.
func withReplaySafe(ctx context.Context) context.Context {
	return context.WithValue(ctx, replaySafeKey{}, true)
}

func replaySafe(ctx context.Context) bool {
	safe, _ := ctx.Value(replaySafeKey{}).(bool)
	return safe
}

// replayable says whether req's body can be sent again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// dial opens a connection to the origin: TCP, and TLS for https.
func (t *h1Transport) dial(ctx context.Context, k h1Key, p *h1Pool) (*h1Conn, error) {
	nc, err := t.dialer.DialContext(ctx, "tcp", k.addr)
	if err != nil {
		return nil, err
	}
	c := &h1Conn{nc: nc}
	if p.tlsConf != nil {
		tc := tls.Client(nc, p.tlsConf)
		hctx, cancel := context.WithTimeout(ctx, h1TLSTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, err
		}
		c.nc = tc
	} else {
		c.wait = newReadWait(nc)
	}
	return c, nil
}

// release returns the connection's read buffer to h1Readers, once nothing
// reads through it: its response was read to the end, or failed.
func (c *h1Conn) release() {
	if c.br != nil {
		c.br.Reset(nil)
		h1Readers.Put(c.br)
		c.br = nil
	}
}

// get takes the most recently used idle connection of the pool, skipping
// those idle too long or closed by the server (see alive).
func (t *h1Transport) get(p *h1Pool) *h1Conn {
	for {
		t.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			t.mu.Unlock()
			return nil
		}
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		t.mu.Unlock()
		if idle := time.Since(c.since); idle < h1IdleTimeout && c.alive(idle) {
			c.reused = true
			return c
		}
		c.nc.Close()
	}
}

// put returns a connection whose exchange ended cleanly to the pool, or
// closes it when the pool is full or the server sent more than its
// response. The oldest idle connection is closed when it has been idle
// too long (no timer: pooling is checked as it goes).
func (t *h1Transport) put(p *h1Pool, c *h1Conn) {
	extra := c.br != nil && c.br.Buffered() > 0
	c.release()
	if extra {
		c.nc.Close()
		return
	}
	now := time.Now()
	c.since = now
	var drop *h1Conn
	t.mu.Lock()
	if len(p.idle) > 0 && now.Sub(p.idle[0].since) > h1IdleTimeout {
		drop = p.idle[0]
		p.idle = append(p.idle[:0], p.idle[1:]...)
	}
	if len(p.idle) < t.maxIdle {
		p.idle = append(p.idle, c)
		c = nil
	}
	t.mu.Unlock()
	if drop != nil {
		drop.nc.Close()
	}
	if c != nil {
		c.nc.Close()
	}
}

// alive says whether a connection idle for idle can still carry a
// request: the server has neither closed it nor sent anything unasked.
// Every reuse checks, since a request written on a connection the server
// had already closed fails without being sent again (see unsent). Where
// the socket can be read without waiting (peerClosed) that read decides;
// elsewhere a connection idle past h1ProbeIdle is probed with a read that
// waits h1ProbeWait at most, and a younger one is taken as alive. (Bytes
// the server sent with its last response put never pools.)
func (c *h1Conn) alive(idle time.Duration) bool {
	if closed, ok := peerClosed(c.nc); ok {
		return !closed
	}
	return idle < h1ProbeIdle || c.probe()
}

// probe is a read that waits h1ProbeWait at most: a connection with
// nothing to read by then is alive (one with a byte to read is not, and
// is closed: the byte is lost with it).
func (c *h1Conn) probe() bool {
	if c.nc.SetReadDeadline(time.Now().Add(h1ProbeWait)) != nil {
		return false
	}
	var b [1]byte
	_, err := c.nc.Read(b[:])
	if c.nc.SetReadDeadline(time.Time{}) != nil {
		return false
	}
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// CloseIdleConnections closes the pooled connections; those in use are
// closed, or pooled, when their responses have been read.
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	var cs []*h1Conn
	for _, p := range t.pools {
		cs = append(cs, p.idle...)
		p.idle = nil
	}
	t.mu.Unlock()
	for _, c := range cs {
		c.nc.Close()
	}
	t.fallback.CloseIdleConnections()
}

// h1Body is a response body read from its connection, which it returns to
// the pool when read to the end and closed.
type h1Body struct {
	t    *h1Transport
	p    *h1Pool
	c    *h1Conn
	body io.ReadCloser // http.ReadResponse's: closing it would read the rest
	ctx  context.Context
	stop func() bool // ends the cancellation's watch
	keep bool        // neither side said Connection: close

	mu     sync.Mutex
	eof    bool
	err    error // the first read error other than io.EOF
	closed bool
}

var errH1BodyClosed = errors.New("http: read on closed response body")

func (b *h1Body) Read(p []byte) (int, error) {
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return 0, errH1BodyClosed
	case b.err != nil:
		err := b.err
		b.mu.Unlock()
		return 0, err
	case b.eof:
		b.mu.Unlock()
		return 0, io.EOF
	}
	b.mu.Unlock()
	n, err := b.body.Read(p)
	if err != nil {
		b.mu.Lock()
		if err == io.EOF {
			b.eof = true
		} else {
			if cerr := b.ctx.Err(); cerr != nil {
				err = cerr
			} else if b.closed {
				err = errH1BodyClosed
			}
			b.err = err
		}
		b.mu.Unlock()
	}
	return n, err
}

// Close returns the connection to the pool after a body read to its end;
// otherwise, what is left unread is not read: the connection is closed,
// which also ends a Read blocked on it.
func (b *h1Body) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	clean := b.eof && b.err == nil
	b.mu.Unlock()
	if b.stop() && clean && b.keep {
		b.t.put(b.p, b.c)
	} else {
		b.c.nc.Close()
	}
	return nil
}
