package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Requests an upstream makes during a call (elicitation/create,
// sampling/createMessage, roots/list) go to the downstream client that made
// the call: as a server-to-client request in a 2025-era session, as an
// input_required round in 2026-07-28 (inputs.go).
//
// Which call a request belongs to: the client says so when it knows (over
// HTTP the request comes on the call's reply stream; a 2026-07-28 upstream
// asks in the call's own result), by the call's context. A 2025-era stdio
// upstream sends nothing that tells; its request is routed only when
// exactly one call to that upstream is in flight, and refused, never
// guessed, with several. Log messages do alike: over HTTP those on a
// call's reply stream reach its caller, elsewhere they reach the only call
// in flight (the gateway's logger always gets them).

// inputMethods are the requests an upstream may make of the client during a
// call.
var inputMethods = map[string]bool{
	mcp.MethodElicitationCreate: true,
	mcp.MethodCreateMessage:     true,
	mcp.MethodListRoots:         true,
}

// upstreamCapabilities are what the gateway declares to upstreams for the
// downstream clients it passes their requests to; one that a downstream
// client lacks is refused by it (or by its server session) as usual.
var upstreamCapabilities = mcp.ClientCapabilities{
	Roots:       &mcp.ListChangedCapability{},
	Sampling:    json.RawMessage(`{"tools":{}}`),
	Elicitation: json.RawMessage(`{"form":{},"url":{}}`),
}

// forwardedKey is the context key of the *forwarded a call to an upstream
// is made for.
type forwardedKey struct{}

// forwarded is one downstream tools/call being forwarded: where the
// upstream's requests and reports during it go.
type forwarded struct {
	g    *Gateway
	up   *upstream
	name string // the downstream tool name
	tool string // the upstream's name for it

	mu    sync.Mutex
	req   *server.Request // the downstream request of the current round
	relay *relay          // nil between rounds
	token json.RawMessage // the current round's progress token

	// A call from a 2026-07-28 client runs on its own goroutine, so that
	// the downstream request can end with input_required while the
	// upstream call waits for the answer (inputs.go).
	modern  bool
	asks    chan *inputAsk
	outcome chan callOutcome        // buffered: the upstream call's end
	done    chan struct{}           // closed when the upstream call has ended
	cancel  context.CancelCauseFunc // ends the upstream call, with the round's cause
	pending *inputAsk               // the question the parked call waits on
	state   string                  // its requestState while parked
	owner   string                  // who may answer it (auth.Principal.Key)
}

// callOutcome is how an upstream call ended.
type callOutcome struct {
	raw json.RawMessage
	err error
}

// inputAsk is one upstream request waiting for the downstream's answer.
type inputAsk struct {
	method string
	params json.RawMessage
	reply  chan inputAnswer // buffered
}

type inputAnswer struct {
	raw json.RawMessage
	err error
}

// startRound makes req the downstream request reports go to, with its
// progress token.
func (f *forwarded) startRound(ctx context.Context, req *server.Request, token json.RawMessage) *relay {
	rl := newRelay(ctx, req)
	f.mu.Lock()
	f.req, f.relay, f.token = req, rl, token
	f.mu.Unlock()
	return rl
}

// endRound sends what is queued for the round's request and detaches it.
func (f *forwarded) endRound(rl *relay) {
	f.mu.Lock()
	if f.relay == rl {
		f.relay, f.token = nil, nil
	}
	f.mu.Unlock()
	rl.finish()
}

// progress passes an upstream progress report to the current round's
// downstream request under its token.
func (f *forwarded) progress(p client.Progress) {
	f.mu.Lock()
	rl, token := f.relay, f.token
	f.mu.Unlock()
	if rl != nil && len(token) > 0 {
		rl.progress(token, p)
	}
}

func (f *forwarded) log(m client.LogMessage) {
	f.mu.Lock()
	rl := f.relay
	f.mu.Unlock()
	if rl != nil {
		rl.log(m)
	}
}

// ask gets the downstream client's answer to an upstream request.
func (f *forwarded) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	f.mu.Lock()
	req := f.req
	f.mu.Unlock()
	if req != nil {
		// Nothing is asked of a client that cannot answer: a 2026-07-28
		// caller's capabilities are those its request declares.
		if err := req.Declared(method); err != nil {
			return nil, downstreamError(method, err)
		}
	}
	if f.modern {
		return f.askModern(ctx, method, params)
	}
	// A 2025-era caller is asked on its call's stream; one that does not
	// answer holds the upstream's question no longer than the input
	// timeout, and no more of them at once than its share.
	var owner string
	if req != nil {
		owner = req.Principal().Key()
	}
	release, jerr := f.g.inputs.hold(owner, method)
	if jerr != nil {
		return nil, jerr
	}
	defer release()
	ctx, cancel := context.WithTimeoutCause(ctx, f.g.opts.limits.Inputs.Timeout, errInputTimeout)
	defer cancel()
	out, err := req.Input(ctx, map[string]mcp.InputRequest{inputKey: {Method: method, Params: params}})
	if err != nil {
		return nil, downstreamError(method, err)
	}
	return out[inputKey], nil
}

