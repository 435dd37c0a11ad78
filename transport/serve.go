// Package transport carries JSON-RPC messages between peers. Its subpackages
// frame them (stdio: one per line; memory: in-process); Serve runs a
// jsonrpc.Session over any framed connection. Transports know nothing of what
// the methods mean.
package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Conn is a connection that carries whole messages.
type Conn interface {
	// Read returns the next message. It returns io.EOF when the peer is done,
	// and a *TooLargeError for a message over the size limit, after which the
	// connection is still usable.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message. Concurrent calls are allowed.
	Write(ctx context.Context, msg []byte) error
	// Close releases the connection.
	Close() error
}

// TooLargeError reports a message over the connection's size limit; it was
// skipped. Serve answers it with -32600, carrying the message's id when the
// id can be read from Prefix (see Serve), and null otherwise.
type TooLargeError struct {
	Limit int
	// Prefix is the start of the message, at most Limit bytes (nil when the
	// connection kept none): enough to read the id of a request that puts
	// "id" and "method" before its params, as clients do.
	Prefix []byte
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message exceeds the size limit of %d bytes", e.Limit)
}

// Defaults for the ServeOption constructors.
const (
	DefaultMaxConcurrency = 64
	DefaultMaxQueued      = 1024
	DefaultDrainTimeout   = 5 * time.Second
	DefaultInlineTimeout  = time.Millisecond
)

// ServeOption configures Serve, and the framed transports built on it
// (stdio.Serve, memory.Serve). Options apply in order, so a later one
// overrides an earlier one; nil options are ignored.
type ServeOption interface{ applyServe(*serveConfig) }

type serveConfig struct {
	maxConcurrency int
	maxQueued      int
	drainTimeout   time.Duration
	inlineBudget   time.Duration
	maxMessageSize int
	logger         *slog.Logger
	budget         *MemoryBudget // nil: none
	noBudget       bool
}

type serveOption func(*serveConfig)

func (f serveOption) applyServe(c *serveConfig) { f(c) }

// WithLogger sets where transport diagnostics go (malformed messages, at
// debug level). By default, and when l is nil, nothing is logged.
func WithLogger(l *slog.Logger) ServeOption {
	return serveOption(func(c *serveConfig) { c.logger = l })
}

// WithMemoryBudget charges every message Serve reads to b, from before it is
// decoded until it is handled (a request: until it is answered), so that
// requests in flight never hold more than b's limit in bodies; several Serve
// calls, and HTTP handlers, may share one budget. Past the budget a request
// is answered, undecoded, with jsonrpc.CodeOverloaded and the id its first bytes
// show (null when they show none, as for an oversized message), and the
// connection goes on serving. Notifications (a cancellation frees the
// budget) and responses are still handled. A request larger than the whole
// budget is always refused, so a Limits.MaxMessageBytes above the budget's limit
// wants a larger budget too. By default Serve uses SharedMemoryBudget:
// DefaultMemoryBudget (32 MiB) shared by every Serve of the process. A nil
// b turns the budget off: requests are admitted whatever the bodies in
// flight already hold (Limits.MaxConcurrency, Limits.MaxQueued and
// Limits.MaxMessageBytes still apply).
func WithMemoryBudget(b *MemoryBudget) ServeOption {
	return serveOption(func(c *serveConfig) { c.budget, c.noBudget = b, b == nil })
}

// SizeLimitedConn is a Conn whose incoming message size limit can be set,
// which Serve does from Limits.MaxMessageBytes before it reads.
type SizeLimitedConn interface {
	Conn
	// SetMaxMessageSize bounds one incoming message; n <= 0 means the
	// connection's default. It is called before the first Read.
	SetMaxMessageSize(n int)
}

