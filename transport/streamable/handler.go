// Package streamable serves MCP over Streamable HTTP: one endpoint for both
// protocol eras, chosen per request. An initialize POST opens a 2025-era
// session (Mcp-Session-Id, SSE streams resumable with Last-Event-ID, a
// standalone GET stream); a POST whose MCP-Protocol-Version header or
// params._meta names a 2026-era revision is served statelessly, its headers
// checked against its body. The handler knows nothing of what methods mean:
// it hands decoded JSON-RPC messages to a jsonrpc.SessionOpener.
package streamable

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/toolwire/toolwire/transport"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Handler is an http.Handler serving MCP at one endpoint. Create it with
// NewHandler; stop it with Shutdown.
type Handler struct {
	opener  jsonrpc.SessionOpener
	o       handlerConfig
	policy  *httpguard.Policy
	wd      *watchdog        // read and write timeouts
	workers *workers         // goroutines serving 2025-era requests
	shares  *budgetShares    // who a body is charged to
	now     func() time.Time // a test hook: session expiry reads this clock

	mu        sync.Mutex
	sessions  map[string]*legacySession
	owners    map[string]int               // sessions open per owner ("" for anonymous)
	lastSweep time.Time                    // of a sweep at a session cap
	listens   map[jsonrpc.Session]struct{} // open 2026-era subscriptions/listen requests
	active    int                          // requests being served, both eras
	idle      chan struct{}                // closed when active drops to 0 while draining
	draining  bool
	closed    bool

	storeLogged time.Time // the last log line of a session store outage
	replica     string    // this handler's name on the session bus
	unsubscribe func()    // ends the bus subscription

	janitor  sync.Once
	stopJan  chan struct{}
	janitorW sync.WaitGroup
}

// NewHandler returns a handler that opens sessions on opener, configured by
// opts (WithAllowedHosts, WithLimits, WithLogger, ...).
func NewHandler(opener jsonrpc.SessionOpener, opts ...HandlerOption) *Handler {
	o := newHandlerConfig(opts)
	h := &Handler{
		opener: opener, o: o,
		policy:   httpguard.NewPolicy(o.allowedHosts, o.allowedOrigins),
		wd:       newWatchdog(o.readTimeout, o.writeTimeout, o.bodyGrace),
		workers:  newWorkers(),
		shares:   newBudgetShares(&o),
		now:      time.Now,
		sessions: map[string]*legacySession{},
		owners:   map[string]int{},
		listens:  map[jsonrpc.Session]struct{}{},
		stopJan:  make(chan struct{}),
		replica:  newReplicaID(),
	}
	if h.bused() {
		stop, err := o.sessionBus.Subscribe(h.onBus)
		if err != nil {
			o.logger.Error("session bus subscription failed: cancellations, answers and stream events from other replicas will not arrive", "error", err)
		} else {
			h.unsubscribe = stop
		}
	}
	return h
}

// ServeHTTP implements http.Handler. A POST is answered with one of these
// statuses, every one but 200 and 202 with an application/json JSON-RPC
// error response saying why:
//
//   - 200: a request's reply, application/json or text/event-stream (also
//     a 2025-era JSON-RPC error, and a 2026-era one whose code has no
//     status of its own);
//   - 202, no body: a notification or a response accepted;
//   - 400: a body that is not one valid JSON-RPC message, or that did not
//     arrive in time (Limits.MinBodyRate, Limits.ReadTimeout), a missing
//     Mcp-Session-Id, an unsupported MCP-Protocol-Version, 2026-era headers
//     that do not match the body, invalid params;
//   - 403: a Host or Origin not allowed, another principal's session, or
//     an initialize WithSessionAdmission refused;
//   - 404: an unknown or ended session, a 2026-era method not found;
//   - 406: an Accept header without application/json and text/event-stream;
//   - 413: a body past Limits.MaxBodyBytes;
//   - 415: a Content-Type other than application/json;
//   - 429: a session at Limits.MaxInFlightPerSession;
//   - 500: a 2026-era internal error;
//   - 503: shutting down; at Limits.MaxSessions, Limits.MaxAnonymousSessions,
//     Limits.MaxSessionsPerPrincipal or Limits.MaxInFlight; past the memory
//     budget (WithMemoryBudget, Limits.MaxAnonymousBytes, Limits.MaxAddressBytes).
//
// An error response carries the id of the request it refuses whenever the
// body was read and its id could be, even when the message is otherwise
// invalid. The refusals decided from the headers alone, before the body is
// read (403 for Host or Origin, 406, 413, 415), carry a null id.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.guard(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "method %s is not allowed: MCP uses POST, GET and DELETE", r.Method))
	}
}

