package streamable

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

// conn is one HTTP response a stream writes to. Its methods serialise the
// writes; once ended it writes nothing more, because the ServeHTTP call that
// owns the ResponseWriter may have returned.
type conn struct {
	w            http.ResponseWriter
	rc           *http.ResponseController // &rcv
	rcv          http.ResponseController
	writeTimeout time.Duration
	keepAlive    time.Duration
	sessionID    string // the Mcp-Session-Id header of the response; "" for none
	deadlines    bool   // the writer supports write deadlines
	wd           *watchdog
	watch        watched // the write in progress, while registered

	mu      sync.Mutex
	started bool // SSE headers written
	ended   bool
	done    chan struct{}
}

func newConn(w http.ResponseWriter, o *handlerConfig, wd *watchdog, sessionID string) *conn {
	c := &conn{w: w, writeTimeout: o.writeTimeout,
		keepAlive: o.keepAliveInterval, sessionID: sessionID, done: make(chan struct{}), deadlines: supportsDeadlines(w), wd: wd}
	// Held in the conn: one allocation per response less.
	c.rcv = *http.NewResponseController(w)
	c.rc = &c.rcv
	c.watch = watched{rc: c.rc, write: true}
	return c
}

// setSessionHeader names the session in the response's headers, if any.
func (c *conn) setSessionHeader(h http.Header) {
	if c.sessionID != "" {
		h[HeaderSessionID] = []string{c.sessionID}
	}
}

// supportsDeadlines reports whether w, or a writer it wraps (the Unwrap
// chain http.ResponseController follows), can take a write deadline. Asking
// once saves building a "not supported" error on every write.
func supportsDeadlines(w http.ResponseWriter) bool {
	for {
		if _, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

var errConnEnded = errors.New("streamable: the HTTP response has ended")

// bounded runs one write under the write timeout, enforced by the
// handler's watchdog: a write still blocked when it is due gets an immediate
// deadline, which fails it and so the connection. Writes are serialised by
// c.mu, so one watched slot per connection suffices.
func (c *conn) bounded(write func() error) error {
	if !c.deadlines || c.wd == nil {
		return write()
	}
	c.wd.start(&c.watch, c.writeTimeout)
	err := write()
	c.wd.stop(&c.watch)
	return err
}

// writeMessage sends m as a whole application/json response. A result is
// written around its already-encoded bytes rather than copied into a new
// envelope: for a 1 MiB result that is a megabyte less to allocate and copy.
func (c *conn) writeMessage(status int, m jsonrpc.Message) error {
	r, ok := m.(*jsonrpc.Response)
	if !ok || r.Error != nil || len(r.Result) == 0 {
		body, err := jsonrpc.Encode(m)
		if err != nil {
			return err
		}
		return c.writeJSON(status, body)
	}
	head := jsonrpc.AppendResultHead(make([]byte, 0, 48), r.ID)
	return c.writeJSONParts(status, head, r.Result, closeBrace)
}

var closeBrace = []byte("}")

// writeJSON sends a whole application/json response.
func (c *conn) writeJSON(status int, body []byte) error {
	return c.writeJSONParts(status, body, nil, nil)
}

// writeJSONParts sends head, body and tail as one application/json response.
func (c *conn) writeJSONParts(status int, head, body, tail []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.started {
		return errConnEnded
	}
	c.started = true
	h := c.w.Header()
	c.setSessionHeader(h)
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = []string{strconv.Itoa(len(head) + len(body) + len(tail))}
	if c.deadlines && c.wd != nil {
		c.wd.start(&c.watch, c.writeTimeout)
		defer c.wd.stop(&c.watch)
	}
	c.w.WriteHeader(status)
	for _, p := range [3][]byte{head, body, tail} {
		if len(p) == 0 {
			continue
		}
		if _, err := c.w.Write(p); err != nil {
			return err
		}
	}
	return c.rc.Flush()
}

// startSSE writes the event-stream headers if not yet written.
func (c *conn) startSSE() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return errConnEnded
	}
	if c.started {
		return nil
	}
	c.started = true
	h := c.w.Header()
	c.setSessionHeader(h)
	h["Content-Type"] = contentTypeSSE
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if err := c.bounded(func() error {
		c.w.WriteHeader(http.StatusOK)
		return c.rc.Flush()
	}); err != nil {
		return err
	}
	if c.keepAlive > 0 {
		go c.keepAliveLoop()
	}
	return nil
}

