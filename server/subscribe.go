package server

import (
	"context"
	"slices"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// subscriptions are the resources/subscribe subscriptions of 2025-era
// sessions, and the notifications/resources/updated deliveries waiting to
// go out to each session (both eras).
type subscriptions struct {
	mu        sync.Mutex
	bySession map[*Session]map[string]struct{}
	pending   map[*Session]*pendingUpdates // a session here has a sender running
}

// pendingUpdates are the URIs whose update a session has yet to be told
// of, each once however often it changed meanwhile: the queue holds at
// most the URIs the session subscribed to.
type pendingUpdates struct {
	uris []string
	set  map[string]struct{}
}

// subscribe serves resources/subscribe (2025 era): the session is told of
// each later NotifyResourceUpdated for the URI. The URI need not be served
// yet. Past Limits.MaxSubscriptions URIs, or a URI longer than
// Limits.MaxURILength, is -32602.
func (s *Server) subscribe(_ context.Context, req *Request) (any, error) {
	uri, jerr := requestURI(req)
	if jerr != nil {
		return nil, jerr
	}
	if limit := s.cfg.resources.maxURI(); len(uri) > limit {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "uri is %d bytes, longer than the %d this server accepts", len(uri), limit)
	}
	ss := req.session
	if ss == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "resources/subscribe served outside a session")
	}
	subs := &s.resources.subs
	subs.mu.Lock()
	set := subs.bySession[ss]
	if _, ok := set[uri]; !ok {
		if limit := s.cfg.resources.maxSubs(); len(set) >= limit {
			subs.mu.Unlock()
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "too many subscriptions: this session is subscribed to %d URIs, the most this server allows; unsubscribe from some first", limit)
		}
		if set == nil {
			set = map[string]struct{}{}
			if subs.bySession == nil {
				subs.bySession = map[*Session]map[string]struct{}{}
			}
			subs.bySession[ss] = set
		}
		set[uri] = struct{}{}
		ss.stateRev.Add(1)
	}
	subs.mu.Unlock()
	// Close sets closed before it drops the session's subscriptions: either
	// it saw this one, or this sees it closed.
	ss.mu.Lock()
	closed := ss.closed
	ss.mu.Unlock()
	if closed {
		s.dropSubscriptions(ss)
	}
	return &mcp.EmptyResult{}, nil
}

// unsubscribe serves resources/unsubscribe (2025 era). Unsubscribing from a
// URI the session is not subscribed to succeeds and does nothing.
func (s *Server) unsubscribe(_ context.Context, req *Request) (any, error) {
	uri, jerr := requestURI(req)
	if jerr != nil {
		return nil, jerr
	}
	subs := &s.resources.subs
	subs.mu.Lock()
	if set := subs.bySession[req.session]; set != nil {
		if _, ok := set[uri]; ok {
			delete(set, uri)
			req.session.stateRev.Add(1)
		}
		if len(set) == 0 {
			delete(subs.bySession, req.session)
		}
	}
	subs.mu.Unlock()
	return &mcp.EmptyResult{}, nil
}

// dropSubscriptions forgets a closed session's subscriptions.
func (s *Server) dropSubscriptions(ss *Session) {
	subs := &s.resources.subs
	subs.mu.Lock()
	delete(subs.bySession, ss)
	subs.mu.Unlock()
}

// subscribed reports whether a 2025-era session subscribed to uri.
func (s *Server) subscribed(ss *Session, uri string) bool {
	subs := &s.resources.subs
	subs.mu.Lock()
	defer subs.mu.Unlock()
	_, ok := subs.bySession[ss][uri]
	return ok
}

