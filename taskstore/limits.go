package taskstore

import "github.com/toolwire/toolwire/internal/limits"

// DefaultMaxTasks is how many tasks a store holds unless Limits.MaxTasks
// says otherwise. Expired tasks count until swept; Create sweeps them
// before it gives up with ErrFull.
const DefaultMaxTasks = 100_000

// Limits are the numbers of a task store. A zero field means the default
// named beside it (or, after an earlier WithLimits, leaves what that one
// set); a negative one means the default. Names follow one rule: MaxX is
// an upper bound on X.
type Limits struct {
	// MaxTasks bounds how many tasks the store holds (DefaultMaxTasks,
	// 100,000); past it Create fails with ErrFull.
	MaxTasks int
}

// WithLimits sets the store's limits. Its zero fields leave the value an
// earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) Option {
	return storeOption(func(c *Settings) { limits.Set(&c.Limits.MaxTasks, l.MaxTasks) })
}

// withDefaults returns l with zero or negative fields set to the defaults.
func (l Limits) withDefaults() Limits {
	limits.Default(&l.MaxTasks, DefaultMaxTasks)
	return l
}