// newServeConfig applies opts and then the defaults.
func newServeConfig(opts []ServeOption) serveConfig {
	var c serveConfig
	for _, o := range opts {
		if o != nil {
			o.applyServe(&c)
		}
	}
	limits.Default(&c.maxConcurrency, DefaultMaxConcurrency)
	if c.maxQueued < 0 {
		c.maxQueued = 0
	} else if c.maxQueued == 0 {
		c.maxQueued = DefaultMaxQueued
	}
	limits.Default(&c.drainTimeout, DefaultDrainTimeout)
	limits.Default(&c.inlineBudget, DefaultInlineTimeout)
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.budget == nil && !c.noBudget {
		c.budget = SharedMemoryBudget()
	}
	return c
}

// sender writes messages to a Conn; it is what sessions send through.
type sender struct{ conn Conn }

func (s sender) Send(ctx context.Context, m jsonrpc.Message) error {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	return s.conn.Write(ctx, b)
}

// NewSender returns a jsonrpc.Sender that encodes onto conn.
func NewSender(conn Conn) jsonrpc.Sender { return sender{conn} }

// Serve reads messages from conn and hands them to a session opened on
// opener until the input ends (a clean exit, returning nil), ctx is
// cancelled, or writing fails. Requests run concurrently within the bounds
// opts set (Limits.MaxConcurrency, Limits.MaxQueued), and the bodies of requests
// in flight within a memory budget (WithMemoryBudget: past it a request is
// answered with jsonrpc.CodeOverloaded, undecoded); notifications are handled in
// order as they arrive, so a cancellation is seen while its request runs. A
// notifications/cancelled naming a request still waiting in the queue removes
// it: it never runs and is never answered (a cancelled request gets no
// response), and the session sees the notification too.
// Bad input never stops the loop: it gets an error reply.
//
// There is no dedicated reader: one goroutine at a time holds the reader's
// role. It serves a request it reads itself, keeping the role if the request
// is answered within the inline budget (Limits.InlineTimeout) and passing the
// role to an idle (or new) goroutine otherwise. A quick request thus costs no
// hand-off between goroutines, a slow one holds reading up for at most that
// budget, and goroutines are reused with their grown stacks.
func Serve(ctx context.Context, conn Conn, opener jsonrpc.SessionOpener, opts ...ServeOption) error {
	o := newServeConfig(opts)
	if sc, ok := conn.(SizeLimitedConn); ok && o.maxMessageSize > 0 {
		sc.SetMaxMessageSize(o.maxMessageSize)
	}
	l := &loop{o: o, conn: conn, out: sender{conn}, role: make(chan struct{}), quit: make(chan struct{}), readDone: make(chan struct{})}
	l.sess = opener.OpenSession(l.out)
	defer l.sess.Close()
	l.inline, _ = l.sess.(jsonrpc.InlineHandler)
	l.reqCtx, l.stopReqs = context.WithCancel(context.WithoutCancel(ctx))
	l.detached = context.WithoutCancel(l.reqCtx)
	defer l.cancelReqs()
	l.readCtx, l.stopReading = context.WithCancel(ctx)
	defer l.stopReading()
	l.busy = fmt.Sprintf("server busy: %d requests already in flight or queued", o.maxConcurrency+o.maxQueued)

	go l.worker(true)

	ended := false
	select {
	case <-l.readDone:
		ended = true
	case <-ctx.Done():
	case <-l.reqCtx.Done():
	}
	// After this, no message is handed over: a dispatch in progress
	// finishes first, and a Read still blocked returns to nothing.
	l.dispatching.Lock()
	l.stopped.Store(true)
	l.dispatching.Unlock()
	l.stopReading()
	close(l.quit)
	var endErr error
	if ended {
		endErr = l.readErr
	} else if ctx.Err() != nil {
		endErr = ctx.Err()
	}
	// Let running and queued requests finish, within the drain timeout;
	// then cancel them, and drop what never started. Goroutines still
	// blocked reading are not waited for.
	done := make(chan struct{})
	go func() { l.reqs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(o.drainTimeout):
		l.cancelReqs()
		l.mu.Lock()
		for _, q := range l.queue {
			l.reqs.Done()
			l.o.budget.Release(q.charge)
		}
		l.queue = nil
		l.mu.Unlock()
		<-done
	}
	if l.writeErr != nil {
		return fmt.Errorf("transport: write failed: %w", l.writeErr)
	}
	return endErr
}