// honouredSubscriptions is the part of a listen filter's
// resourceSubscriptions the server acknowledges: none before a resource
// is registered; otherwise each URI once, up to Limits.MaxURILength bytes
// long, the first Limits.MaxSubscriptions of them.
func (s *Server) honouredSubscriptions(uris []string) []string {
	if len(uris) == 0 || !s.resources.served.Load() {
		return nil
	}
	maxURI, maxSubs := s.cfg.resources.maxURI(), s.cfg.resources.maxSubs()
	out := make([]string, 0, min(len(uris), maxSubs))
	seen := make(map[string]struct{}, cap(out))
	for _, u := range uris {
		if len(out) == maxSubs {
			break
		}
		if _, dup := seen[u]; dup || len(u) > maxURI {
			continue
		}
		seen[u] = struct{}{}
		out = append(out, u)
	}
	return out
}

// NotifyResourceUpdated tells the clients subscribed to uri that the
// resource changed (notifications/resources/updated {uri}): 2025-era
// sessions that sent resources/subscribe for it, and 2026-07-28
// subscriptions/listen streams whose acknowledged resourceSubscriptions
// list it (those notifications carry the subscription's id in _meta).
// It never waits for a client: each session's deliveries go out from one
// goroutine, and updates of a URI not yet delivered are coalesced.
func (s *Server) NotifyResourceUpdated(uri string) {
	for _, ss := range s.openSessions() {
		if s.subscribed(ss, uri) || ss.listensTo(uri) {
			s.queueUpdate(ss, uri)
		}
	}
}

// listensTo reports whether a subscriptions/listen stream of the session
// wants updates of uri.
func (ss *Session) listensTo(uri string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for l := range ss.listeners {
		if slices.Contains(l.filter.ResourceSubscriptions, uri) {
			return true
		}
	}
	return false
}

// queueUpdate records an update for a session and makes sure a goroutine is
// sending the session's updates.
func (s *Server) queueUpdate(ss *Session, uri string) {
	subs := &s.resources.subs
	subs.mu.Lock()
	defer subs.mu.Unlock()
	q := subs.pending[ss]
	if q == nil {
		q = &pendingUpdates{set: map[string]struct{}{}}
		if subs.pending == nil {
			subs.pending = map[*Session]*pendingUpdates{}
		}
		subs.pending[ss] = q
		go s.sendUpdates(ss)
	}
	if _, ok := q.set[uri]; !ok {
		q.set[uri] = struct{}{}
		q.uris = append(q.uris, uri)
	}
}

// sendUpdates delivers a session's queued updates until none is left.
func (s *Server) sendUpdates(ss *Session) {
	subs := &s.resources.subs
	for {
		subs.mu.Lock()
		q := subs.pending[ss]
		uris := q.uris
		if len(uris) == 0 {
			delete(subs.pending, ss)
			subs.mu.Unlock()
			return
		}
		q.uris, q.set = nil, map[string]struct{}{}
		subs.mu.Unlock()
		for _, uri := range uris {
			for _, send := range s.updateTargets(ss, uri) {
				ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
				if err := send(ctx); err != nil {
					s.cfg.logger.Debug("resource update not delivered", "uri", uri, "error", err)
				}
				cancel()
			}
		}
	}
}

// updateTargets lists the deliveries of an update of uri to one session:
// on the connection of a ready 2025-era session subscribed to it, and on
// each listen stream whose filter lists it.
func (s *Server) updateTargets(ss *Session, uri string) []func(context.Context) error {
	legacy := s.subscribed(ss, uri)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return nil
	}
	var targets []func(context.Context) error
	if legacy && ss.ready && ss.out != nil {
		if n, err := jsonrpc.NewNotification(mcp.NotificationResourceUpdated, mcp.ResourceUpdatedParams{URI: uri}); err == nil {
			out := ss.out
			targets = append(targets, func(ctx context.Context) error { return out.Send(ctx, n) })
		}
	}
	for l := range ss.listeners {
		if !slices.Contains(l.filter.ResourceSubscriptions, uri) {
			continue
		}
		n, err := jsonrpc.NewNotification(mcp.NotificationResourceUpdated,
			mcp.ResourceUpdatedParams{URI: uri, Meta: mcp.Meta{mcp.MetaSubscriptionID: l.id.Value()}})
		if err != nil {
			continue
		}
		w := l.w
		targets = append(targets, func(ctx context.Context) error { return w.Send(ctx, n) })
	}
	return targets
}
