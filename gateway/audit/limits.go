package audit

import "github.com/toolwire/toolwire/internal/limits"

// Default limits: see Limits.
const (
	DefaultMaxArgumentsBytes = 16 << 10
	DefaultMaxErrorBytes     = 2 << 10

	// DefaultMaxBatch is how many records one group commit writes at most
	// (Limits.MaxBatch): enough to absorb a burst in a few transactions,
	// small enough that one transaction holds the chain's lock only
	// briefly.
	DefaultMaxBatch = 256

	// DefaultMaxConns is how many connections a Postgres store opens at
	// most (Limits.MaxConns): one appends, the others serve Query, Verify
	// and Sweep.
	DefaultMaxConns = 4
)

// Limits are the numbers of the audit trail: what one record stores, so
// that a hostile request cannot grow the trail without bound (Append
// applies them before hashing), how a store commits and connects, and how
// many records an Async queue holds. A zero field means the default named
// beside it (or, after an earlier WithLimits, leaves what that one set); a
// negative one means the default. Names follow one rule: MaxX is an upper
// bound on X, and a size in bytes ends in Bytes.
type Limits struct {
	// MaxArgumentsBytes bounds Record.Arguments (DefaultMaxArgumentsBytes,
	// 16 KiB). Longer arguments are replaced by a JSON string "[arguments
	// truncated: N bytes]": cut JSON would not be JSON, and Redact already
	// shortens long string values.
	MaxArgumentsBytes int
	// MaxErrorBytes bounds Record.Error (DefaultMaxErrorBytes, 2 KiB).
	// Longer text is cut at a UTF-8 boundary and ends with TruncatedMark.
	MaxErrorBytes int

	// The fields below bound a store (sqlite.Open, postgres.Open); Async
	// ignores them.

	// MaxBatch bounds how many records one group commit writes in one
	// transaction (DefaultMaxBatch, 256). Appends that arrive while a
	// commit is under way wait for it and are then committed together, up
	// to MaxBatch at a time.
	MaxBatch int
	// MaxConns bounds the connections a Postgres store opens
	// (DefaultMaxConns, 4); 1 means 2, so that Append has one beside a
	// Query. An SQLite store ignores it.
	MaxConns int

	// MaxQueue bounds the records an Async queue holds (DefaultQueueSize,
	// 10,000); past it Append drops the record (ErrDropped). Stores
	// ignore it.
	MaxQueue int
}

// LimitsOption sets Limits. It is an Option (a store's: every field but
// MaxQueue) and an AsyncOption (NewAsync's: MaxQueue); one value may be
// passed to both.
type LimitsOption struct{ l Limits }

// WithLimits sets the audit trail's limits. Its zero fields leave the value
// an earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) LimitsOption { return LimitsOption{l} }

func (o LimitsOption) applyAudit(c *Settings) {
	limits.Set(&c.Limits.MaxArgumentsBytes, o.l.MaxArgumentsBytes)
	limits.Set(&c.Limits.MaxErrorBytes, o.l.MaxErrorBytes)
	limits.Set(&c.Limits.MaxBatch, o.l.MaxBatch)
	limits.Set(&c.Limits.MaxConns, o.l.MaxConns)
	limits.Set(&c.Limits.MaxQueue, o.l.MaxQueue)
}

func (o LimitsOption) applyAsync(a *Async) { limits.Set(&a.maxQueue, o.l.MaxQueue) }

// withDefaults returns l with zero or negative fields set to the defaults,
// and MaxConns at least 2.
func (l Limits) withDefaults() Limits {
	limits.Default(&l.MaxArgumentsBytes, DefaultMaxArgumentsBytes)
	limits.Default(&l.MaxErrorBytes, DefaultMaxErrorBytes)
	limits.Default(&l.MaxBatch, DefaultMaxBatch)
	limits.Default(&l.MaxConns, DefaultMaxConns)
	l.MaxConns = max(l.MaxConns, 2)
	limits.Default(&l.MaxQueue, DefaultQueueSize)
	return l
}
