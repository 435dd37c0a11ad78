package admin

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Defaults and bounds of Limits.
const (
	DefaultSessionLifetime = 12 * time.Hour
	DefaultMaxSessions     = 1000
	DefaultPageSize        = 50
	MaxPageSize            = 500
	// DefaultLoginBurst failed logins from one client are allowed at once,
	// then one more every DefaultLoginEvery.
	DefaultLoginBurst = 5
	DefaultLoginEvery = 10 * time.Second
)

// Option configures NewHandler. Options apply in order (a later one wins),
// nil options are ignored and defaults fill in the rest, as everywhere in
// the project.
type Option interface{ applyAdmin(*options) }

type options struct {
	limits Limits // the defaults filled in by newOptions
	now    func() time.Time
}

type option func(*options)

func (f option) applyAdmin(o *options) { f(o) }

// WithClock sets the clock sessions and login limits run on (default
// time.Now). For tests.
func WithClock(now func() time.Time) Option { return option(func(o *options) { o.now = now }) }

func newOptions(opts []Option) options {
	var o options
	for _, op := range opts {
		if op != nil {
			op.applyAdmin(&o)
		}
	}
	l := &o.limits
	limits.Default(&l.SessionTTL, DefaultSessionLifetime)
	limits.Default(&l.MaxSessions, DefaultMaxSessions)
	limits.Default(&l.PageSize, DefaultPageSize)
	l.PageSize = min(l.PageSize, MaxPageSize)
	limits.Default(&l.MaxFailedLogins, DefaultLoginBurst)
	limits.Default(&l.FailedLoginInterval, DefaultLoginEvery)
	if o.now == nil {
		o.now = time.Now
	}
	return o
}
