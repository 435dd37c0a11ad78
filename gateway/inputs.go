package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// A 2026-07-28 client is asked for input by an input_required result and
// answers by calling again with inputResponses and the requestState. To a
// 2026-07-28 upstream, which asks the same way, the rounds are relayed as
// they are (forward.go). A 2025-era upstream asks in the middle of its
// call, so a call to it forwarded for such a client runs on its own
// goroutine: when the upstream asks, the downstream request ends with
// input_required while the upstream call waits, parked under a random,
// single-use requestState; the client's retry delivers the answer to the
// waiting upstream request and waits for what comes next (the result, or
// another question). A parked call lives as long as its upstream call
// (the upstream's timeout); the retry must come to the same gateway
// process.

// inputKey is the key of the one input request of a gateway's
// input_required result, and of its answer.
const inputKey = "input"

// Defaults of InputLimits.
const (
	DefaultMaxPendingInputs = 1024
	DefaultPendingPerCaller = 16
	DefaultInputTimeout     = 30 * time.Second
)

// InputLimits bound the forwarded calls waiting for their callers' answers
// to an upstream's question: parked for a 2026-07-28 client's retry, or
// asked on a 2025-era client's call stream; both count alike. A zero field
// takes its default.
type InputLimits struct {
	// Pending is how many calls may wait at once, for every caller
	// together (default DefaultMaxPendingInputs); past it the upstream's
	// question is refused with an error.
	Pending int
	// PerCaller is how many of them one caller (an identity; anonymous
	// callers share one) may hold (default DefaultPendingPerCaller), so
	// that a caller that never answers cannot take the others' share.
	PerCaller int
	// Timeout is how long an upstream's question waits for the caller's
	// answer (default DefaultInputTimeout, well under the upstream
	// timeout): an abandoned round then ends, the upstream's question is
	// answered with an error and its call goes on or ends as the upstream
	// decides, and a late retry is refused as expired.
	Timeout time.Duration
}

func (l InputLimits) withDefaults() InputLimits {
	limits.Default(&l.Pending, DefaultMaxPendingInputs)
	limits.Default(&l.PerCaller, DefaultPendingPerCaller)
	limits.Default(&l.Timeout, DefaultInputTimeout)
	return l
}

// errInputTimeout answers an upstream question its caller did not answer
// in time.
var errInputTimeout = errors.New("gateway: the calling client did not answer in time (the gateway's input timeout)")

// errCallEnded answers an upstream question whose call has ended.
var errCallEnded = errors.New("gateway: the call this request belongs to has ended")

// parkedCalls are the forwarded calls waiting for a client's retry, by
// requestState, and the questions relayed to 2025-era callers on their
// calls' streams (relayed), with how many of both each caller holds: both
// count against InputLimits alike.
type parkedCalls struct {
	mu      sync.Mutex
	limits  InputLimits
	calls   map[string]*forwarded
	relayed int
	byOwner map[string]int
}

// roomLocked refuses one more call waiting for owner's input when a limit
// is reached. p.mu is held.
func (p *parkedCalls) roomLocked(owner, method string) *jsonrpc.Error {
	if len(p.calls)+p.relayed >= p.limits.Pending {
		return jsonrpc.NewError(jsonrpc.CodeOverloaded,
			"gateway: %d calls already wait for their clients' input, the limit; %s is refused", p.limits.Pending, method)
	}
	if p.byOwner[owner] >= p.limits.PerCaller {
		return jsonrpc.NewError(jsonrpc.CodeOverloaded,
			"gateway: this caller already has %d calls waiting for its input, the limit per caller; %s is refused", p.limits.PerCaller, method)
	}
	if p.byOwner == nil {
		p.byOwner = map[string]int{}
	}
	return nil
}

// hold counts a question relayed to a 2025-era caller (owner) on its
// call's stream as a call waiting for input; release, once it is answered
// or given up, uncounts it.
func (p *parkedCalls) hold(owner, method string) (release func(), err *jsonrpc.Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.roomLocked(owner, method); err != nil {
		return nil, err
	}
	p.relayed++
	p.byOwner[owner]++
	return sync.OnceFunc(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.relayed--
		if p.byOwner[owner]--; p.byOwner[owner] <= 0 {
			delete(p.byOwner, owner)
		}
	}), nil
}

