package server

import (
	"context"

	"github.com/toolwire/toolwire/jsonrpc"
)

// Notify sends a notification to a 2025-era session's client outside any
// request, on the session's own stream (over HTTP the GET stream), once the
// session is ready (notifications/initialized received; before that it
// does nothing and returns nil). A server relaying another server's
// notifications to the one client they concern (a gateway with a session
// per client upstream: notifications/resources/updated, a list change)
// sends them this way. After Close it returns ErrSessionClosed.
func (ss *Session) Notify(ctx context.Context, method string, params any) error {
	ss.mu.Lock()
	closed, ready, out := ss.closed, ss.ready, ss.out
	ss.mu.Unlock()
	switch {
	case closed:
		return ErrSessionClosed
	case !ready:
		return nil
	case out == nil:
		return ErrNoBackChannel
	}
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		return err
	}
	return out.Send(ctx, n)
}
