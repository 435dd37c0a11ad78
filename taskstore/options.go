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

// Option configures a store made by NewMemory or OpenSQLite.
type Option interface{ applyStore(*config) }

type config struct {
	maxTasks int
	now      func() time.Time
}

func newConfig(opts []Option) *config {
	c := &config{maxTasks: DefaultMaxTasks, now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.applyStore(c)
		}
	}
	return c
}

// clock returns the configured time, without a monotonic reading or
// location, at the nanosecond precision the stores keep.
func (c *config) clock() time.Time { return time.Unix(0, c.now().UnixNano()) }

type storeOption func(*config)

func (f storeOption) applyStore(c *config) { f(c) }

// WithMaxTasks bounds how many tasks the store holds (default
// DefaultMaxTasks). Values below 1 mean the default.
func WithMaxTasks(n int) Option {
	return storeOption(func(c *config) {
		if n < 1 {
			n = DefaultMaxTasks
		}
		c.maxTasks = n
	})
}

// WithClock sets the clock the store stamps CreatedAt and UpdatedAt with and
// judges expiry by in Get, List and Update (default time.Now). For tests.
func WithClock(now func() time.Time) Option {
	return storeOption(func(c *config) {
		if now != nil {
			c.now = now
		}
	})
}

// ErrClosed is returned by a store's methods after Close.
var ErrClosed = errors.New("taskstore: the store is closed")
