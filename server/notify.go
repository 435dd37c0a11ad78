package server

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// listener is an open subscriptions/listen request (2026-07-28).
type listener struct {
	owner  string // the principal's key: task notifications are its own
	id     jsonrpc.ID
	filter mcp.SubscriptionFilter
	w      jsonrpc.Sender
}

// listen acknowledges a subscription, then holds the request open: list
// changes go out on it until the client cancels (no reply) or the session
// closes (an empty result ends it gracefully).
func (s *Server) listen(ctx context.Context, r *Request) (any, error) {
	var p listenParams
	if err := decodeParams(r.Method, r.Params, &p); err != nil {
		return nil, err
	}
	if p.Notifications == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid subscriptions/listen params: "notifications" is required`)
	}
	if r.sender == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "this transport cannot stream subscription notifications")
	}
	ss := r.session
	if len(p.Notifications.TaskIDs) > 0 && !r.Peer.ClientCapabilities.HasExtension(mcp.ExtensionTasks) {
		return nil, missingTasksExtension("subscriptions/listen names taskIds, and this request did not declare the %s extension", mcp.ExtensionTasks)
	}
	// Tool list changes, and prompt list changes once AddPrompt has added
	// the prompt methods, are all this server sends; other kinds are left
	// out of the acknowledgement so the client can see they are not
	// honoured.
	l := &listener{id: r.ID, filter: mcp.SubscriptionFilter{
		ToolsListChanged:   p.Notifications.ToolsListChanged,
		PromptsListChanged: p.Notifications.PromptsListChanged && s.prompts.served.Load(),
		// Resource list changes and updates once a resource or template
		// is registered (resource.go, subscribe.go).
		ResourcesListChanged:  p.Notifications.ResourcesListChanged && s.resources.served.Load(),
		ResourceSubscriptions: s.honouredSubscriptions(p.Notifications.ResourceSubscriptions),
		TaskIDs:               s.honouredTasks(ctx, r, p.Notifications.TaskIDs),
	}, w: r.sender, owner: ownerOf(r)}
	subMeta := mcp.Meta{mcp.MetaSubscriptionID: r.ID.Value()}
	ack, err := jsonrpc.NewNotification(mcp.NotificationListenAck, mcp.ListenAcknowledgedParams{Notifications: l.filter, Meta: subMeta})
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", err)
	}
	// The listener is in place, and its session known to the server,
	// before the acknowledgement goes out: a client that changes a list as
	// soon as it is acknowledged must hear of it. Holding ss.mu while
	// acknowledging keeps any notification for the listener behind the
	// acknowledgement.
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session is closed")
	}
	if ss.listeners == nil {
		ss.listeners = map[*listener]struct{}{}
	}
	if !ss.registered {
		s.track(ss)
	}
	if ss.closing == nil {
		ss.closing = make(chan struct{})
	}
	ss.listeners[l] = struct{}{}
	if err := r.sender.Send(ctx, ack); err != nil {
		delete(ss.listeners, l)
		ss.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot acknowledge subscription: %v", err)
	}
	closing := ss.closing
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.listeners, l)
		ss.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-closing:
		return &mcp.EmptyResult{Meta: subMeta}, nil
	}
}

// changeSet is a set of list kinds that changed.
type changeSet uint8

const (
	changedTools changeSet = 1 << iota
	changedPrompts
	changedResources // resources or resource templates
)

// listChanged tells every session whose client wants to know that a list
// changed.
func (s *Server) listChanged(what changeSet) {
	for _, ss := range s.openSessions() {
		ss.listChanged(what)
	}
}

// listChanged records a change for this session's client and makes sure one
// goroutine is sending: changes that arrive while it sends are coalesced,
// so a burst of registrations costs each session at most one goroutine and
// two notifications, and a slow peer never blocks registration.
func (ss *Session) listChanged(what changeSet) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed || !ss.ready && len(ss.listeners) == 0 {
		return
	}
	ss.changed |= what
	if ss.notifier {
		return
	}
	ss.notifier = true
	go ss.sendChanges()
}

func (ss *Session) sendChanges() {
	for {
		ss.mu.Lock()
		what := ss.changed
		ss.changed = 0
		if what == 0 || ss.closed {
			ss.notifier = false
			ss.mu.Unlock()
			return
		}
		var targets []func(context.Context) error
		if what&changedTools != 0 {
			targets = ss.targetsLocked(targets, mcp.NotificationToolsListChanged, func(f mcp.SubscriptionFilter) bool { return f.ToolsListChanged })
		}
		if what&changedPrompts != 0 {
			targets = ss.targetsLocked(targets, mcp.NotificationPromptsListChanged, func(f mcp.SubscriptionFilter) bool { return f.PromptsListChanged })
		}
		if what&changedResources != 0 {
			targets = ss.targetsLocked(targets, mcp.NotificationResourcesListChanged, func(f mcp.SubscriptionFilter) bool { return f.ResourcesListChanged })
		}
		ss.mu.Unlock()
		for _, send := range targets {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			if err := send(ctx); err != nil {
				ss.srv.cfg.logger.Debug("list_changed not delivered", "error", err)
			}
			cancel()
		}
	}
}

// targetsLocked lists the deliveries of a list_changed notification
// (method): on the connection for an initialized legacy session, on each
// subscription whose filter wants it for modern clients.
func (ss *Session) targetsLocked(targets []func(context.Context) error, method string, wants func(mcp.SubscriptionFilter) bool) []func(context.Context) error {
	if ss.ready && ss.out != nil {
		out := ss.out
		targets = append(targets, func(ctx context.Context) error {
			return out.Send(ctx, &jsonrpc.Notification{Method: method})
		})
	}
	for l := range ss.listeners {
		if !wants(l.filter) {
			continue
		}
		params, err := json.Marshal(struct {
			Meta mcp.Meta `json:"_meta"`
		}{mcp.Meta{mcp.MetaSubscriptionID: l.id.Value()}})
		if err != nil {
			continue
		}
		w := l.w
		n := &jsonrpc.Notification{Method: method, Params: params}
		targets = append(targets, func(ctx context.Context) error { return w.Send(ctx, n) })
	}
	return targets
}
