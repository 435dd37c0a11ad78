package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// notifyTimeout bounds one list-changed delivery to a slow peer.
const notifyTimeout = 5 * time.Second

// listener is an open subscriptions/listen request (2026-07-28).
type listener struct {
	id     jsonrpc.ID
	filter mcp.SubscriptionFilter
	w      jsonrpc.Sender
}

// listen acknowledges a subscription, then holds the request open: list
// changes go out on it until the client cancels (no reply) or the session
// closes (an empty result ends it gracefully).
func (ss *Session) listen(ctx context.Context, req *jsonrpc.Request, w jsonrpc.Sender) (any, *jsonrpc.Error) {
	var p mcp.ListenParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid subscriptions/listen params: %v", err)
	}
	if p.Notifications == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid subscriptions/listen params: "notifications" is required`)
	}
	// Only tool list changes exist on this server; other kinds are left out
	// of the acknowledgement so the client can see they are not honoured.
	l := &listener{id: req.ID, filter: mcp.SubscriptionFilter{ToolsListChanged: p.Notifications.ToolsListChanged}, w: w}
	subMeta := mcp.Meta{mcp.MetaSubscriptionID: req.ID.Value()}
	ack, err := jsonrpc.NewNotification(mcp.NotificationListenAck, mcp.ListenAcknowledgedParams{Notifications: l.filter, Meta: subMeta})
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", err)
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session is closed")
	}
	if err := w.Send(ctx, ack); err != nil {
		ss.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot acknowledge subscription: %v", err)
	}
	if ss.listeners == nil {
		ss.listeners = map[*listener]struct{}{}
		ss.closing = make(chan struct{})
	}
	ss.listeners[l] = struct{}{}
	closing := ss.closing
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.listeners, l)
		ss.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return nil, nil
	case <-closing:
		return &mcp.EmptyResult{ResultType: mcp.ResultComplete, Meta: subMeta}, nil
	}
}

// toolsChanged tells this session's client that tools/list changed: on the
// connection for an initialized legacy session, on each subscription that
// asked for it for modern clients. Delivery runs in the background so that a
// slow peer never blocks registration.
func (ss *Session) toolsChanged() {
	ss.mu.Lock()
	var targets []func(context.Context) error
	if ss.ready && ss.out != nil && !ss.closed {
		out := ss.out
		targets = append(targets, func(ctx context.Context) error {
			return out.Send(ctx, &jsonrpc.Notification{Method: mcp.NotificationToolsListChanged})
		})
	}
	for l := range ss.listeners {
		if !l.filter.ToolsListChanged {
			continue
		}
		n, err := jsonrpc.NewNotification(mcp.NotificationToolsListChanged, struct {
			Meta mcp.Meta `json:"_meta"`
		}{mcp.Meta{mcp.MetaSubscriptionID: l.id.Value()}})
		if err != nil {
			continue
		}
		w := l.w
		targets = append(targets, func(ctx context.Context) error { return w.Send(ctx, n) })
	}
	ss.mu.Unlock()
	for _, send := range targets {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			defer cancel()
			if err := send(ctx); err != nil {
				ss.srv.cfg.logger.Debug("list_changed not delivered", "error", err)
			}
		}()
	}
}
