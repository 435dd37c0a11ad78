package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"time"
)

// NewHTTPClient returns a keep-alive client for 127.0.0.1 that keeps up to
// conns idle connections, so each concurrent caller reuses its own.
func NewHTTPClient(conns int) *http.Client {
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        conns + 4,
		MaxIdleConnsPerHost: conns + 4,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}

// Session is one MCP session over Streamable HTTP, or, when Modern is set,
// a caller of the stateless 2026-07-28 revision (see modern.go). It is used
// by one goroutine at a time.
type Session struct {
	URL  string
	HTTP *http.Client
	// ID is the Mcp-Session-Id the server assigned ("" if it assigns none).
	ID string
	// Modern makes every request a stateless 2026-07-28 one: _meta and the
	// Mcp-* headers on each, no handshake, and every result checked for
	// resultType "complete" and the server's identity.
	Modern bool
	nextID int64
	// Bytes counts response body bytes read.
	Bytes int64
	// Header, if set, is added to every request the session sends (e.g.
	// Authorization for a gateway that checks credentials); it is not
	// modified.
	Header http.Header
}

// Open initializes a session: initialize, then notifications/initialized.
func Open(ctx context.Context, c *http.Client, url string) (*Session, error) {
	return OpenWithHeader(ctx, c, url, nil)
}

// OpenWithHeader is Open with hdr added to every request of the session,
// the handshake's included (see Session.Header).
func OpenWithHeader(ctx context.Context, c *http.Client, url string, hdr http.Header) (*Session, error) {
	s := &Session{URL: url, HTTP: c, Header: hdr}
	id := s.next()
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) +
		`,"method":"initialize","params":{"protocolVersion":"` + ProtocolVersion +
		`","capabilities":{},"clientInfo":{"name":"toolwire-bench","version":"1.0.0"}}}`)
	r, hdr, err := s.post(ctx, body, id, "initialize", "")
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("initialize: JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	s.ID = hdr.Get("Mcp-Session-Id")
	if err := s.notify(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	return s, nil
}

func (s *Session) next() int64 { s.nextID++; return s.nextID }

// newRequest builds a POST of body. method and name (the tool's, or "")
// are the request's, which 2026-07-28 repeats in headers.
func (s *Session) newRequest(ctx context.Context, body []byte, method, name string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range s.Header {
		req.Header[k] = v
	}
	switch {
	case s.Modern:
		req.Header.Set("Mcp-Protocol-Version", ModernVersion)
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	case s.ID != "":
		req.Header.Set("Mcp-Session-Id", s.ID)
		req.Header.Set("Mcp-Protocol-Version", ProtocolVersion)
	}
	return req, nil
}

func (s *Session) notify(ctx context.Context, body []byte) error {
	req, err := s.newRequest(ctx, body, "", "")
	if err != nil {
		return err
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("HTTP status %d, want 202", resp.StatusCode)
	}
	return nil
}

func (s *Session) post(ctx context.Context, body []byte, id int64, method, name string) (*reply, http.Header, error) {
	req, err := s.newRequest(ctx, body, method, name)
	if err != nil {
		return nil, nil, err
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.Bytes += int64(len(b))
	if err != nil {
		return nil, nil, fmt.Errorf("reading reply: %w", err)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK {
		return modernError(s.Modern, resp.StatusCode, mt, b, id)
	}
	var sse bool
	switch mt {
	case "application/json":
	case "text/event-stream":
		sse = true
	default:
		return nil, nil, fmt.Errorf("reply Content-Type %q", resp.Header.Get("Content-Type"))
	}
	r, err := parseReply(b, sse, id)
	return r, resp.Header, err
}

// modernError reads a reply whose HTTP status is not 200. Only 2026-07-28
// answers an error that way: a JSON-RPC error in a JSON body, with 400
// (invalid params, header mismatch, unsupported version) or 404 (unknown
// method). Anything else is an error of the exchange.
func modernError(modern bool, status int, mediaType string, body []byte, id int64) (*reply, http.Header, error) {
	if !modern || (status != http.StatusBadRequest && status != http.StatusNotFound) || mediaType != "application/json" {
		return nil, nil, fmt.Errorf("HTTP status %d: %.200q", status, body)
	}
	r, err := parseReply(body, false, id)
	if err != nil {
		return nil, nil, fmt.Errorf("HTTP status %d: %w", status, err)
	}
	if r.Error == nil {
		return nil, nil, fmt.Errorf("HTTP status %d with a result, not an error: %.200q", status, body)
	}
	return r, nil, nil
}

// callBody builds a 2025-11-25 tools/call request.
func callBody(id int64, tool string, args []byte) []byte { return appendCall(id, tool, args, "") }

// appendCall builds a tools/call request; meta, when set, is the params'
// "_meta" member (modernMeta), written after the arguments.
func appendCall(id int64, tool string, args []byte, meta string) []byte {
	b := make([]byte, 0, 96+len(meta)+len(tool)+len(args))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = strconv.AppendQuote(b, tool)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	if meta != "" {
		b = append(b, ',')
		b = append(b, meta...)
	}
	b = append(b, `}}`...)
	return b
}

// body builds the session's tools/call request: with the 2026-07-28
// _meta when Modern is set.
func (s *Session) body(id int64, tool string, args []byte) []byte {
	if s.Modern {
		return modernCallBody(id, tool, args)
	}
	return callBody(id, tool, args)
}

// Call runs one tools/call and checks its result (and, when Modern is set,
// that it is a complete 2026-07-28 result).
func (s *Session) Call(ctx context.Context, tool string, args []byte, check Check) error {
	id := s.next()
	r, _, err := s.post(ctx, s.body(id, tool, args), id, "tools/call", tool)
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	res, err := r.callResult()
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	if s.Modern {
		if err := CheckComplete(res); err != nil {
			return fmt.Errorf("tools/call %s: %w", tool, err)
		}
	}
	if err := check(res); err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	return nil
}

// CallRejected runs a tools/call whose arguments break the input schema and
// checks that it was refused, by an isError result or a JSON-RPC error.
func (s *Session) CallRejected(ctx context.Context, tool string, args []byte) error {
	id := s.next()
	r, _, err := s.post(ctx, s.body(id, tool, args), id, "tools/call", tool)
	if err != nil {
		return fmt.Errorf("tools/call %s (invalid): %w", tool, err)
	}
	if r.Error != nil {
		return nil
	}
	res, err := r.callResult()
	if err != nil {
		return fmt.Errorf("tools/call %s (invalid): %w", tool, err)
	}
	if err := CheckRejected(res); err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	return nil
}
