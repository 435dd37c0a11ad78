package server_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// notifications/roots/list_changed reaches the handler for a client that
// declared roots, and is ignored from one that did not.
func TestRootsChangedHandler(t *testing.T) {
	got := make(chan *server.Session, 4)
	s := server.New(mcp.Implementation{Name: "roots", Version: "1"},
		server.WithRootsChangedHandler(func(_ context.Context, ss *server.Session) { got <- ss }))
	p := connect(t, s)
	initializeWithRoots(p)
	p.send(&jsonrpc.Notification{Method: mcp.NotificationRootsListChanged})
	if ss := testwait.Recv(t, got, "the roots list change"); !ss.Peer().ClientCapabilities.Has("roots") {
		t.Errorf("handler got a session without roots: %+v", ss.Peer())
	}

	p2 := connect(t, s)
	p2.initialize("2025-11-25") // no roots capability
	p2.send(&jsonrpc.Notification{Method: mcp.NotificationRootsListChanged})
	p2.call("ping", nil) // the notification was read before this answer
	select {
	case <-got:
		t.Error("a client without roots reached the handler")
	default:
	}
}
