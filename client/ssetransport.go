package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/backoff"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// SSE reaches a server over the HTTP+SSE transport of protocol version
// 2024-11-05, which servers and gateways deployed before Streamable HTTP
// still speak: the client GETs an event stream at URL, whose first event,
// "endpoint", names the URL to POST messages to; every message from the
// server (responses, notifications, server requests) comes on that one
// stream. The endpoint is resolved against URL and must be on URL's origin
// (scheme, host and port), so a server cannot point the client's messages,
// and its credentials, elsewhere. The stream is the session: when it ends,
// the requests waiting for a response on it fail with a *TransportError
// (none is sent again), and the client opens a new stream and initializes
// again, in the background and before the next request. Only the legacy
// protocol versions travel this way: connecting with
// WithEra(mcp.EraModern) fails with an *EraError, and mcp.EraAuto
// initializes without probing. Done is closed only by Close, as over HTTP.
//
// The limits are those of HTTP: Limits.MaxMessageBytes bounds one event
// (a larger one ends the stream, failing the requests waiting on it),
// Limits.ProbeTimeout bounds the wait for the endpoint event, and
// Limits.MinReconnectDelay and MaxReconnectDelay space the reconnections.
// HTTP.SSEFallback reaches such a server from a Streamable HTTP
// transport when it refuses initialize.
type SSE struct {
	URL    string      // the event stream, http:// or https://
	Header http.Header // extra headers on every request (e.g. Authorization)
	// Client makes the requests, as HTTP.Client does (redirects of the
	// GET are followed within URL's origin only, a POST's never).
	Client *http.Client
	// Auth, when set, authorizes every request and answers 401 and 403
	// challenges, as HTTP.Auth does.
	Auth HTTPAuth
}

func (s *SSE) dial(ctx context.Context, c *Client) (link, error) {
	ln, err := (&HTTP{URL: s.URL, Header: s.Header, Client: s.Client, Auth: s.Auth}).dial(ctx, c)
	if err != nil {
		return nil, err
	}
	return newSSEConn(ln.(*httpConn)), nil
}

// sseConn is a session of the 2024-11-05 HTTP+SSE transport: one GET
// stream, read on a goroutine of its own, and a POST per message to the
// endpoint it named.
type sseConn struct {
	c *Client
	// h makes the requests: the stream's URL, the headers, the HTTP
	// client and the authorization (its do), shared with Streamable HTTP.
	h    *httpConn
	base *url.URL // the stream's URL, which the endpoint is resolved against

	openMu sync.Mutex // one stream opened at a time

	mu       sync.Mutex
	endpoint string             // where messages go; "" while no stream is open
	lost     string             // the endpoint of a stream that ended, until a new session starts
	stop     context.CancelFunc // ends the open stream
	exited   chan struct{}      // closed when the open stream's reader returns
	started  bool               // a session has been initialized on some stream
	closed   bool
}

func newSSEConn(h *httpConn) *sseConn {
	base, _ := url.Parse(h.url) // parsed by dial already
	return &sseConn{c: h.c, h: h, base: base}
}

// legacyOnly marks a transport that carries the legacy protocol versions
// only (negotiate initializes without probing).
func (s *sseConn) legacyOnly() {}

// errNoEndpoint is the cause when the endpoint event does not come in time.
var errNoEndpoint = errors.New("no endpoint event")

