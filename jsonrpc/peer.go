package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// ErrPeerClosed is the error of a call made or pending when its Peer closed
// without a more specific reason.
var ErrPeerClosed = errors.New("jsonrpc: connection closed")

// Peer keeps the requests one side of a connection has sent and awaits: it
// allocates their ids, matches responses to them, routes progress
// notifications by token, bounds each wait, and fails every waiting call when
// the connection ends. Servers and clients use it alike. It is safe for
// concurrent use.
type Peer struct {
	next atomic.Int64

	mu      sync.Mutex
	pending map[ID]*Pending
	tokens  map[string]*Pending
	err     error // set once closed
}

// Pending is one request awaiting its response.
type Pending struct {
	// ID is the request's id.
	ID ID
	// Token is the progress token to send in _meta, "" when no progress was
	// asked for.
	Token string

	onProgress func(params json.RawMessage)
	ch         chan Outcome // buffered: the first outcome wins
	answered   atomic.Bool
}

// Outcome ends a Pending request: its response, or the error that ended the
// wait (the connection closed, for example).
type Outcome struct {
	Response *Response
	Err      error
}

// NewPeer returns an empty Peer.
func NewPeer() *Peer { return &Peer{} }

// NewPeerAt returns a Peer whose first request id is first+1: copies of one
// session in several processes (each sending requests to the same client)
// start far apart, so that a response reaching any of them names the
// request of exactly one.
func NewPeerAt(first int64) *Peer {
	p := &Peer{}
	p.next.Store(first)
	return p
}

// Start registers a new outgoing request. With onProgress set it also gets a
// progress token; notifications carrying that token go to onProgress, in
// order, on the goroutine that delivers them (it must not block).
func (p *Peer) Start(onProgress func(params json.RawMessage)) (*Pending, error) {
	n := p.next.Add(1)
	pd := &Pending{ID: Int64ID(n), onProgress: onProgress, ch: make(chan Outcome, 1)}
	if onProgress != nil {
		pd.Token = "p-" + strconv.FormatInt(n, 10)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	if p.pending == nil {
		p.pending = map[ID]*Pending{}
	}
	p.pending[pd.ID] = pd
	if pd.Token != "" {
		if p.tokens == nil {
			p.tokens = map[string]*Pending{}
		}
		p.tokens[pd.Token] = pd
	}
	return pd, nil
}

// Finish forgets a request: a later response to it is unexpected.
func (p *Peer) Finish(pd *Pending) {
	p.mu.Lock()
	if p.pending[pd.ID] == pd {
		delete(p.pending, pd.ID)
	}
	if pd.Token != "" && p.tokens[pd.Token] == pd {
		delete(p.tokens, pd.Token)
	}
	p.mu.Unlock()
}

// Deliver hands a response to the request it answers. It reports false when
// no request with that id is waiting; the caller logs and drops it.
func (p *Peer) Deliver(r *Response) bool {
	p.mu.Lock()
	pd := p.pending[r.ID]
	p.mu.Unlock()
	if pd == nil {
		return false
	}
	pd.deliver(Outcome{Response: r})
	return true
}

// Progress routes the params of a notifications/progress to the request
// whose token they carry. It reports false for an unknown token.
func (p *Peer) Progress(params json.RawMessage) bool {
	var head struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if wirejson.Unmarshal(params, &head) != nil {
		return false
	}
	tok := string(bytes.TrimSpace(head.Token))
	var s string
	if wirejson.Unmarshal(head.Token, &s) == nil {
		tok = s
	}
	p.mu.Lock()
	pd := p.tokens[tok]
	p.mu.Unlock()
	if pd == nil || pd.onProgress == nil {
		return false
	}
	pd.onProgress(params)
	return true
}

// Fail ends the wait of the request with the given id with err.
func (p *Peer) Fail(id ID, err error) bool {
	p.mu.Lock()
	pd := p.pending[id]
	p.mu.Unlock()
	if pd == nil {
		return false
	}
	pd.deliver(Outcome{Err: err})
	return true
}

// FailAll ends the wait of every pending request with err; the Peer stays
// usable.
func (p *Peer) FailAll(err error) {
	for _, pd := range p.snapshot() {
		pd.deliver(Outcome{Err: err})
	}
}

// Close fails every pending request with err (ErrPeerClosed when nil) and
// refuses new ones with it.
func (p *Peer) Close(err error) {
	if err == nil {
		err = ErrPeerClosed
	}
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.FailAll(err)
}

// Len returns how many requests are waiting.
func (p *Peer) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

func (p *Peer) snapshot() []*Pending {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*Pending, 0, len(p.pending))
	for _, pd := range p.pending {
		out = append(out, pd)
	}
	return out
}

func (pd *Pending) deliver(o Outcome) {
	pd.answered.Store(true)
	select {
	case pd.ch <- o:
	default:
	}
}

// Answered reports whether an outcome has been delivered.
func (pd *Pending) Answered() bool { return pd.answered.Load() }

// Wait returns the channel the outcome arrives on, once: for callers that
// select on it together with other events.
func (pd *Pending) Wait() <-chan Outcome { return pd.ch }

// Outcome waits for the response, or for ctx to end.
func (pd *Pending) Outcome(ctx context.Context) (*Response, error) {
	select {
	case o := <-pd.ch:
		return o.Response, o.Err
	case <-ctx.Done():
		return nil, contextError(ctx)
	}
}

// CallOptions adjust one Call.
type CallOptions struct {
	// Timeout bounds the wait; 0 means none beyond ctx.
	Timeout time.Duration
	// OnProgress receives progress notifications for the request (a token
	// is sent in params._meta.progressToken by the caller's send).
	OnProgress func(params json.RawMessage)
	// Cancel is called when the wait ends before the response (ctx done or
	// timeout), to tell the other side: typically it sends
	// notifications/cancelled for the id.
	Cancel func(id ID, reason error)
}

// Call sends a request through send and waits for its response. send gets
// the request with its id (and, via the returned Pending's Token, the
// progress token) filled in. A JSON-RPC error response is returned as a
// *Error.
func (p *Peer) Call(ctx context.Context, method string, params json.RawMessage, send func(context.Context, *Request, *Pending) error, opts *CallOptions) (json.RawMessage, error) {
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, &TimeoutError{Method: method, After: o.Timeout})
		defer cancel()
	}
	pd, err := p.Start(o.OnProgress)
	if err != nil {
		return nil, err
	}
	defer p.Finish(pd)
	if err := send(ctx, &Request{ID: pd.ID, Method: method, Params: params}, pd); err != nil {
		return nil, err
	}
	resp, err := pd.Outcome(ctx)
	if err != nil {
		if ctx.Err() != nil && o.Cancel != nil {
			o.Cancel(pd.ID, err)
		}
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// TimeoutError is the error of a Call that got no response in time.
type TimeoutError struct {
	Method string
	After  time.Duration
}

func (e *TimeoutError) Error() string {
	return "jsonrpc: no response to " + strconv.Quote(e.Method) + " within " + e.After.String()
}

// Is makes a TimeoutError match context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

func contextError(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return ctx.Err()
}
