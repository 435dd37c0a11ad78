package floorproxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// H1 is the bare reverse proxy of Handler with the upstream exchange done
// the way toolwire's gateway does it (gateway/h1.go), not by
// net/http.Transport: the request written and the response read on the
// handler's own goroutine, over a pool of kept-alive HTTP/1.1
// connections, with no writer and reader goroutine per connection to
// hand off to. It is the floor of an HTTP gateway built like toolwire's.
type H1 struct {
	addr, host, path string
	pool             chan *h1Conn
}

type h1Conn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

// NewH1 returns an H1 for the http:// URL upstream that keeps up to conns
// idle connections to it.
func NewH1(upstream string, conns int) (*H1, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return &H1{addr: u.Host, host: u.Host, path: p, pool: make(chan *h1Conn, conns)}, nil
}

func (h *H1) get() (*h1Conn, bool, error) {
	select {
	case c := <-h.pool:
		return c, true, nil
	default:
	}
	c, err := net.DialTimeout("tcp", h.addr, 5*time.Second)
	if err != nil {
		return nil, false, err
	}
	return &h1Conn{c: c, br: bufio.NewReaderSize(c, 8<<10), bw: bufio.NewWriterSize(c, 8<<10)}, false, nil
}

func (h *H1) put(c *h1Conn) {
	select {
	case h.pool <- c:
	default:
		c.c.Close()
	}
}

// exchange writes the request on c and reads the response's head.
func (h *H1) exchange(c *h1Conn, r *http.Request, body []byte) (*http.Response, error) {
	w := c.bw
	w.WriteString(r.Method)
	w.WriteString(" ")
	w.WriteString(h.path)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(h.host)
	w.WriteString("\r\n")
	for _, k := range requestHeaders {
		for _, v := range r.Header[k] {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	w.WriteString("Content-Length: ")
	w.WriteString(strconv.Itoa(len(body)))
	w.WriteString("\r\n\r\n")
	w.Write(body)
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return http.ReadResponse(c.br, r)
}

func (h *H1) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		body = b
	}
	var (
		c    *h1Conn
		resp *http.Response
		err  error
	)
	// A pooled connection the upstream closed meanwhile fails at once:
	// then once more on a new one.
	for range 2 {
		var reused bool
		c, reused, err = h.get()
		if err != nil {
			break
		}
		resp, err = h.exchange(c, r, body)
		if err == nil {
			break
		}
		c.c.Close()
		if !reused {
			break
		}
	}
	if err != nil {
		http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	wh := w.Header()
	for k, v := range resp.Header {
		if !hopHeaders[k] {
			wh[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	var dst io.Writer = w
	if resp.Header.Get("Content-Type") == "text/event-stream" && resp.ContentLength < 0 {
		dst = flushWriter{w, http.NewResponseController(w)}
	}
	_, cerr := io.Copy(dst, resp.Body)
	// The body read to its end leaves the connection at the next response.
	var probe [1]byte
	if n, _ := resp.Body.Read(probe[:]); cerr != nil || n != 0 || resp.Close {
		resp.Body.Close()
		c.c.Close()
		return
	}
	resp.Body.Close()
	h.put(c)
}
