package taskstore

import (
	"errors"
	"time"
)

// DefaultMaxTasks is how many tasks a store holds unless WithMaxTasks says
// otherwise. Expired tasks count until swept; Create sweeps them before it
// gives up with ErrFull.
const DefaultMaxTasks = 100_000

// MaxListLimit caps the limit of one List call.
const MaxListLimit = 1000

// ErrFull is returned by Create when the store already holds its maximum
// number of unexpired tasks (see WithMaxTasks).
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
	// MaxTasks is how many tasks the store holds (WithMaxTasks).
	MaxTasks int
	now      func() time.Time
}

// Resolve applies opts in order (a later one wins, nil ones are ignored)
// over the defaults: how a Store outside this package reads its options.
func Resolve(opts ...Option) Settings {
	c := Settings{MaxTasks: DefaultMaxTasks, now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.applyStore(&c)
		}
	}
	return c
}

// Clock returns the configured time (WithClock), without a monotonic
// reading or location, at the nanosecond precision the stores keep.
func (c Settings) Clock() time.Time { return time.Unix(0, c.now().UnixNano()) }

type storeOption func(*Settings)

func (f storeOption) applyStore(c *Settings) { f(c) }

// WithMaxTasks bounds how many tasks the store holds (default
// DefaultMaxTasks). Values below 1 mean the default.
func WithMaxTasks(n int) Option {
	return storeOption(func(c *Settings) {
		if n < 1 {
			n = DefaultMaxTasks
		}
		c.MaxTasks = n
	})
}

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