// loop is the state of one Serve call.
type loop struct {
	o      serveConfig
	conn   Conn
	out    sender
	sess   jsonrpc.Session
	inline jsonrpc.InlineHandler
	busy   string

	reqCtx, readCtx       context.Context
	detached              context.Context // reqCtx's values; requests' contexts derive from it
	stopReqs, stopReading context.CancelFunc

	role     chan struct{} // passes the reader's role to an idle goroutine
	quit     chan struct{} // closed when Serve is on its way out
	readDone chan struct{} // closed when reading has ended
	readOnce sync.Once
	readErr  error // set before readDone closes

	stopped     atomic.Bool
	dispatching sync.Mutex // held while a read message is handed over

	mu      sync.Mutex
	running int                           // requests being served
	queue   []pending                     // requests waiting for a slot
	active  map[jsonrpc.ID]*activeRequest // requests handed to the session
	idle    int                           // goroutines waiting for the role
	reqs    sync.WaitGroup                // requests running or queued

	writeOnce sync.Once
	writeErr  error
}

// maxIdle bounds the goroutines kept waiting for work.
const maxIdle = 8

func (l *loop) reply(r *jsonrpc.Response) {
	if err := l.out.Send(l.reqCtx, r); err != nil {
		l.writeOnce.Do(func() { l.writeErr = err; l.cancelReqs() })
	}
}

func (l *loop) endReading(err error) {
	l.readOnce.Do(func() { l.readErr = err; close(l.readDone) })
}

// worker runs until Serve ends: it reads while it holds the role, serves
// the requests it reads or takes from the queue, and otherwise waits idle.
func (l *loop) worker(reader bool) {
	for {
		if reader {
			p, ok := l.read()
			if !ok {
				return
			}
			if l.serveInline(p) {
				continue // still the reader
			}
		}
		// Serve what waits in the queue, then wait for the role.
		for {
			l.mu.Lock()
			if len(l.queue) == 0 || l.reqCtx.Err() != nil {
				break
			}
			p := l.queue[0]
			l.queue = l.queue[1:]
			l.running++
			l.activateLocked(p.req)
			l.mu.Unlock()
			l.serve(p)
		}
		if l.idle >= maxIdle {
			l.mu.Unlock()
			return
		}
		l.idle++
		l.mu.Unlock()
		select {
		case <-l.role:
			reader = true
		case <-l.quit:
			l.mu.Lock()
			l.idle--
			l.mu.Unlock()
			return
		}
	}
}

// serveInline serves a request the reader just read, keeping the reader's
// role: a quick request is answered with no hand-off at all. If it is still
// running after the inline budget, the role passes to another goroutine so that
// reading (and so cancellation) goes on. It reports whether this goroutine
// still holds the role.
func (l *loop) serveInline(p pending) bool {
	var state atomic.Int32 // 0 running inline, 1 role passed on, 2 done
	t := time.AfterFunc(l.o.inlineBudget, func() {
		if state.CompareAndSwap(0, 1) {
			l.passRole()
		}
	})
	l.serve(p)
	t.Stop()
	return state.CompareAndSwap(0, 2)
}

// passRole gives the reader's role to an idle goroutine, or a new one.
func (l *loop) passRole() {
	l.mu.Lock()
	if l.idle > 0 {
		l.idle--
		l.mu.Unlock()
		select {
		case l.role <- struct{}{}:
		case <-l.quit: // Serve is ending: nobody reads any more
		}
		return
	}
	l.mu.Unlock()
	go l.worker(true)
}