// put parks f, which waits on a, and returns its requestState; a
// JSON-RPC error naming the limit when one is reached. The call is unparked
// and its question answered with errInputTimeout if no retry takes it
// within the input timeout.
func (p *parkedCalls) put(f *forwarded, a *inputAsk) (string, *jsonrpc.Error) {
	var b [18]byte
	_, _ = rand.Read(b[:])
	state := statePrefix + base64.RawURLEncoding.EncodeToString(b[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.roomLocked(f.owner, a.method); err != nil {
		return "", err
	}
	if p.calls == nil {
		p.calls = map[string]*forwarded{}
	}
	p.calls[state] = f
	p.byOwner[f.owner]++
	f.mu.Lock()
	f.pending, f.state = a, state
	f.mu.Unlock()
	time.AfterFunc(p.limits.Timeout, func() {
		if p.expire(f, state) {
			a.reply <- inputAnswer{err: errInputTimeout}
		}
	})
	return state, nil
}

// expire unparks f if it is still parked under state; true if it was.
func (p *parkedCalls) expire(f *forwarded, state string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls[state] != f {
		return false
	}
	p.removeLocked(state, f)
	return true
}

// errClosing answers the questions of calls parked when the gateway
// closes.
var errClosing = errors.New("gateway: closing; the calling client can no longer answer")

// endAll unparks every parked call, answering its question with err.
func (p *parkedCalls) endAll(err error) {
	p.mu.Lock()
	var asks []*inputAsk
	for state, f := range p.calls {
		f.mu.Lock()
		if a := f.pending; a != nil {
			asks = append(asks, a)
		}
		f.mu.Unlock()
		p.removeLocked(state, f)
	}
	p.mu.Unlock()
	for _, a := range asks {
		a.reply <- inputAnswer{err: err}
	}
}

// removeLocked forgets the call parked under state.
func (p *parkedCalls) removeLocked(state string, f *forwarded) {
	delete(p.calls, state)
	if p.byOwner[f.owner]--; p.byOwner[f.owner] <= 0 {
		delete(p.byOwner, f.owner)
	}
	f.mu.Lock()
	if f.state == state {
		f.pending, f.state = nil, ""
	}
	f.mu.Unlock()
}

// take unparks the call state names, when it is one of tool's and the
// caller (owner) is the one it was parked for.
func (p *parkedCalls) take(state, tool, owner string) (*forwarded, *inputAsk, *jsonrpc.Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.calls[state]
	if !ok || f.owner != owner {
		return nil, nil, errUnknownState(tool).(*jsonrpc.Error)
	}
	if f.name != tool {
		return nil, nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "requestState belongs to a call of another tool, not %s", tool)
	}
	f.mu.Lock()
	a := f.pending
	f.mu.Unlock()
	p.removeLocked(state, f)
	return f, a, nil
}

// drop forgets f if it is parked (its upstream call ended meanwhile).
func (p *parkedCalls) drop(f *forwarded) {
	f.mu.Lock()
	state := f.state
	f.mu.Unlock()
	if state == "" {
		return
	}
	p.mu.Lock()
	if p.calls[state] == f {
		p.removeLocked(state, f)
	}
	p.mu.Unlock()
}

// len is how many calls wait for their callers' input: parked, and
// asked on a 2025-era caller's stream.
func (p *parkedCalls) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls) + p.relayed
}