// open GETs the event stream and waits for its endpoint event, for at most
// Limits.ProbeTimeout and while ctx lasts; the stream then lives until it
// ends or the session is dropped, and is read on its own goroutine.
func (s *sseConn) open(ctx context.Context) error {
	const op = "GET (event stream)"
	sctx, stop := context.WithCancel(s.c.bg)
	wait, cancelWait := context.WithTimeoutCause(ctx, s.c.cfg.limits.ProbeTimeout, fmt.Errorf("%w within %v", errNoEndpoint, s.c.cfg.limits.ProbeTimeout))
	defer cancelWait()
	unbind := context.AfterFunc(wait, stop)
	fail := func(err error) error {
		unbind()
		stop()
		if wait.Err() != nil {
			return &TransportError{Op: op, Err: ctxErr(wait)}
		}
		return err
	}
	req, _, err := s.h.newRequest(sctx, http.MethodGet, nil, nil)
	if err != nil {
		return fail(err)
	}
	resp, err := s.h.do(req, op)
	if err != nil {
		return fail(transportError(op, err))
	}
	body := resp.Body
	switch {
	case resp.StatusCode/100 == 3:
		body.Close()
		return fail(redirectError(op, resp))
	case resp.StatusCode != http.StatusOK:
		reply, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		body.Close()
		return fail(&TransportError{Op: op, StatusCode: resp.StatusCode, Err: statusError(resp.StatusCode, reply)})
	case mediaType(resp) != "text/event-stream":
		body.Close()
		return fail(&TransportError{Op: op, StatusCode: resp.StatusCode,
			Err: fmt.Errorf("unexpected Content-Type %q (want text/event-stream)", resp.Header.Get("Content-Type"))})
	}
	sr := newSSEReader(body, s.c.cfg.limits.MaxMessageBytes)
	var ep string
	for ep == "" {
		ev, err := sr.next()
		if err != nil {
			body.Close()
			var tl *errSSETooLarge
			if errors.As(err, &tl) {
				return fail(&TransportError{Op: op, Err: fmt.Errorf("an SSE event exceeds the %d-byte limit on message size", tl.limit)})
			}
			return fail(&TransportError{Op: op, Err: errors.New("the event stream ended before its endpoint event")})
		}
		if ev.Event != "endpoint" {
			// The transport sends the endpoint first; anything before it
			// answers nothing of ours.
			s.c.cfg.logger.Debug("ignoring an SSE event before the endpoint event", "event", ev.Event)
			continue
		}
		if ep, err = resolveEndpoint(s.base, ev.Data); err != nil {
			body.Close()
			return fail(&TransportError{Op: op, Err: err})
		}
	}
	if !unbind() { // the wait ended as the endpoint came: the stream is stopped
		body.Close()
		return &TransportError{Op: op, Err: ctxErr(wait)}
	}
	exited := make(chan struct{})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		stop()
		body.Close()
		return &TransportError{Op: op, Err: errors.New("client closed")}
	}
	s.endpoint, s.stop, s.exited = ep, stop, exited
	s.mu.Unlock()
	go s.read(sr, body, ep, exited)
	return nil
}