// activeRequest is a request handed to the session, with the context it
// runs under: a notifications/cancelled read at any moment after the
// request was accepted cancels it, even before the session has registered
// the request itself.
type activeRequest struct {
	req    *jsonrpc.Request // the request this entry belongs to
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// ErrCancelledByPeer is the cause of a request's context when the peer
// cancelled it with notifications/cancelled.
var ErrCancelledByPeer = errors.New("request cancelled by the client (notifications/cancelled)")

// activateLocked gives an accepted request its own context; l.mu is held,
// so no cancellation can be read between accepting and activating it. A
// request whose id is already active shares nothing with it (the session
// refuses the duplicate) and runs under the loop's context.
func (l *loop) activateLocked(req *jsonrpc.Request) {
	if _, dup := l.active[req.ID]; dup {
		return
	}
	if l.active == nil {
		l.active = map[jsonrpc.ID]*activeRequest{}
	}
	// Derived from a parent that is never cancelled, so making one costs
	// no registration with a shared parent; cancelReqs cancels them all.
	ctx, cancel := context.WithCancelCause(l.detached)
	l.active[req.ID] = &activeRequest{req: req, ctx: ctx, cancel: cancel}
}

// pending is a request accepted for serving, with the bytes of the memory
// budget it holds until it is answered.
type pending struct {
	req    *jsonrpc.Request
	charge int64
}

// serve answers one request; running was counted and the request activated.
// The request's share of the memory budget is given back once it is
// answered.
func (l *loop) serve(p pending) {
	req := p.req
	ctx := l.reqCtx
	l.mu.Lock()
	a := l.active[req.ID]
	l.mu.Unlock()
	if a != nil && a.req != req {
		a = nil // a duplicate id: the entry is the other request's
	}
	if a != nil {
		ctx = a.ctx
	}
	if resp := l.sess.HandleRequest(ctx, req, l.out); resp != nil {
		l.reply(resp)
	}
	l.mu.Lock()
	l.running--
	if a != nil && l.active[req.ID] == a {
		delete(l.active, req.ID)
	}
	l.mu.Unlock()
	if a != nil {
		a.cancel(nil)
	}
	l.o.budget.Release(p.charge)
	l.reqs.Done()
}

// cancelReqs cancels every request: the loop's context and each accepted
// request's own.
func (l *loop) cancelReqs() {
	l.stopReqs()
	l.mu.Lock()
	active := make([]*activeRequest, 0, len(l.active))
	for _, a := range l.active {
		active = append(active, a)
	}
	l.mu.Unlock()
	for _, a := range active {
		a.cancel(context.Canceled)
	}
}

// cancelActive cancels the context of an accepted request the client
// cancelled; the session, told too, answers nothing for it.
func (l *loop) cancelActive(id jsonrpc.ID) {
	l.mu.Lock()
	a := l.active[id]
	l.mu.Unlock()
	if a != nil {
		a.cancel(ErrCancelledByPeer)
	}
}

// read holds the reader's role: it reads and dispatches messages until one
// is a request this goroutine should serve (the role then passes on), or
// reading ends.
func (l *loop) read() (pending, bool) {
	for {
		if l.stopped.Load() {
			return pending{}, false
		}
		data, err := l.conn.Read(l.readCtx)
		l.dispatching.Lock()
		if l.stopped.Load() {
			l.dispatching.Unlock()
			return pending{}, false
		}
		p, more := l.dispatch(data, err)
		l.dispatching.Unlock()
		if !more {
			return pending{}, false
		}
		if p.req != nil {
			return p, true
		}
	}
}

// dispatch handles one read. It returns a request for the calling goroutine
// to serve (counted as running); more is false when reading has ended.
//
// Each message is charged to the memory budget, before it is decoded, for
// as long as it is handled (a request: until it is answered). Past the
// budget, a message whose first bytes show a request is answered with
// jsonrpc.CodeOverloaded and that id, undecoded. Anything else (a cancellation, a
// response to the server's own request, a malformed message) is still read
// and handled, uncharged: it is handled before the next message is read, so
// it holds at most one message's memory, and a cancellation is what frees
// the budget. A request that shows itself only once decoded is refused then.
func (l *loop) dispatch(data []byte, err error) (_ pending, more bool) {
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			id := prefixID(tl.Prefix)
			l.o.logger.Debug("message too large", "limit", tl.Limit, "id", id.String())
			l.reply(&jsonrpc.Response{ID: id, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%s", tl.Error())})
			return pending{}, true
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		l.endReading(err)
		return pending{}, false
	}
	charge := int64(len(data))
	overBudget := !l.o.budget.TryAcquire(charge)
	if overBudget {
		if id := prefixID(data); id.IsValid() {
			l.o.logger.Debug("memory budget spent", "bytes", charge, "id", id.String())
			l.reply(&jsonrpc.Response{ID: id, Error: l.o.budget.Refusal(charge)})
			return pending{}, true
		}
		charge = 0
	}
	release := func() { l.o.budget.Release(charge) }
	msg, id, derr := jsonrpc.Decode(data)
	if derr != nil {
		release()
		l.o.logger.Debug("bad message", "error", derr.Message)
		l.reply(&jsonrpc.Response{ID: id, Error: derr})
		return pending{}, true
	}
	switch m := msg.(type) {
	case *jsonrpc.Notification:
		if id, ok := cancelledRequest(m); ok {
			l.dropQueued(id)
			l.cancelActive(id)
		}
		// The session sees every cancellation: it cancels a request that
		// is already running.
		l.sess.HandleNotification(l.reqCtx, m)
		release()
	case *jsonrpc.Response:
		l.sess.HandleResponse(l.reqCtx, m)
		release()
	case *jsonrpc.Request:
		if overBudget {
			l.reply(&jsonrpc.Response{ID: m.ID, Error: l.o.budget.Refusal(int64(len(data)))})
			return pending{}, true
		}
		if l.inline != nil && l.inline.HandleInline(m) {
			if resp := l.sess.HandleRequest(l.reqCtx, m, l.out); resp != nil {
				l.reply(resp)
			}
			release()
			return pending{}, true
		}
		l.mu.Lock()
		if l.running >= l.o.maxConcurrency {
			if len(l.queue) >= l.o.maxQueued {
				l.mu.Unlock()
				release()
				l.reply(&jsonrpc.Response{ID: m.ID, Error: jsonrpc.NewError(jsonrpc.CodeOverloaded, "%s", l.busy)})
				return pending{}, true
			}
			l.queue = append(l.queue, pending{m, charge})
			l.reqs.Add(1)
			l.mu.Unlock()
			return pending{}, true
		}
		l.running++
		l.reqs.Add(1)
		l.activateLocked(m)
		l.mu.Unlock()
		return pending{m, charge}, true
	}
	return pending{}, true
}

// cancelledRequest reports the request a notifications/cancelled names. The
// params are read as strictly as the session reads them, so the transport and
// the session never disagree about which request a cancellation names;
// malformed params name none (the session ignores them too).
func cancelledRequest(n *jsonrpc.Notification) (jsonrpc.ID, bool) {
	if n.Method != mcp.NotificationCancelled {
		return jsonrpc.ID{}, false
	}
	var p struct { // mcp.CancelledParams, _meta checked but not kept
		RequestID *jsonrpc.ID            `json:"requestId,omitempty"`
		Reason    string                 `json:"reason,omitempty"`
		Meta      wirejson.DiscardObject `json:"_meta"`
	}
	if err := wirejson.Unmarshal(n.Params, &p); err != nil || p.RequestID == nil || !p.RequestID.IsValid() {
		return jsonrpc.ID{}, false
	}
	return *p.RequestID, true
}

// dropQueued removes the requests with the given id that still wait for a
// slot: the client cancelled them, so they never run, and under JSON-RPC and
// MCP rules a cancelled request gets no response. Their slots in the queue
// are free at once, so cancelling queued work drains the queue. A request
// that already runs is the session's to cancel.
func (l *loop) dropQueued(id jsonrpc.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.queue[:0]
	for _, q := range l.queue {
		if q.req.ID == id {
			l.reqs.Done()
			l.o.budget.Release(q.charge)
			continue
		}
		kept = append(kept, q)
	}
	clear(l.queue[len(kept):]) // let the dropped requests be collected
	l.queue = kept
}