// callModern forwards a tools/call of a 2026-07-28 client (see above).
func (g *Gateway) callModern(ctx context.Context, name string, r route, args, token json.RawMessage, req *server.Request) any {
	f := &forwarded{g: g, up: r.up, name: name, tool: r.name, modern: true,
		asks: make(chan *inputAsk), outcome: make(chan callOutcome, 1), done: make(chan struct{})}
	f.owner = req.Principal().Key()
	uctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	f.cancel = cancel
	uctx = context.WithValue(uctx, forwardedKey{}, f)
	opts := []client.CallOption{client.WithTimeout(r.up.timeout())}
	if len(token) > 0 {
		opts = append(opts, client.WithProgress(f.progress))
	}
	opts = append(opts, r.up.callLog(f)...)
	untrack := r.up.track(f)
	start := time.Now()
	go func() {
		var raw json.RawMessage
		err := g.forward(uctx, r.up, func(ctx context.Context, c *client.Client) error {
			var err error
			raw, err = c.CallToolRaw(ctx, r.name, args, opts...)
			return err
		})
		untrack()
		g.observe(uctx, r.up, mcp.MethodCallTool, name, toolOutcome(uctx, err, raw), start)
		cancel(nil)
		g.inputs.drop(f)
		f.outcome <- callOutcome{raw, err}
		close(f.done)
	}()
	return f.await(ctx, req, token)
}

// statePrefix starts every requestState of a parked call.
const statePrefix = "gw1."

// parked says whether a requestState (raw JSON) is one of a parked call.
func parked(state json.RawMessage) bool {
	return bytes.HasPrefix(state, []byte(`"`+statePrefix))
}

func errUnknownState(tool string) error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams,
		"requestState is unknown, already used or expired (the call it continued has ended): call %s again without it", tool)
}

// resume continues a parked call with the client's answer: a retried
// tools/call of a 2026-07-28 client carrying the gateway's requestState.
func (g *Gateway) resume(ctx context.Context, req *server.Request, name string, rawState, responses, token json.RawMessage) (any, error) {
	var state string
	if err := wirejson.Unmarshal(rawState, &state); err != nil {
		return nil, errUnknownState(name)
	}
	var answers map[string]json.RawMessage
	if len(responses) > 0 {
		if err := wirejson.Unmarshal(responses, &answers); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "inputResponses must be an object of answers: %v", err)
		}
	}
	answer := answers[inputKey]
	if len(answer) == 0 || answer[0] != '{' {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "inputResponses[%q]: the answer to the input request is missing or not an object", inputKey)
	}
	f, a, jerr := g.inputs.take(state, name, req.Principal().Key())
	if jerr != nil {
		return nil, jerr
	}
	a.reply <- inputAnswer{raw: answer}
	return f.await(ctx, req, token), nil
}

// await waits for the upstream call's next step: its end, answered to req,
// or a question, which parks the call and answers req with input_required.
// When ctx ends the upstream call is cancelled.
func (f *forwarded) await(ctx context.Context, req *server.Request, token json.RawMessage) any {
	rl := f.startRound(ctx, req, token)
	stop := context.AfterFunc(ctx, func() { f.cancel(context.Cause(ctx)) })
	for {
		select {
		case o := <-f.outcome:
			stop()
			f.endRound(rl)
			return toolResult(ctx, f.up, f.tool, o.raw, o.err)
		case a := <-f.asks:
			if ctx.Err() != nil {
				a.reply <- inputAnswer{err: errCallEnded}
				continue
			}
			state, jerr := f.g.inputs.put(f, a)
			if jerr != nil {
				a.reply <- inputAnswer{err: jerr}
				continue
			}
			stop() // the upstream call outlives this request now
			f.endRound(rl)
			return &mcp.InputRequiredResult{
				InputRequests: map[string]mcp.InputRequest{inputKey: {Method: a.method, Params: a.params}},
				RequestState:  state,
			}
		}
	}
}

// askModern hands an upstream question to the call's current or next
// round and waits for the client's answer.
func (f *forwarded) askModern(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	a := &inputAsk{method: method, params: params, reply: make(chan inputAnswer, 1)}
	select {
	case f.asks <- a:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-f.done:
		return nil, errCallEnded
	}
	select {
	case ans := <-a.reply:
		return ans.raw, ans.err
	case <-ctx.Done():
		f.g.inputs.drop(f)
		return nil, context.Cause(ctx)
	case <-f.done:
		return nil, errCallEnded
	}
}