// SessionCount returns how many 2025-era sessions are open.
func (h *Handler) SessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if !httpguard.MediaTypeIs(r.Header.Get("Content-Type"), "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Content-Type must be application/json"))
		return
	}
	if !accepts(r.Header, "application/json") || !accepts(r.Header, "text/event-stream") {
		writeError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Accept must list both application/json and text/event-stream"))
		return
	}
	// The body is charged to the memory budget as it arrives, a request
	// without a principal to its own share (budgetShares), so a connection
	// holds what it has sent and no more; a declared length that cannot fit
	// now is refused before a byte is read. A small message that is not a
	// request (a cancellation, a reply to the server's own request) is
	// still handled uncharged when the budget is spent, since a
	// cancellation is what frees it.
	c := h.shares.charge(r)
	handedOff := false
	defer func() {
		if !handedOff {
			c.release()
		}
	}()
	if r.ContentLength > uncharged && r.ContentLength <= h.o.maxBodyBytes && r.ContentLength > c.pool.Available() {
		refuseOverBudget(w, c.pool.Refusal(r.ContentLength))
		return
	}
	body, ok := h.readBody(w, r, c)
	if !ok {
		return
	}
	if n := int64(len(body)); n != c.held {
		switch {
		case n < c.held:
			c.trim(n) // a shorter body than its buffer
		case c.take(n - c.held):
		case n > uncharged || transport.RequestIDOf(body).IsValid():
			writeUnavailable(w, transport.RequestIDOf(body), c.pool.Refusal(n))
			return
		}
	}
	msg, id, derr := jsonrpc.Decode(body)
	if derr != nil {
		writeError(w, http.StatusBadRequest, id, derr)
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok && c.held < int64(len(body)) {
		writeUnavailable(w, req.ID, c.pool.Refusal(int64(len(body))))
		return
	}
	if h.isModern(r, msg) {
		h.postModern(w, r, msg)
		return
	}
	// A 2025-era call outlives its POST when the client drops it: its
	// worker releases the bytes when the call ends.
	handedOff = h.postLegacy(w, r, msg, c)
}

// uncharged is the size up to which a message that is not a request is
// handled when the memory budget is spent.
const uncharged = 64 << 10

// refuseOverBudget answers 503 with Retry-After before reading a body whose
// declared length does not fit the memory budget, and closes the connection
// rather than reading the body to reuse it.
func refuseOverBudget(w http.ResponseWriter, e *jsonrpc.Error) {
	w.Header().Set("Connection", "close")
	writeUnavailable(w, jsonrpc.ID{}, e)
}

// readBody reads a POST body within the size and time limits, charging c
// for it as it arrives (readCharged). A Content-Length past the limit gets
// 413 at once, before any byte is read; a body that passes the limit while
// being read gets 413 then, and is not read any further (refuseTooLarge).
// One that does not arrive at Limits.MinBodyRate, or within Limits.ReadTimeout,
// gets 400 and its connection is closed; one whose next bytes do not fit
// the memory budget gets 503, its id recovered from what was read.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, c *charge) ([]byte, bool) {
	if r.ContentLength > h.o.maxBodyBytes {
		// Refused before reading: a declared length past the limit cannot
		// become an acceptable body, and waiting for it would hold the
		// connection for the whole read timeout.
		refuseTooLarge(w, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, h.o.maxBodyBytes))
		return nil, false
	}
	var watch *watched
	var progress func(int64)
	if supportsDeadlines(w) {
		start := time.Now()
		watch = &watched{rc: http.NewResponseController(w)}
		h.wd.startAt(watch, h.o.bodyDeadline(start, 0))
		if h.o.minBodyRate > 0 {
			progress = func(got int64) { h.wd.extend(watch, h.o.bodyDeadline(start, got)) }
		}
	}
	body, err := readCharged(http.MaxBytesReader(w, r.Body, h.o.maxBodyBytes), r.ContentLength, h.o.maxBodyBytes, c, progress)
	if watch != nil {
		h.wd.stop(watch)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			refuseTooLarge(w, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body exceeds the limit of %d bytes", mbe.Limit))
		case err == errOverBudget:
			w.Header().Set("Connection", "close")
			writeUnavailable(w, transport.RequestIDOf(body), c.pool.Refusal(min(max(r.ContentLength, int64(len(body))+1), h.o.maxBodyBytes)))
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, h.slowBody(len(body)))
		default:
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "cannot read request body: %v", err))
		}
		return nil, false
	}
	return body, true
}

