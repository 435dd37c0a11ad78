package testmcp

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
)

// NeverAnswer is the option of a client that never answers an
// elicitation: each request is counted in asked (when not nil) and held
// until its context ends or the test does, then refused with
// context.Canceled. It is how a test keeps questions waiting for their
// caller, to fill a gateway's or a server's room for them.
func NeverAnswer(t testing.TB, asked *atomic.Int32) client.Option {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return client.WithElicitationHandler(func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		if asked != nil {
			asked.Add(1)
		}
		select {
		case <-done:
		case <-ctx.Done():
		}
		return nil, context.Canceled
	})
}
