package server

import "context"

// WithRootsChangedHandler sets what runs when a 2025-era client that
// declared roots says its roots changed (notifications/roots/list_changed),
// typically a fresh Session.Call of roots/list. It runs on the goroutine
// reading the connection, so it must not block: start work elsewhere.
// 2026-07-28 clients send their roots with each request that asks for them
// (Request.ListRoots) and have no such notification.
func WithRootsChangedHandler(f func(ctx context.Context, ss *Session)) Option {
	return serverOption(func(c *config) { c.rootsChanged = f })
}
