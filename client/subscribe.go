package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// ErrWrongEra is returned (wrapped) by a method the negotiated era does not
// have: Subscribe and Unsubscribe exist in legacy sessions only, Listen in
// 2026-07-28 only.
var ErrWrongEra = errors.New("not available in the negotiated protocol era")

// Subscribe asks a legacy (2025-era) session's server for
// notifications/resources/updated about uri (resources/subscribe); they
// reach WithResourceUpdatedHandler and WithNotificationHandler. In
// 2026-07-28 it fails with ErrWrongEra: use Listen with
// ResourceSubscriptions.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	return c.subscribe(ctx, mcp.MethodSubscribe, uri)
}

// Unsubscribe ends a legacy session's subscription to uri
// (resources/unsubscribe). In 2026-07-28 it fails with ErrWrongEra: close
// the Subscription instead.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	return c.subscribe(ctx, mcp.MethodUnsubscribe, uri)
}

func (c *Client) subscribe(ctx context.Context, method, uri string) error {
	if c.Era() != mcp.EraLegacy {
		return fmt.Errorf("client: %s: %w (2026-07-28 uses subscriptions/listen: Listen)", method, ErrWrongEra)
	}
	_, err := c.Call(ctx, method, mcp.SubscribeParams{URI: uri})
	return err
}

// Subscription is an open 2026-07-28 subscriptions/listen request (see
// Listen).
type Subscription struct {
	c      *Client
	fn     func(method string, params json.RawMessage)
	cancel context.CancelFunc
	done   chan struct{}

	acked   chan struct{}
	ackOnce sync.Once
	filter  mcp.SubscriptionFilter // set once before acked is closed

	mu     sync.Mutex
	ids    []jsonrpc.ID // the wire ids of the listen request (a version retry sends another)
	closed bool
	err    error
}

// Listen opens a 2026-07-28 subscription (subscriptions/listen, a request
// the server holds open) for the notifications filter names, and returns
// once the server has acknowledged it (notifications/subscriptions/
// acknowledged), with the subset it honours in Filter. The notifications
// then sent on it (list_changed, resources/updated) are acted on as any
// others (the tools cache is dropped; WithResourceUpdatedHandler and
// WithNotificationHandler get them) and are also given to fn when it is not
// nil, on the goroutine reading them: fn must not block. The subscription
// lasts until ctx ends, Close is called, the server ends it or the client
// closes; WithTimeout bounds only the wait for the acknowledgement. In a
// legacy session it fails with ErrWrongEra: use Subscribe, and the
// session's own stream, instead.
func (c *Client) Listen(ctx context.Context, filter mcp.SubscriptionFilter, fn func(method string, params json.RawMessage)) (*Subscription, error) {
	if c.Era() != mcp.EraModern {
		return nil, fmt.Errorf("client: %s: %w (legacy sessions use resources/subscribe: Subscribe)", mcp.MethodSubscriptionListen, ErrWrongEra)
	}
	out, err := newOutgoing(mcp.MethodSubscriptionListen, mcp.ListenParams{Notifications: &filter})
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &Subscription{c: c, fn: fn, cancel: cancel, done: make(chan struct{}), acked: make(chan struct{})}
	cc := callConfig{timeout: -1, hasTimeout: true, onStart: s.started}
	go func() {
		defer close(s.done)
		_, err := c.call(sctx, out, cc, false)
		c.subs.remove(s)
		s.mu.Lock()
		if !s.closed {
			s.err = err
		}
		s.mu.Unlock()
	}()
	var expire <-chan time.Time
	if d := c.cfg.timeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expire = t.C
	}
	select {
	case <-s.acked:
		return s, nil
	case <-s.done:
		if err := s.Err(); err != nil {
			return nil, err
		}
		return nil, &ProtocolError{Op: mcp.MethodSubscriptionListen, Reason: "the server ended the subscription without acknowledging it"}
	case <-ctx.Done():
		s.stop()
		return nil, &TransportError{Op: mcp.MethodSubscriptionListen, Err: ctxErr(ctx)}
	case <-expire:
		s.stop()
		return nil, &TransportError{Op: mcp.MethodSubscriptionListen, Err: fmt.Errorf("no acknowledgement: %w", c.timeoutErr)}
	}
}

// started registers a wire id of the listen request, by which its
// notifications are routed (their _meta subscriptionId, or over HTTP the
// stream they come on).
func (s *Subscription) started(id jsonrpc.ID) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	s.c.subs.add(id, s)
}

// stop ends the request and waits until it has ended.
func (s *Subscription) stop() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	<-s.done
}

// Filter returns the notifications the server acknowledged: the subset of
// those asked for that it honours.
func (s *Subscription) Filter() mcp.SubscriptionFilter { return s.filter }

// Done is closed once the subscription has ended.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err returns why the subscription ended: nil while it lasts, after Close
// and when the server ended it with a result; else the failure (the
// context's end is a *TransportError).
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription (the server is told to stop: the HTTP stream
// is closed, or notifications/cancelled is sent) and waits until it has
// ended. It is safe to call more than once.
func (s *Subscription) Close() error {
	s.stop()
	return nil
}

// notify hands a notification on the subscription to it.
func (s *Subscription) notify(n *jsonrpc.Notification) {
	if n.Method == mcp.NotificationListenAck {
		s.ackOnce.Do(func() {
			var p mcp.ListenAcknowledgedParams
			if err := wirejson.Unmarshal(n.Params, &p); err != nil {
				s.c.cfg.logger.Debug("malformed subscription acknowledgement", "error", err)
			}
			s.filter = p.Notifications
			close(s.acked)
		})
		return
	}
	if s.fn != nil {
		s.fn(n.Method, n.Params)
	}
}

// subscriptions are the open Listen requests, by wire id.
type subscriptions struct {
	n    atomic.Int32
	mu   sync.Mutex
	byID map[jsonrpc.ID]*Subscription
}

func (ss *subscriptions) add(id jsonrpc.ID, s *Subscription) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID == nil {
		ss.byID = map[jsonrpc.ID]*Subscription{}
	}
	ss.byID[id] = s
	ss.n.Store(int32(len(ss.byID)))
}

func (ss *subscriptions) remove(s *Subscription) {
	s.mu.Lock()
	ids := s.ids
	s.mu.Unlock()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, id := range ids {
		if ss.byID[id] == s {
			delete(ss.byID, id)
		}
	}
	ss.n.Store(int32(len(ss.byID)))
}

// route gives a notification to the subscription it belongs to: the one
// its _meta subscriptionId names or, without one, the one whose reply
// stream it came on (call).
func (ss *subscriptions) route(n *jsonrpc.Notification, call jsonrpc.ID) {
	if ss.n.Load() == 0 {
		return
	}
	var head struct {
		Meta struct {
			ID *jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	id := call
	if len(n.Params) > 0 && wirejson.Unmarshal(n.Params, &head) == nil && head.Meta.ID != nil {
		id = *head.Meta.ID
	}
	if !id.IsValid() {
		return
	}
	ss.mu.Lock()
	s := ss.byID[id]
	ss.mu.Unlock()
	if s != nil {
		s.notify(n)
	}
}