// event writes one SSE event: an optional id, an optional retry, then data
// (empty for a priming event).
func (c *conn) event(id string, retry time.Duration, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || !c.started {
		return errConnEnded
	}
	b := make([]byte, 0, len(data)+64)
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	if retry > 0 {
		b = append(b, "retry: "...)
		b = strconv.AppendInt(b, retry.Milliseconds(), 10)
		b = append(b, '\n')
	}
	if data == nil {
		b = append(b, "data: \n\n"...)
	} else {
		b = append(b, "event: message\ndata: "...)
		b = append(b, data...)
		b = append(b, "\n\n"...)
	}
	return c.send(b)
}

// send writes b and flushes it to the client, within the write bound; c.mu
// is held.
func (c *conn) send(b []byte) error {
	return c.bounded(func() error {
		if _, err := c.w.Write(b); err != nil {
			return err
		}
		return c.rc.Flush()
	})
}

func (c *conn) keepAliveLoop() {
	t := time.NewTicker(c.keepAlive)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			c.mu.Lock()
			if c.ended {
				c.mu.Unlock()
				return
			}
			err := c.send([]byte(": keep-alive\n\n"))
			c.mu.Unlock()
			if err != nil {
				c.end()
				return
			}
		}
	}
}

// end marks the response finished and wakes the ServeHTTP call waiting on it.
func (c *conn) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		c.ended = true
		close(c.done)
	}
}

// stream is a sequence of messages for one client: the response stream of a
// POST, or a session's standalone GET stream. A 2025-era stream records its
// events in the event store so that it survives its connection; a
// 2026-era stream lives and dies with its connection.
type stream struct {
	id      string
	ls      *legacySession // nil for a 2026-era request
	final   bool           // ends after the response (POST streams)
	prime   bool           // send a priming event when SSE starts
	retry   time.Duration
	onFinal func(*jsonrpc.Response) int // HTTP status for a JSON reply
	reqID   jsonrpc.ID                  // the request a 2025-era POST stream answers
	log     *slog.Logger

	mu       sync.Mutex
	c        *conn // the live connection, nil while detached
	finished bool  // the response has been recorded
	forceSSE bool  // answer on SSE even if nothing precedes the response
	// idSent: an event id of this stream went out on a connection, so the
	// client may resume it with Last-Event-ID. Until then the stream cannot
	// be resumed (a GET without Last-Event-ID opens the standalone stream
	// afresh and replays nothing), so its events are not stored: stored, they
	// could never be read, and would only hold memory until the session ends.
	idSent bool
	stored bool // an event of the stream went to the event store
}

var errStreamFinished = errors.New("streamable: the request has already been answered")

// attached reports whether a connection carries the stream now.
// Key is the stream's id, which names it among its session's streams.
func (st *stream) Key() string { return st.id }

func (st *stream) attached() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.c != nil
}

// Send implements jsonrpc.Sender: a message tied to the request (progress,
// a server request) goes out on the stream, switching the reply to SSE.
func (st *stream) Send(ctx context.Context, m jsonrpc.Message) error {
	return st.send(m, false)
}

func (st *stream) send(m jsonrpc.Message, final bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.finished {
		return errStreamFinished
	}
	if final {
		st.finished = true
	}
	c := st.c
	if c != nil && final && !st.forceSSE {
		c.mu.Lock()
		undecided := !c.started
		c.mu.Unlock()
		if undecided {
			status := http.StatusOK
			if r, ok := m.(*jsonrpc.Response); ok && st.onFinal != nil {
				status = st.onFinal(r)
			}
			if err := c.writeMessage(status, m); err != nil {
				st.log.Debug("reply not delivered", "error", err)
			}
			st.detachLocked()
			st.dropLocked()
			return nil
		}
	}
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	if c != nil {
		if err := st.startLocked(); err != nil {
			st.detachLocked()
			c = nil
		}
	}
	id := ""
	if st.ls != nil && (c != nil || st.idSent) {
		if id, err = st.ls.append(st.id, data); err != nil {
			st.log.Warn("event not stored", "error", err)
		}
		st.stored = st.stored || id != ""
		if c == nil && id != "" && st.final {
			// Its client dropped the stream here: one that resumed it
			// on another replica follows it there.
			st.ls.publish(busMessage{Kind: busEvent, Msg: data, Stream: st.id, ID: id, Final: final})
		}
	}
	if c != nil {
		if id != "" {
			st.idSent = true
		}
		if err := c.event(id, 0, data); err != nil {
			st.detachLocked()
			c = nil
		}
	}
	if final {
		// Answered. If the client holds an event id of the stream, the
		// stream is kept a while for it to resume, delivered or not (a
		// write into a connection the client already dropped succeeds too);
		// a session keeps only its last few such streams. A stream whose
		// client never got an id cannot be resumed: it is forgotten now.
		if st.ls != nil {
			if st.idSent {
				st.ls.retire(st.id)
			} else {
				st.dropLocked()
			}
		}
		st.detachLocked()
	}
	if c == nil && st.ls == nil {
		return errConnEnded
	}
	return nil
}

