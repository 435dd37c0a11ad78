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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
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
	if !testwait.Concurrently(t, callers, rounds, func(c, r int) error {
		msg := fmt.Sprintf("c%dr%d", c, r)
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(msg))
		resp, err := tr2.RoundTrip(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && string(b) != "echo:"+msg {
			err = fmt.Errorf("body %q, want %q", b, "echo:"+msg)
		}
		return err
	}) {
		return
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
	addr := testenv.FreeAddr(t)
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
