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
// sampling/createMessage) go to the downstream client through the
// downstream request's Elicit and CreateMessage.
//
// Limitation: one upstream session serves every call, and the client
// package does not say which of its calls an upstream request came with
// (over stdio nothing in the message does). So a request is routed only
// when exactly one downstream tools/call to that upstream is in flight,
// which then is the one it belongs to; with none or several it is refused
// with a JSON-RPC error saying so, never guessed. Log messages follow the
// same rule: with exactly one call in flight they go to that downstream
// request too (the gateway's logger always gets them). The downstream request
// asks its client in a 2025-era session; a 2026-07-28 downstream request
// has no back channel for a forwarded call and the upstream gets the
// error.

// track registers a downstream request calling u; the returned func
// forgets it.
func (u *upstream) track(req *server.Request, rl *relay) func() {
	u.mu.Lock()
	u.seq++
	n := u.seq
	if u.active == nil {
		u.active = map[uint64]activeCall{}
	}
	u.active[n] = activeCall{req, rl}
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		delete(u.active, n)
		u.mu.Unlock()
	}
}

// activeCall is a downstream tools/call being forwarded to an upstream.
type activeCall struct {
	req   *server.Request
	relay *relay
}

// soleCall returns the one downstream request calling u, or an error.
func (u *upstream) soleCall(method string) (*server.Request, error) {
	a, ok := u.sole()
	if !ok {
		u.mu.Lock()
		n := len(u.active)
		u.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"gateway: cannot forward %s: %d calls to upstream %q are in flight, and the request does not say which one it belongs to", method, n, u.spec.Name)
	}
	if a.req.Peer.Era != mcp.EraLegacy {
		// A 2026-07-28 caller is asked for input by an input_required
		// result, which a call already forwarded cannot become.
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"gateway: cannot forward %s from upstream %q: the calling client speaks %s, which the gateway cannot ask for input during a forwarded call (a 2025-11-25 session can be asked)",
			method, u.spec.Name, a.req.Peer.ProtocolVersion)
	}
	return a.req, nil
}

func (u *upstream) sole() (activeCall, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.active) == 1 {
		for _, a := range u.active {
			return a, true
		}
	}
	return activeCall{}, false
}

// relay passes what an upstream sends during one call (progress, log
// messages) to the downstream request, in order, on its own goroutine:
// the client's callbacks run on the goroutine reading the upstream and
// must not block. Reports are dropped when the downstream is too slow
// (64 queued), never the call; finish waits for the queue to empty,
// before the response is sent.
type relay struct {
	ctx  context.Context
	req  *server.Request
	ch   chan func()
	done chan struct{}
	mu   sync.Mutex
	shut bool
	// progress state, used on the relay's goroutine only
	last float64
	sent bool
}

func newRelay(ctx context.Context, req *server.Request) *relay {
	r := &relay{ctx: ctx, req: req, ch: make(chan func(), 64), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for f := range r.ch {
			f()
		}
	}()
	return r
}

func (r *relay) push(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shut {
		return // after the call: too late
	}
	select {
	case r.ch <- f:
	default:
	}
}

// progress returns the client progress callback for a downstream token.
func (r *relay) progress(token json.RawMessage) func(client.Progress) {
	return func(p client.Progress) {
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
	if !r.shut {
		r.shut = true
		close(r.ch)
	}
	r.mu.Unlock()
	<-r.done
}

func (u *upstream) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	req, err := u.soleCall(mcp.MethodElicitationCreate)
	if err != nil {
		return nil, err
	}
	res, err := req.Elicit(ctx, p)
	if err != nil {
		return nil, downstreamError(mcp.MethodElicitationCreate, err)
	}
	return res, nil
}

func (u *upstream) sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	req, err := u.soleCall(mcp.MethodCreateMessage)
	if err != nil {
		return nil, err
	}
	res, err := req.CreateMessage(ctx, p)
	if err != nil {
		return nil, downstreamError(mcp.MethodCreateMessage, err)
	}
	return res, nil
}

// downstreamError passes the downstream client's refusal on as it was, and
// anything else as -32603.
func downstreamError(method string, err error) error {
	if je, ok := jsonrpc.AsError(err); ok {
		return je
	}
	var ce *server.ClientError
	if errors.As(err, &ce) {
		e := jsonrpc.NewError(ce.Code, "%s", ce.Message)
		if len(ce.Data) > 0 {
			e.Data = ce.Data
		}
		return e
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "gateway: %s could not be forwarded downstream: %v", method, err)
}

// inputOptions are the client options that declare and answer the
// requests above.
func (u *upstream) inputOptions() []client.Option {
	return []client.Option{
		client.WithElicitationHandler(u.elicit),
		client.WithSamplingHandler(u.sample),
	}
}