// startLocked switches the live connection to SSE, priming it.
func (st *stream) startLocked() error {
	c := st.c
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if started {
		return nil
	}
	if err := c.startSSE(); err != nil {
		return err
	}
	if !st.prime || st.ls == nil {
		return nil
	}
	id, err := st.ls.append(st.id, nil)
	if err != nil {
		return err
	}
	st.stored = true
	// Counted as sent once written to the connection, even if the write
	// fails: the client may have read it, and a stream kept for nothing
	// costs less than a reply lost.
	st.idSent = true
	return c.event(id, st.retry, nil)
}

// detachLocked ends the live connection; the stream itself goes on.
func (st *stream) detachLocked() {
	if st.c != nil {
		st.c.end()
		st.c = nil
	}
}

// dropLocked forgets a delivered stream.
func (st *stream) dropLocked() {
	if st.ls != nil {
		st.ls.dropStream(st.id, st.stored)
	}
}

// detach ends c if it is still the stream's connection.
func (st *stream) detach(c *conn) {
	st.mu.Lock()
	if st.c == c {
		st.detachLocked()
	}
	st.mu.Unlock()
	c.end()
}

// closeSSE ends the live connection of an unanswered 2025-era POST after
// priming it, so the client reconnects with Last-Event-ID to get the rest.
// A stream that cannot hand the client an event id first (a session on a
// revision before 2025-11-25 has no priming event, and nothing was sent on
// it yet) is left open: closed, it could not be resumed, and the reply
// would be lost.
func (st *stream) closeSSE() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ls == nil || st.finished || st.c == nil || !st.prime && !st.idSent {
		return false
	}
	if err := st.startLocked(); err != nil {
		st.detachLocked()
		return true
	}
	st.detachLocked()
	return true
}

// finishNoReply ends a request answered with no response: one cancelled by
// notifications/cancelled, for which the spec says no response is sent. A
// request POST must still be answered with application/json or
// text/event-stream, so a POST whose reply was not yet begun gets an SSE
// stream that ends at once, with no event and no event id (there is nothing
// to resume); a stream already begun simply ends.
func (st *stream) finishNoReply() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.finished {
		return
	}
	st.finished = true
	if c := st.c; c != nil {
		_ = c.startSSE()
	}
	st.detachLocked()
	st.dropLocked()
}

// endSession answers a 2025-era POST whose session ended (DELETE, idle
// expiry, shutdown) before its request was answered: the client gets a
// JSON-RPC error response with the request's id, as application/json when
// nothing was sent yet or as a last SSE event otherwise, instead of an empty
// body. The event is not stored: the session's events are being forgotten.
func (st *stream) endSession() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.finished {
		return
	}
	st.finished = true
	c := st.c
	if c == nil || !st.final {
		st.detachLocked()
		return
	}
	resp := &jsonrpc.Response{ID: st.reqID, Error: errSessionEndedReply}
	c.mu.Lock()
	undecided := !c.started
	c.mu.Unlock()
	if undecided {
		if err := c.writeMessage(http.StatusOK, resp); err != nil {
			st.log.Debug("reply not delivered", "error", err)
		}
	} else if data, err := jsonrpc.Encode(resp); err == nil {
		_ = c.event("", 0, data)
	}
	st.detachLocked()
}

var errSessionEndedReply = jsonrpc.NewError(jsonrpc.CodeInternalError,
	"session ended before the request was answered: it was deleted, expired or the server shut down; initialize a new session to retry")

type streamKey struct{}

// CloseSSEStream ends the HTTP response carrying the current 2025-era
// request while the request goes on: the response switches to SSE, gets a
// priming event with a retry interval, and closes. The client reconnects with
// GET and Last-Event-ID and receives the rest, including the result (SEP-1699
// polling). ctx is the context a tool handler received. It reports whether a
// stream was closed; 2026-era requests have no resumable stream, so for them
// it does nothing and returns false, as it does for a 2025-era stream the
// client holds no event id of (a session on a revision before 2025-11-25,
// which has no priming event, with nothing sent on the stream yet): closing
// that one would lose the reply.
func CloseSSEStream(ctx context.Context) bool {
	st, _ := ctx.Value(streamKey{}).(*stream)
	if st == nil {
		return false
	}
	return st.closeSSE()
}
