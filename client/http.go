package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// HTTP reaches a server over Streamable HTTP: one POST per message, replies
// as JSON or as an SSE stream. A legacy session's id is kept, a standalone
// GET stream is opened for server requests, and the session is DELETEd on
// Close. Redirects are followed only where they cannot leak: never for a
// POST, and for a GET or DELETE only within the endpoint's origin; any
// other redirect fails the exchange with a *TransportError naming it.
type HTTP struct {
	URL    string      // the MCP endpoint, http:// or https://
	Header http.Header // extra headers on every request (e.g. Authorization)
	// Client makes the requests; nil means a fresh *http.Client without an
	// overall timeout (streams are long; the client's timeouts apply). A
	// copy of it is used, whose CheckRedirect applies the redirect rule
	// above before the given one.
	Client *http.Client
	// Auth, when set, authorizes every request (POST, GET stream, DELETE)
	// and answers the server's 401 and 403 challenges (see HTTPAuth);
	// package oauth provides an OAuth 2.1 implementation. Without it a 401
	// or 403 fails the exchange with a *TransportError that keeps the status
	// and the WWW-Authenticate value.
	Auth HTTPAuth
	// SSEFallback follows the specification's backwards-compatibility
	// guidance for servers older than Streamable HTTP: when the server
	// refuses initialize with 400, 404 or 405, the client GETs URL, and
	// if that opens an event stream whose first event is "endpoint", goes
	// on over the 2024-11-05 HTTP+SSE transport (see SSE); else the
	// refusal is the error, as without it.
	SSEFallback bool
}

func (h *HTTP) dial(ctx context.Context, c *Client) (link, error) {
	u, err := url.Parse(h.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &TransportError{Op: "connect", Err: fmt.Errorf("%q is not an http:// or https:// URL", h.URL)}
	}
	// A copy, so that the redirect rule also holds for a caller's client
	// without changing it (see redirectError).
	hc := httpguard.Outbound{Base: h.Client, Redirects: httpguard.SameOriginNoPOSTRedirects}.Client()
	return &httpConn{c: c, url: u.String(), header: h.Header.Clone(), hc: hc, auth: h.Auth, fallback: h.SSEFallback}, nil
}

type httpConn struct {
	c      *Client
	url    string
	header http.Header
	hc     *http.Client
	auth   HTTPAuth
	// fallback: a refused initialize is an *initRefusedError, for the
	// client to try the 2024-11-05 HTTP+SSE transport (HTTP.SSEFallback).
	fallback bool

	mu      sync.Mutex
	session string
	// lost is the session the server rejected, from the moment the client
	// drops it to re-initialize until a new session has started. While it
	// is set the client has no session: the next request re-initializes
	// first, and a server that refuses that re-initialization as it
	// refused the session fails the request with CodeSessionInvalid.
	lost         string
	stopListen   context.CancelFunc
	listenExited chan struct{}
	// streams are the SSE replies being read, by the id of the request each
	// answers (see closeStream).
	streams map[jsonrpc.ID]*replyStream
}

func (h *httpConn) sessionID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.session
}

// lostSession is the session the server rejected and no new one has
// replaced yet, "" when there is none (see lost).
func (h *httpConn) lostSession() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// loseSession drops the session the server rejected (gone; "" keeps the
// one already lost) before a re-initialization.
func (h *httpConn) loseSession(gone string) {
	h.mu.Lock()
	if gone != "" {
		h.lost = gone
	}
	h.mu.Unlock()
	h.resetSession()
}

func (h *httpConn) resetSession() {
	h.mu.Lock()
	h.session = ""
	stop, exited := h.stopListen, h.listenExited
	h.stopListen, h.listenExited = nil, nil
	h.mu.Unlock()
	if stop != nil {
		stop()
		<-exited
	}
}