// track registers f as a call in flight to u; the returned func forgets it.
func (u *upstream) track(f *forwarded) func() {
	u.mu.Lock()
	u.seq++
	n := u.seq
	if u.active == nil {
		u.active = map[uint64]*forwarded{}
	}
	u.active[n] = f
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		delete(u.active, n)
		u.mu.Unlock()
	}
}

// callFor finds the call an upstream request belongs to: the one its
// context names, else the only call to u in flight.
func (u *upstream) callFor(ctx context.Context, method string) (*forwarded, error) {
	if f, ok := ctx.Value(forwardedKey{}).(*forwarded); ok && f.up == u {
		return f, nil
	}
	f, ok := u.sole()
	if ok {
		return f, nil
	}
	u.mu.Lock()
	n := len(u.active)
	u.mu.Unlock()
	if n == 0 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"gateway: %s from upstream %q outside a call: only a client calling through the gateway can answer it", method, u.spec.Name)
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
		"gateway: cannot forward %s: %d calls to upstream %q are in flight, and the request does not say which one it belongs to", method, n, u.spec.Name)
}

func (u *upstream) sole() (*forwarded, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.active) == 1 {
		for _, f := range u.active {
			return f, true
		}
	}
	return nil, false
}

// receiving answers an upstream's elicitation, sampling and roots requests
// by asking the downstream client of the call they belong to; the params
// and the answer pass through as they are.
func (u *upstream) receiving(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if !inputMethods[req.Method] {
			return next(ctx, req)
		}
		f, err := u.callFor(ctx, req.Method)
		if err != nil {
			return nil, err
		}
		params := req.Params
		if len(params) == 0 {
			params = json.RawMessage(`{}`)
		}
		return f.ask(ctx, req.Method, params)
	}
}

// inputOptions are the client options that declare and answer the
// requests above.
func (u *upstream) inputOptions() []client.Option {
	return []client.Option{
		client.WithCapabilities(upstreamCapabilities),
		client.WithReceivingMiddleware(u.receiving),
		// Questions parked for their callers never take the capacity
		// the upstream's other requests need.
		client.WithLimits(client.Limits{MaxServerRequests: client.DefaultMaxServerRequests + u.g.opts.limits.Inputs.Pending}),
	}
}

// relay passes what an upstream sends during one call (progress, log
// messages) to the downstream request, in order, on its own goroutine,
// started with the first report (most calls have none): the client's
// callbacks run on the goroutine reading the upstream and must not block.
// Reports are dropped when the downstream is too slow (64 queued), never
// the call; finish waits for the queue to empty, before the response is
// sent.
type relay struct {
	ctx  context.Context
	req  *server.Request
	mu   sync.Mutex
	ch   chan func()   // nil until the first report
	done chan struct{} // closed when the goroutine has sent everything
	shut bool
	// progress state, used on the relay's goroutine only
	last float64
	sent bool
}

func newRelay(ctx context.Context, req *server.Request) *relay {
	return &relay{ctx: ctx, req: req}
}

func (r *relay) push(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shut {
		return // after the call: too late
	}
	if r.ch == nil {
		r.ch, r.done = make(chan func(), 64), make(chan struct{})
		go func(ch chan func(), done chan struct{}) {
			defer close(done)
			for f := range ch {
				f()
			}
		}(r.ch, r.done)
	}
	select {
	case r.ch <- f:
	default:
	}
}

// progress queues one progress report under the downstream token.
func (r *relay) progress(token json.RawMessage, p client.Progress) {
	r.push(func() {
		if r.sent && p.Progress <= r.last {
			return // progress must increase downstream too
		}
		params := mcp.ProgressParams{ProgressToken: token, Progress: p.Progress, Message: p.Message}
		if p.Total > 0 {
			total := p.Total
			params.Total = &total
		}
		if r.req.Notify(r.ctx, mcp.NotificationProgress, params) == nil {
			r.last, r.sent = p.Progress, true
		}
	})
}

// log passes an upstream log message to the downstream request's logger
// (the server sends it if the downstream asked for that level).
func (r *relay) log(m client.LogMessage) {
	r.push(func() { _ = r.req.Log(r.ctx, m.Level, m.Logger, m.Data) })
}

// finish waits until everything queued is sent.
func (r *relay) finish() {
	if r == nil {
		return
	}
	r.mu.Lock()
	ch, done := r.ch, r.done
	if !r.shut {
		r.shut = true
		if ch != nil {
			close(ch)
		}
	}
	r.mu.Unlock()
	if done != nil {
		<-done
	}
}

// downstreamError passes the downstream client's refusal on as it was, and
// anything else as -32603.
func downstreamError(method string, err error) error {
	if je, ok := jsonrpc.AsError(err); ok {
		return je
	}
	var ce *server.ClientError
	if errors.As(err, &ce) {
		return passedError(ce.Code, ce.Message, ce.Data)
	}
	var mc *server.MissingCapabilityError
	if errors.As(err, &mc) {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "gateway: the calling client cannot answer %s: it did not declare the %s capability", method, mc.Capability)
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "gateway: %s could not be forwarded downstream: %v", method, err)
}