// slowBody is the error answering a body that did not arrive in time,
// having sent got bytes.
func (h *Handler) slowBody(got int) *jsonrpc.Error {
	if h.o.minBodyRate > 0 {
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body too slow: %d bytes received; a body must arrive at %d bytes a second after its first %v, and whole within %v",
			got, h.o.minBodyRate, h.o.bodyGrace, h.o.readTimeout)
	}
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body too slow: %d bytes received; a body must arrive whole within %v", got, h.o.readTimeout)
}

// closeLinger is how long a connection refused with 413 stays open, its
// sending side shut, before it is closed: time for the client to read the
// reply before the unread body it keeps sending resets the connection.
// net/http waits as long (its rstAvoidanceDelay) in the same case.
const closeLinger = 500 * time.Millisecond

// refuseTooLarge answers 413 with e and closes the connection without
// reading any more of the body. Left to itself, net/http would read up to
// 256 KiB more of a chunked body (or of a declared one that short) after
// the handler returns, looking for its end so as to reuse the connection; a
// refused body is not worth reading, so over HTTP/1.x the reply is written
// whole (with its Content-Length and Connection: close), the connection
// taken over, its sending side shut so the client sees the reply end, and
// closed after closeLinger. Where the connection cannot be taken over
// (HTTP/2, a writer that does not unwrap to net/http's), the reply is the
// same and net/http ends the request its own way.
func refuseTooLarge(w http.ResponseWriter, e *jsonrpc.Error) {
	body, err := jsonrpc.Encode(&jsonrpc.Response{Error: e})
	if err != nil {
		body = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"request body too large"}}`, jsonrpc.CodeInvalidRequest))
	}
	hd := w.Header()
	hd["Content-Type"] = contentTypeJSON
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Set("Connection", "close")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = w.Write(body)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	conn, _, err := rc.Hijack()
	if err != nil {
		return
	}
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	time.AfterFunc(closeLinger, func() { _ = conn.Close() })
}

// isModern decides the era of a POST: a 2026-era MCP-Protocol-Version
// header, or a request whose params._meta names a protocol version.
func (h *Handler) isModern(r *http.Request, msg jsonrpc.Message) bool {
	if mcp.EraOf(strings.TrimSpace(r.Header.Get(HeaderProtocolVersion))) == mcp.EraModern {
		return true
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		_, present := metaVersion(req.Params)
		return present
	}
	return false
}

// modernHeader reports whether a request names a 2026-era revision in its
// MCP-Protocol-Version header.
func modernHeader(r *http.Request) bool {
	return mcp.EraOf(strings.TrimSpace(r.Header.Get(HeaderProtocolVersion))) == mcp.EraModern
}

// begin counts a request in; it fails with the error to answer while
// shutting down or when as many requests as Limits.MaxInFlight allows are
// running.
func (h *Handler) begin() *jsonrpc.Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.beginLocked()
}

func (h *Handler) beginLocked() *jsonrpc.Error {
	if h.draining {
		return errShuttingDown
	}
	if h.active >= h.o.maxInFlight {
		return errBusy
	}
	h.active++
	return nil
}

func (h *Handler) finish() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.active--
	if h.active == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
}

var (
	errShuttingDown = jsonrpc.NewError(jsonrpc.CodeInternalError, "server is shutting down")
	errBusy         = jsonrpc.NewError(jsonrpc.CodeOverloaded, "server busy: too many requests in flight; try again later")
)

// Shutdown stops the handler gracefully: new requests get 503, standalone
// and subscription streams end (a subscription gets its closing result),
// and requests in flight may finish until ctx is done. Then every session
// is closed, cancelling whatever still runs. It returns ctx.Err() if
// requests were still running when ctx ended.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.draining = true
	var listens []jsonrpc.Session
	for s := range h.listens {
		listens = append(listens, s)
	}
	sessions := make([]*legacySession, 0, len(h.sessions))
	for _, ls := range h.sessions {
		sessions = append(sessions, ls)
	}
	var idle chan struct{}
	if h.active > 0 {
		if h.idle == nil {
			h.idle = make(chan struct{})
		}
		idle = h.idle
	}
	h.mu.Unlock()

	for _, s := range listens {
		s.Close()
	}
	for _, ls := range sessions {
		ls.endStandalone()
	}
	var err error
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	h.closeAll()
	return err
}

// Close ends every session and stream at once.
func (h *Handler) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = h.Shutdown(ctx)
	return nil
}

func (h *Handler) closeAll() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stopJan)
	}
	sessions := make([]*legacySession, 0, len(h.sessions))
	for id, ls := range h.sessions {
		sessions = append(sessions, ls)
		h.dropLocked(id, ls)
	}
	var modern []jsonrpc.Session
	for s := range h.listens {
		modern = append(modern, s)
	}
	unsubscribe := h.unsubscribe
	h.unsubscribe = nil
	h.mu.Unlock()
	if unsubscribe != nil {
		unsubscribe()
	}
	for _, ls := range sessions {
		// A shared session lives on in the store for the other replicas.
		ls.closeLocal(!h.shared())
	}
	for _, s := range modern {
		s.Close()
	}
	h.janitorW.Wait()
	h.workers.close()
}

// Header values shared by every response; net/http only reads them.
var (
	contentTypeJSON = []string{"application/json"}
	contentTypeSSE  = []string{"text/event-stream"}
)

// newSessionID returns an unguessable id of visible ASCII.
func newSessionID() string { return rand.Text() }

// retryAfterBusy is the Retry-After, in seconds, of a refusal for want of
// room (503 at Limits.MaxSessions or Limits.MaxInFlight, 429 at
// Limits.MaxInFlightPerSession): slots free as requests finish and sessions
// end, so a client may try again soon.
const retryAfterBusy = "1"

// writeUnavailable answers 503 with e. A refusal for want of room (too many
// sessions or requests) carries Retry-After, so a client backs off and then
// retries; one for a server shutting down does not, since trying again will
// not help.
func writeUnavailable(w http.ResponseWriter, id jsonrpc.ID, e *jsonrpc.Error) {
	if e != errShuttingDown {
		w.Header().Set("Retry-After", retryAfterBusy)
	}
	writeError(w, http.StatusServiceUnavailable, id, e)
}

// writeError answers with a JSON-RPC error body.
func writeError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	body, err := jsonrpc.Encode(&jsonrpc.Response{ID: id, Error: e})
	if err != nil {
		body = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"internal error"}}`, jsonrpc.CodeInternalError))
	}
	w.Header()["Content-Type"] = contentTypeJSON
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// statusFor maps a 2026-era JSON-RPC error code to its HTTP status.
func statusFor(r *jsonrpc.Response) int {
	if r.Error == nil {
		return http.StatusOK
	}
	switch r.Error.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest, jsonrpc.CodeParseError,
		mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case jsonrpc.CodeInternalError:
		return http.StatusInternalServerError
	}
	return http.StatusOK
}

// accepts reports whether the Accept header admits the media type.
func accepts(h http.Header, want string) bool {
	major, _, _ := strings.Cut(want, "/")
	for _, v := range h.Values("Accept") {
		for v != "" {
			var part string
			part, v, _ = strings.Cut(v, ",")
			mt, _, _ := strings.Cut(part, ";")
			mt = strings.TrimSpace(mt)
			if strings.EqualFold(mt, want) || mt == "*/*" || (len(mt) == len(major)+2 && strings.EqualFold(mt[:len(major)], major) && mt[len(major):] == "/*") {
				return true
			}
		}
	}
	return false
}