// newRequest builds a request with the headers every MCP exchange carries:
// MCP-Protocol-Version and Mcp-Session-Id (once there is a session) on all,
// and on 2026-07-28 requests Mcp-Method, Mcp-Name and the Mcp-Param-*
// headers, which the 2025 revisions do not define.
func (h *httpConn) newRequest(ctx context.Context, method string, body []byte, w *wireInfo) (*http.Request, string, error) {
	req, err := h.request(ctx, method, h.url, body, method)
	if err != nil {
		return nil, "", err
	}
	hdr := req.Header
	// The values share one array (a Header.Set each would allocate each);
	// every slice is capped at its one value, so an append elsewhere copies.
	vals := make([]string, 0, 6)
	set := func(k, v string) {
		vals = append(vals, v)
		hdr[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	if body != nil {
		set("Content-Type", "application/json")
		set("Accept", "application/json, text/event-stream")
	} else {
		set("Accept", "text/event-stream")
	}
	if w != nil {
		if w.version != "" {
			set(mcp.HeaderProtocolVersion, w.version)
		}
		if w.modern {
			if w.method != "" {
				set(mcp.HeaderMethod, w.method)
			}
			if w.name != "" {
				set(mcp.HeaderName, w.name)
			}
			for k, v := range w.params {
				hdr[http.CanonicalHeaderKey(k)] = []string{v}
			}
		}
	}
	sid := ""
	if w == nil || w.method != mcp.MethodInitialize {
		sid = h.sessionID()
		if sid != "" {
			set(mcp.HeaderSessionID, sid)
		}
	}
	return req, sid, nil
}

// postOp names a POST in errors, "POST tools/call".
func postOp(method string) string {
	switch method { // the common ones without building the string
	case mcp.MethodCallTool:
		return "POST " + mcp.MethodCallTool
	case mcp.MethodListTools:
		return "POST " + mcp.MethodListTools
	}
	return "POST " + method
}

// send POSTs a request and reads the reply on the caller's goroutine: a
// JSON response, or an SSE stream of notifications and server requests
// ending with the response, each handed to the client as it arrives. It
// returns once the response has been handed over, once the server has
// accepted the request to answer it on another stream (202), or with why
// the exchange failed. ctx, the caller's, bounds it all: when it ends, the
// stream is closed, which is the cancellation in 2026-07-28.
func (h *httpConn) send(ctx context.Context, req *jsonrpc.Request, w *wireInfo) error {
	body := encodeRequest(req)
	op := postOp(req.Method)
	hreq, sid, err := h.newRequest(ctx, http.MethodPost, body, w)
	if err != nil {
		return err
	}
	// rejected is the session a 404 (or a 400 naming the session) rejects:
	// the one the request carries, or, for the initialize that is to
	// replace a lost session, that one: a server that refuses the
	// re-initialization as it refused the session leaves it invalid.
	rejected := sid
	if req.Method == mcp.MethodInitialize {
		rejected = h.lostSession()
	}
	resp, err := h.do(hreq, op)
	if err != nil {
		return transportError(op, err)
	}
	defer resp.Body.Close()
	if req.Method == mcp.MethodInitialize && resp.StatusCode/100 == 2 {
		if s := resp.Header.Get(mcp.HeaderSessionID); s != "" {
			h.mu.Lock()
			h.session = s
			h.mu.Unlock()
		}
	}
	switch {
	case h.fallback && req.Method == mcp.MethodInitialize && rejected == "" && refusesInitialize(resp.StatusCode):
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return &initRefusedError{op: op, status: resp.StatusCode, body: body, id: req.ID}
	case resp.StatusCode == http.StatusNotFound && rejected != "":
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return &sessionGoneError{id: rejected, status: resp.StatusCode}
	case resp.StatusCode == http.StatusBadRequest && rejected != "":
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if rejectsSession(body) {
			return &sessionGoneError{id: rejected, status: resp.StatusCode}
		}
		return h.errorBody(op, resp.StatusCode, body, req.ID)
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return nil // the response will come on another stream
	case resp.StatusCode >= 400:
		return h.errorStatus(op, resp, req.ID)
	case resp.StatusCode/100 == 3:
		return redirectError(op, resp)
	case resp.StatusCode/100 != 2:
		return &TransportError{Op: op, StatusCode: resp.StatusCode, Err: errors.New("unexpected HTTP status")}
	}
	switch mediaType(resp) {
	case "application/json":
		return h.readJSON(op, resp, req.ID)
	case "text/event-stream":
		s := h.trackStream(req.ID, resp.Body)
		defer h.untrackStream(req.ID)
		if w.call != nil && w.call.Answered() {
			return nil // answered on another stream before this one opened
		}
		return h.readStream(ctx, op, resp.Body, req.ID, w, s)
	default:
		return &TransportError{Op: op, StatusCode: resp.StatusCode,
			Err: fmt.Errorf("unexpected Content-Type %q (want application/json or text/event-stream)", resp.Header.Get("Content-Type"))}
	}
}

// encodeRequest renders a request as jsonrpc.Encode does, but without
// passing it as an interface, which would put every request on the heap.
func encodeRequest(req *jsonrpc.Request) []byte {
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"method":"","params":}`)+20+len(req.Method)+len(req.Params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if req.ID.IsString() {
		b = appendJSONString(b, req.ID.Str())
	} else {
		b = strconv.AppendInt(b, req.ID.Int(), 10) // the client's ids: integers
	}
	b = append(b, `,"method":`...)
	b = appendJSONString(b, req.Method)
	if len(req.Params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, req.Params...)
	}
	return append(b, '}')
}

// replyStream is an SSE reply being read on its caller's goroutine.
type replyStream struct {
	body   io.Closer // the stream read now: the POST's, then a resumption's
	closed bool      // the response came on another stream
}

func (h *httpConn) trackStream(id jsonrpc.ID, body io.Closer) *replyStream {
	s := &replyStream{body: body}
	h.mu.Lock()
	if h.streams == nil {
		h.streams = map[jsonrpc.ID]*replyStream{}
	}
	h.streams[id] = s
	h.mu.Unlock()
	return s
}

func (h *httpConn) untrackStream(id jsonrpc.ID) {
	h.mu.Lock()
	delete(h.streams, id)
	h.mu.Unlock()
}

// resumed makes body the stream s reads; false when the response came on
// another stream meanwhile (body is then closed).
func (h *httpConn) resumed(s *replyStream, body io.Closer) bool {
	h.mu.Lock()
	closed := s.closed
	if !closed {
		s.body = body
	}
	h.mu.Unlock()
	if closed {
		body.Close()
	}
	return !closed
}

// closeStream closes the reply stream of the request id, if one is being
// read: the response came on another stream, and the reader, on the
// caller's goroutine, must not wait for this one to end.
func (h *httpConn) closeStream(id jsonrpc.ID) {
	h.mu.Lock()
	s := h.streams[id]
	var body io.Closer
	if s != nil && !s.closed {
		s.closed, body = true, s.body
	}
	h.mu.Unlock()
	if body != nil {
		body.Close()
	}
}

// deliver hands a message read from an SSE stream to the client. A
// response to a request other than the one the stream answers (own, whose
// context is ctx; none for the standalone stream) also ends that
// request's own reply stream.
func (h *httpConn) deliver(ctx context.Context, m jsonrpc.Message, own jsonrpc.ID) {
	h.c.dispatchFor(ctx, m, own)
	if r, ok := m.(*jsonrpc.Response); ok && r.ID.IsValid() && r.ID != own {
		h.closeStream(r.ID)
	}
}

// rejectsSession says whether the body of a 400 answering a request that
// carried a session id is the answer servers built on the TypeScript SDK's
// Express example (server-everything among them) give for a session they
// do not know: JSON-RPC error -32000 whose message names the session ("Bad
// Request: No valid session ID provided"). The Streamable HTTP transport
// says 404 for that; these servers' 400 means the same, so that a client
// of a restarted server re-initializes rather than failing for good. Other
// 400s (a bad header, invalid params) are errors of the request itself.
func rejectsSession(body []byte) bool {
	var r struct {
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if wirejson.Unmarshal(body, &r) != nil || r.Error == nil {
		return false
	}
	return r.Error.Code == jsonrpc.CodeServerError && strings.Contains(strings.ToLower(r.Error.Message), "session")
}

// errorStatus turns an HTTP error into the JSON-RPC error its body carries
// (e.g. 400 with -32022), or else a transport error.
func (h *httpConn) errorStatus(op string, resp *http.Response, id jsonrpc.ID) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return h.errorBody(op, resp.StatusCode, body, id)
}

// errorBody is errorStatus with the body read.
func (h *httpConn) errorBody(op string, status int, body []byte, id jsonrpc.ID) error {
	if msg, _, derr := jsonrpc.Decode(body); derr == nil {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
			r.ID = id
			h.c.dispatch(r)
			return nil
		}
	}
	return &TransportError{Op: op, StatusCode: status, Err: statusError(status, body)}
}

// readJSON reads a single-message JSON reply. One whose declared length is
// over the limit is refused before any of it is read.
func (h *httpConn) readJSON(op string, resp *http.Response, id jsonrpc.ID) error {
	max := h.c.cfg.limits.MaxMessageBytes
	if resp.ContentLength > int64(max) {
		return &TransportError{Op: op, Err: fmt.Errorf("the response (Content-Length %d) exceeds the %d-byte limit on message size", resp.ContentLength, max)}
	}
	data, err := readBody(resp.Body, resp.ContentLength, max)
	if err != nil {
		return &TransportError{Op: op, Err: fmt.Errorf("reading the response: %w", err)}
	}
	if len(data) > max {
		return &TransportError{Op: op, Err: fmt.Errorf("the response exceeds the %d-byte limit on message size", max)}
	}
	msg, _, derr := jsonrpc.Decode(data)
	if derr != nil {
		return &ProtocolError{Op: op, Reason: "malformed JSON response", Err: derr}
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return &ProtocolError{Op: op, Reason: "the JSON reply is not a response"}
	}
	if !r.ID.IsValid() {
		r.ID = id // one reply per POST: it can only be ours
	}
	if r.ID != id {
		return &ProtocolError{Op: op, Reason: fmt.Sprintf("the reply answers request %s, not %s", r.ID, id)}
	}
	h.c.dispatch(r)
	return nil
}

// readBody reads a body of size bytes (-1: unknown) into one buffer, at
// most max+1 bytes of it (the caller refuses a body longer than max). The
// buffer at most doubles as it grows, never past max+1 bytes, so that a
// body read in full has allocated at most twice its size.
func readBody(body io.Reader, size int64, max int) ([]byte, error) {
	n := 512
	if size >= 0 && size <= int64(max) {
		n = int(size) + 1 // the extra byte sees the end without growing
	}
	data := make([]byte, 0, min(n, max+1))
	for {
		if len(data) == cap(data) {
			data = grow(data, 1, max+1)
		}
		m, err := body.Read(data[len(data):min(cap(data), max+1)])
		data = data[:len(data)+m]
		switch {
		case len(data) > max || err == io.EOF:
			return data, nil
		case err != nil:
			return nil, err
		}
	}
}

// readStream reads an SSE reply: any number of notifications and server
// requests, then the response. A legacy stream that ends early is resumed
// with GET and Last-Event-ID after the server's retry delay. s tracks the
// stream read, for closeStream.
func (h *httpConn) readStream(ctx context.Context, op string, body io.ReadCloser, id jsonrpc.ID, w *wireInfo, s *replyStream) error {
	sr := newSSEReader(body, h.c.cfg.limits.MaxMessageBytes)
	for resumes := 0; ; resumes++ {
		done, err := h.consume(ctx, op, sr, id)
		if done || err != nil {
			return err
		}
		if w.call != nil && w.call.Answered() {
			return nil // answered on another stream
		}
		if ctx.Err() != nil {
			return &TransportError{Op: op, Err: ctxErr(ctx)}
		}
		if w.modern || sr.lastID == "" || h.c.cfg.limits.MaxResumes < 0 || resumes >= h.c.cfg.limits.MaxResumes {
			why := "the response stream ended before the response"
			if resumes > 0 {
				why += fmt.Sprintf(" (after %d resumptions)", resumes)
			}
			return &TransportError{Op: op, Err: errors.New(why)}
		}
		if backoff.Sleep(ctx, h.reconnectDelay(sr.retry, sr.hasRetry, resumes)) != nil {
			return &TransportError{Op: op, Err: ctxErr(ctx)}
		}
		if w.call != nil && w.call.Answered() {
			return nil
		}
		resp, err := h.get(ctx, sr.lastID, w.version)
		if err != nil {
			return transportError("GET (resume "+op+")", err)
		}
		if resp.StatusCode/100 == 3 {
			resp.Body.Close()
			return redirectError("GET (resume "+op+")", resp)
		}
		if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
			resp.Body.Close()
			return &TransportError{Op: "GET (resume " + op + ")", StatusCode: resp.StatusCode, Err: errors.New("the server did not resume the stream")}
		}
		if !h.resumed(s, resp.Body) {
			return nil // answered on another stream
		}
		prev := sr
		sr = newSSEReader(resp.Body, h.c.cfg.limits.MaxMessageBytes)
		sr.lastID, sr.retry, sr.hasRetry = prev.lastID, prev.retry, prev.hasRetry
		defer resp.Body.Close()
	}
}

// consume dispatches events until the response to id (true) or the end of
// the stream (false).
func (h *httpConn) consume(ctx context.Context, op string, sr *sseReader, id jsonrpc.ID) (bool, error) {
	for {
		ev, err := sr.next()
		if err != nil {
			var tl *errSSETooLarge
			if errors.As(err, &tl) {
				return false, &TransportError{Op: op, Err: fmt.Errorf("an SSE event exceeds the %d-byte limit on message size", tl.limit)}
			}
			if ctx.Err() != nil {
				return false, &TransportError{Op: op, Err: ctxErr(ctx)}
			}
			if !errors.Is(err, io.EOF) {
				h.c.cfg.logger.Debug("SSE stream broke", "op", op, "error", err)
			}
			return false, nil
		}
		if ev.Event != "" && ev.Event != "message" {
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		msg, _, derr := jsonrpc.Decode(ev.Data)
		if derr != nil {
			return false, &ProtocolError{Op: op, Reason: "malformed SSE event", Err: derr}
		}
		h.deliver(ctx, msg, id)
		if r, ok := msg.(*jsonrpc.Response); ok && r.ID == id {
			return true, nil
		}
	}
}

// get opens a GET stream, resuming after lastID when it is set.
func (h *httpConn) get(ctx context.Context, lastID, version string) (*http.Response, error) {
	req, _, err := h.newRequest(ctx, http.MethodGet, nil, &wireInfo{version: version})
	if err != nil {
		return nil, err
	}
	if lastID != "" {
		req.Header.Set(mcp.HeaderLastEventID, lastID)
	}
	return h.do(req, "GET")
}

func (h *httpConn) postMessage(ctx context.Context, m jsonrpc.Message, w *wireInfo) error {
	body, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	op := "POST"
	if w != nil && w.method != "" {
		op += " " + w.method
	}
	req, _, err := h.newRequest(ctx, http.MethodPost, body, w)
	if err != nil {
		return err
	}
	status, reply, err := h.post(req, op)
	if err != nil {
		return err
	}
	if status >= 400 {
		return &TransportError{Op: op, StatusCode: status, Err: statusError(status, reply)}
	}
	return nil
}

// notify POSTs a notification; whatever body comes back is ignored.
func (h *httpConn) notify(ctx context.Context, n *jsonrpc.Notification, w *wireInfo) error {
	return h.postMessage(ctx, n, w)
}

// reply POSTs the answer to a server request.
func (h *httpConn) reply(ctx context.Context, r *jsonrpc.Response) error {
	st := h.c.state()
	return h.postMessage(ctx, r, &wireInfo{version: st.version})
}

// sessionStarted opens the standalone GET stream on which a legacy server
// sends requests and notifications not tied to a call, and waits briefly
// until the server has accepted (or refused) it.
func (h *httpConn) sessionStarted(ctx context.Context) {
	lctx, cancel := context.WithCancel(h.c.bg)
	exited := make(chan struct{})
	ready := make(chan struct{})
	h.mu.Lock()
	h.lost = "" // a new session has started
	h.stopListen, h.listenExited = cancel, exited
	h.mu.Unlock()
	go func() {
		defer close(exited)
		h.listen(lctx, ready)
	}()
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
	case <-ctx.Done():
	}
}

// reconnectDelay is the wait before reopening an SSE stream for the
// attempt-th time in a row (0 first): the server's retry (or
// DefaultResumeDelay), at least the floor, doubled per attempt up to the
// ceiling, or up to the server's retry when that is larger (see
// Limits.MaxReconnectDelay).
func (h *httpConn) reconnectDelay(retry time.Duration, hasRetry bool, attempt int) time.Duration {
	base := DefaultResumeDelay
	if hasRetry {
		base = retry
	}
	base = max(base, h.c.cfg.limits.MinReconnectDelay)
	return backoff.Policy{Initial: base, Max: max(h.c.cfg.limits.MaxReconnectDelay, base)}.Base(attempt + 1)
}

// listen keeps the standalone GET stream open, reconnecting with
// Last-Event-ID, until the session ends or the server refuses it. It gives
// up after three streams in a row that failed or carried no message; every
// reconnection waits longer than the last (reconnectDelay), and the wait
// starts over only after a stream that stayed open for the ceiling, so a
// server that sends one event and closes cannot make the client spin.
func (h *httpConn) listen(ctx context.Context, ready chan struct{}) {
	var once sync.Once
	signal := func() { once.Do(func() { close(ready) }) }
	defer signal()
	lastID, failures, attempt := "", 0, 0
	var retry time.Duration
	hasRetry := false
	for ctx.Err() == nil {
		opened := time.Now()
		resp, err := h.get(ctx, lastID, h.c.state().version)
		if err != nil {
			signal()
			var te *TransportError
			if errors.As(err, &te) && authStatus(te.StatusCode) {
				h.c.cfg.logger.Debug("the server refused the standalone GET stream", "status", te.StatusCode)
				return
			}
			h.c.cfg.logger.Debug("standalone GET stream failed", "error", err)
			failures++
		} else if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
			resp.Body.Close()
			signal()
			if resp.StatusCode/100 == 3 {
				h.c.cfg.logger.Warn("not opening the standalone GET stream", "error", redirectError("GET", resp))
			} else {
				h.c.cfg.logger.Debug("server offers no standalone GET stream", "status", resp.StatusCode)
			}
			return
		} else {
			signal()
			sr := newSSEReader(resp.Body, h.c.cfg.limits.MaxMessageBytes)
			sr.lastID = lastID
			events := 0
			for {
				ev, err := sr.next()
				if err != nil {
					break
				}
				if (ev.Event != "" && ev.Event != "message") || len(bytes.TrimSpace(ev.Data)) == 0 {
					continue
				}
				msg, _, derr := jsonrpc.Decode(ev.Data)
				if derr != nil {
					h.c.cfg.logger.Warn("ignoring a malformed event on the standalone stream", "error", derr)
					continue
				}
				events++
				h.deliver(context.Background(), msg, jsonrpc.ID{})
			}
			resp.Body.Close()
			lastID = sr.lastID
			if sr.hasRetry {
				retry, hasRetry = sr.retry, true
			}
			if events > 0 {
				failures = 0
			} else {
				failures++
			}
			if time.Since(opened) >= h.c.cfg.limits.MaxReconnectDelay {
				attempt = 0 // a stream that lasted: the server is healthy
			}
		}
		if failures >= 3 {
			return
		}
		d := h.reconnectDelay(retry, hasRetry, attempt)
		attempt++
		if backoff.Sleep(ctx, d) != nil {
			return
		}
	}
}

// close stops the standalone stream and DELETEs the session.
func (h *httpConn) close() error {
	sid := h.sessionID()
	h.resetSession()
	if sid == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := h.request(ctx, http.MethodDelete, h.url, nil, http.MethodDelete)
	if err != nil {
		return nil
	}
	req.Header.Set(mcp.HeaderSessionID, sid)
	if v := h.c.state().version; v != "" {
		req.Header.Set(mcp.HeaderProtocolVersion, v)
	}
	// Credentials, but no challenge: a refused DELETE is not worth an
	// authorization flow while closing.
	if h.auth != nil {
		if err := h.auth.Authorize(req); err != nil {
			h.c.cfg.logger.Debug("DELETE of the session not authorized", "error", err)
			return nil
		}
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		h.c.cfg.logger.Debug("DELETE of the session failed", "error", err)
		return nil
	}
	resp.Body.Close()
	return nil
}
