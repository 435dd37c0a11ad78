package transport

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound one Serve (stdio.Serve, memory.Serve):
// how many requests run and wait, how long they may finish, how big a
// message may be. A zero field means the default named beside it (or, after
// an earlier WithLimits, leaves what that one set); what a negative value
// means is said per field. Names follow one rule: MaxX is an upper bound on
// X, XTimeout a bound on how long X may take, and a size in bytes ends in
// Bytes.
type Limits struct {
	// MaxConcurrency bounds the requests of one connection running at once
	// (DefaultMaxConcurrency, 64). Negative means the default.
	MaxConcurrency int
	// MaxQueued bounds the requests that may wait for a slot once
	// MaxConcurrency are running (DefaultMaxQueued, 1024); past it a request
	// is refused at once with jsonrpc.CodeOverloaded. A queued request the
	// client cancels (notifications/cancelled) leaves the queue at once,
	// unanswered, and never runs. Negative means no queue: every request
	// past the running ones is refused.
	MaxQueued int
	// DrainTimeout is how long requests still running at the end of input
	// may finish before they are cancelled (DefaultDrainTimeout, 5 s).
	// Negative means the default.
	DrainTimeout time.Duration
	// InlineTimeout bounds how long a request may run on the goroutine
	// that read it before reading passes to another goroutine
	// (DefaultInlineTimeout, 1 ms); it bounds how late a pipelined
	// message, such as a cancellation, is read. Negative means the
	// default.
	InlineTimeout time.Duration
	// MaxMessageBytes bounds one incoming message on a connection that has
	// a size limit (a SizeLimitedConn, such as stdio's): Serve sets it
	// before reading starts, and a message over it gets -32600 while
	// serving goes on, with the request's id when the message's first
	// bytes show it (TooLargeError.Prefix) and null otherwise. The default
	// is the connection's own limit (for stdio, stdio.DefaultMaxMessageSize:
	// 8 MiB); negative means the default too. Connections without a limit
	// (memory) ignore it.
	MaxMessageBytes int
}

// WithLimits sets Serve's limits. Its zero fields leave the value an
// earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) ServeOption {
	return serveOption(func(c *serveConfig) {
		limits.Set(&c.maxConcurrency, l.MaxConcurrency)
		limits.Set(&c.maxQueued, l.MaxQueued)
		limits.Set(&c.drainTimeout, l.DrainTimeout)
		limits.Set(&c.inlineBudget, l.InlineTimeout)
		limits.Set(&c.maxMessageSize, l.MaxMessageBytes)
	})
}
