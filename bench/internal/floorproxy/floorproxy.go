// Package floorproxy is the least an HTTP gateway in front of an MCP
// server could do: a bare reverse proxy with no MCP logic at all. Each
// request's body is forwarded as bytes to one upstream URL over a
// kept-alive HTTP/1.1 client, with the headers Streamable HTTP uses
// (both eras: 2025-11-25 sessions and the stateless 2026-07-28 revision),
// and the upstream's reply is copied back as it comes. It parses no
// JSON, renames no tool and checks nothing, so what it adds to a call
// over calling the upstream directly is the cost of the extra loopback
// hop itself: the floor under any gateway's overhead on the same machine.
package floorproxy

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"time"
)

// requestHeaders are the request headers forwarded upstream: those of
// Streamable HTTP in both eras (2026-07-28 repeats the method and the
// tool's name in Mcp-Method and Mcp-Name) and credentials.
var requestHeaders = []string{
	"Content-Type",
	"Accept",
	"Mcp-Session-Id",
	"Mcp-Protocol-Version",
	"Mcp-Method",
	"Mcp-Name",
	"Last-Event-Id",
	"Authorization",
}

// hopHeaders are the response headers not copied back: those of the
// connection, not of the reply (net/http sets its own).
var hopHeaders = map[string]bool{
	"Connection":        true,
	"Keep-Alive":        true,
	"Transfer-Encoding": true,
	"Trailer":           true,
	"Upgrade":           true,
	"Proxy-Connection":  true,
	"Te":                true,
}

// NewTransport is the upstream client's transport: HTTP/1.1, kept-alive,
// up to conns idle connections to the one upstream, no compression.
func NewTransport(conns int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// Handler forwards every request, whatever its path, to upstream.
type Handler struct {
	Upstream string
	Client   *http.Client
}

// New returns a Handler for upstream with a client that keeps up to conns
// idle connections to it.
func New(upstream string, conns int) *Handler {
	return &Handler{Upstream: upstream, Client: &http.Client{Transport: NewTransport(conns)}}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The body read whole (a few hundred bytes here), so that the
	// transport can send it again on a kept-alive connection that turns
	// out to be closed (a streamed body could not be retried).
	var body io.Reader = http.NoBody
	if r.Body != nil && r.ContentLength != 0 {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, h.Upstream, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for _, k := range requestHeaders {
		if v, ok := r.Header[k]; ok {
			req.Header[k] = v
		}
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	wh := w.Header()
	for k, v := range resp.Header {
		if !hopHeaders[k] {
			wh[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	if resp.Header.Get("Content-Type") == "text/event-stream" && resp.ContentLength < 0 {
		// A stream: each piece passed on as it arrives.
		_, _ = io.Copy(flushWriter{w, http.NewResponseController(w)}, resp.Body)
		return
	}
	_, _ = io.Copy(w, resp.Body)
}

// flushWriter flushes after every write.
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}

// Relay is a lower floor still, below HTTP: a TCP relay that pairs each
// accepted connection with a connection of its own to upstream (host:port)
// and copies bytes both ways (splice(2) on Linux) until either side
// closes. It parses nothing, not even HTTP, so a keep-alive client's
// requests, sessions included, pass through as they are; what it adds to a
// call is the least any proxy in a process of its own can add: one more
// pair of socket reads and writes and the wake-ups they cost. It returns
// only when accepting fails, with that error.
func Relay(ln net.Listener, upstream string) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go relay(c, upstream)
	}
}

func relay(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(c, u)
		// The upstream closed: so does the client's side.
		_ = c.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(u, c)
	_ = u.(*net.TCPConn).CloseWrite()
	<-done
}
