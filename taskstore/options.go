package taskstore

import (
	"errors"
	"time"
)

// MaxListLimit caps the limit of one List call.
const MaxListLimit = 1000

// ErrFull is returned by Create when the store already holds its maximum
// number of unexpired tasks (see Limits.MaxTasks).
var ErrFull = errors.New("taskstore: the store holds its maximum number of tasks")

// ErrExists is returned by Create when a task with the same id exists.
var ErrExists = errors.New("taskstore: a task with this id already exists")

// ErrInvalidCursor is returned by List for a cursor it did not issue.
var ErrInvalidCursor = errors.New("taskstore: invalid cursor")

// Option configures a store: NewMemory's, sqlite.Open's, or another
// Store's that reads its options with Resolve.
type Option interface{ applyStore(*Settings) }

// Settings is what a store's options resolve to.
type Settings struct {
	// Limits are the store's limits, defaults filled in (WithLimits).
	Limits Limits
	now    func() time.Time
}

// Resolve applies opts in order (a later one wins, nil ones are ignored)
// over the defaults: how a Store outside this package reads its options.
func Resolve(opts ...Option) Settings {
	c := Settings{now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.applyStore(&c)
		}
	}
	c.Limits = c.Limits.withDefaults()
	return c
}

// Clock returns the configured time (WithClock), without a monotonic
// reading or location, at the nanosecond precision the stores keep.
func (c Settings) Clock() time.Time { return time.Unix(0, c.now().UnixNano()) }

type storeOption func(*Settings)

func (f storeOption) applyStore(c *Settings) { f(c) }

// WithClock sets the clock the store stamps CreatedAt and UpdatedAt with and
// judges expiry by in Get, List and Update (default time.Now). For tests.
func WithClock(now func() time.Time) Option {
	return storeOption(func(c *Settings) {
		if now != nil {
			c.now = now
		}
	})
}

// ErrClosed is returned by a store's methods after Close.
var ErrClosed = errors.New("taskstore: the store is closed")