// resolveEndpoint resolves an endpoint event's data (a relative or
// absolute URL) against the stream's URL, refusing one on another origin:
// the client's messages, and the credentials they carry, go to the origin
// it was given and nowhere else.
func resolveEndpoint(base *url.URL, data []byte) (string, error) {
	raw := strings.TrimSpace(string(data))
	if raw == "" {
		return "", errors.New("the endpoint event names no URL")
	}
	ref, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("the endpoint event's URL is malformed: %w", err)
	}
	u := base.ResolveReference(ref)
	if !httpguard.SameOrigin(u, base) {
		return "", fmt.Errorf("the endpoint %q is not on the stream's origin %s://%s: refused", truncate([]byte(raw), 200), base.Scheme, base.Host)
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// read dispatches the stream's messages until it ends; then, unless the
// client ended it, the session is lost: the requests waiting on it fail
// and a new session is started in the background.
func (s *sseConn) read(sr *sseReader, body io.ReadCloser, ep string, exited chan struct{}) {
	defer close(exited)
	var why error
	for {
		ev, err := sr.next()
		if err != nil {
			var tl *errSSETooLarge
			switch {
			case errors.As(err, &tl):
				why = &TransportError{Op: "SSE stream", Err: fmt.Errorf("an SSE event exceeds the %d-byte limit on message size; the stream, and the session with it, is dropped", tl.limit)}
			case errors.Is(err, io.EOF):
				why = &TransportError{Op: "SSE stream", Err: errors.New("the event stream ended, and the session with it")}
			default:
				why = &TransportError{Op: "SSE stream", Err: fmt.Errorf("the event stream broke, and the session with it: %w", err)}
			}
			break
		}
		if ev.Event != "" && ev.Event != "message" {
			if ev.Event == "endpoint" {
				s.c.cfg.logger.Debug("ignoring a second endpoint event", "data", truncate(ev.Data, 200))
			}
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		m, _, derr := jsonrpc.Decode(ev.Data)
		if derr != nil {
			perr := &ProtocolError{Op: "SSE stream", Reason: "malformed message from the server", Err: derr}
			s.c.cfg.logger.Warn("malformed message from the server", "error", derr, "message", truncate(ev.Data, 200))
			if id := responseIDOf(ev.Data); !id.IsValid() || !s.c.peer.Fail(id, perr) {
				s.c.peer.FailAll(perr)
			}
			continue
		}
		s.c.dispatch(m)
	}
	body.Close()
	s.mu.Lock()
	ours := s.endpoint == ep && !s.closed
	if ours {
		s.endpoint, s.lost, s.stop = "", ep, nil
	}
	started := s.started
	s.mu.Unlock()
	if !ours {
		return // the client dropped it
	}
	s.c.cfg.logger.Debug("SSE stream lost", "endpoint", ep, "error", why)
	// The responses to the requests waiting on it would have come on it:
	// they fail, and none is sent again (the server may have run it).
	s.c.peer.FailAll(why)
	if started {
		go s.reconnect(ep, sr.retry, sr.hasRetry)
	}
}

// reconnect replaces the session of the stream that ended (gone): a new
// stream and initialize, after a wait that starts at the stream's retry
// field and grows with each attempt (reconnectDelay). It gives up after
// three failures in a row; the next request then tries again.
func (s *sseConn) reconnect(gone string, retry time.Duration, hasRetry bool) {
	for attempt := 0; attempt < 3; attempt++ {
		if backoff.Sleep(s.c.bg, s.h.reconnectDelay(retry, hasRetry, attempt)) != nil {
			return
		}
		if s.lostSession() != gone {
			return // replaced already, or dropped by the client
		}
		ctx, cancel := context.WithTimeout(s.c.bg, s.c.cfg.limits.ProbeTimeout+max(s.c.cfg.timeout, 0))
		err := s.c.reinitialize(ctx, gone)
		cancel()
		if err == nil {
			return
		}
		s.c.cfg.logger.Debug("reconnecting the SSE stream failed", "attempt", attempt+1, "error", err)
	}
}

// ready returns the endpoint of the open stream. With none open, an
// initialize opens one; any other message fails as a lost session would
// (the client re-initializes first).
func (s *sseConn) ready(ctx context.Context, method string) (string, error) {
	s.mu.Lock()
	ep, lost, closed := s.endpoint, s.lost, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return "", &TransportError{Op: "POST " + method, Err: errors.New("client closed")}
	case ep != "":
		return ep, nil
	case method != mcp.MethodInitialize && lost != "":
		return "", &sessionGoneError{id: lost}
	case method != mcp.MethodInitialize:
		return "", &TransportError{Op: "POST " + method, Err: errors.New("no event stream is open")}
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	s.mu.Lock()
	ep = s.endpoint
	s.mu.Unlock()
	if ep != "" {
		return ep, nil
	}
	if err := s.open(ctx); err != nil {
		return "", err
	}
	return s.sessionID(), nil
}

// post sends one message to the endpoint. The server answers a request on
// the stream; the POST's own reply (202 Accepted, usually) carries nothing.
func (s *sseConn) post(ctx context.Context, m jsonrpc.Message, method string, id jsonrpc.ID) error {
	ep, err := s.ready(ctx, method)
	if err != nil {
		return err
	}
	var body []byte
	if req, ok := m.(*jsonrpc.Request); ok {
		body = encodeRequest(req)
	} else if body, err = jsonrpc.Encode(m); err != nil {
		return err
	}
	op := "POST"
	if method != "" {
		op = postOp(method)
	}
	req, err := s.h.request(ctx, http.MethodPost, ep, body, op)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	status, reply, err := s.h.post(req, op)
	if err != nil {
		return err
	}
	switch {
	case status/100 == 2:
		return nil
	case status == http.StatusNotFound || status == http.StatusGone:
		// The server no longer knows the endpoint's session: it did not
		// take the message, which may go again on a new session.
		s.forget(ep)
		return &sessionGoneError{id: ep, status: status}
	case id.IsValid():
		return s.h.errorBody(op, status, reply, id)
	}
	return &TransportError{Op: op, StatusCode: status, Err: statusError(status, reply)}
}

func (s *sseConn) send(ctx context.Context, req *jsonrpc.Request, _ *wireInfo) error {
	return s.post(ctx, req, req.Method, req.ID)
}

func (s *sseConn) notify(ctx context.Context, n *jsonrpc.Notification, _ *wireInfo) error {
	return s.post(ctx, n, n.Method, jsonrpc.ID{})
}

func (s *sseConn) reply(ctx context.Context, r *jsonrpc.Response) error {
	return s.post(ctx, r, "", jsonrpc.ID{})
}

// forget drops the stream of a session the server no longer knows (ep).
func (s *sseConn) forget(ep string) {
	s.mu.Lock()
	if s.endpoint != ep {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.drop(ep)
}

// drop ends the open stream as the client's own doing (no reconnection
// follows); lost, when set, is the session to replace.
func (s *sseConn) drop(lost string) {
	s.mu.Lock()
	if lost != "" {
		s.lost = lost
	}
	stop, exited := s.stop, s.exited
	s.endpoint, s.stop, s.exited = "", nil, nil
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-exited
	}
}

// sessionID is the endpoint of the open stream: the session, in this
// transport ("" when none is open).
func (s *sseConn) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoint
}

// lostSession is the endpoint of the stream that ended and that no new
// session has replaced yet.
func (s *sseConn) lostSession() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// loseSession drops the open stream before a re-initialization opens
// another.
func (s *sseConn) loseSession(gone string) { s.drop(gone) }

// sessionStarted: initialize succeeded on the open stream.
func (s *sseConn) sessionStarted(context.Context) {
	s.mu.Lock()
	s.lost, s.started = "", true
	s.mu.Unlock()
}

// close ends the stream; there is no session to delete in this transport.
func (s *sseConn) close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.drop("")
	return nil
}
