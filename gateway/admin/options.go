package admin

import "time"

// Defaults and bounds of the options.
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
	lifetime   time.Duration
	maxSess    int
	pageSize   int
	loginBurst int
	loginEvery time.Duration
	now        func() time.Time
}

type option func(*options)

func (f option) applyAdmin(o *options) { f(o) }

// WithSessionLifetime sets how long a login lasts, counted from the login,
// not from the last request (default DefaultSessionLifetime).
func WithSessionLifetime(d time.Duration) Option {
	return option(func(o *options) { o.lifetime = d })
}

// WithMaxSessions bounds the sessions kept at once (default
// DefaultMaxSessions). A login beyond it ends the oldest session.
func WithMaxSessions(n int) Option { return option(func(o *options) { o.maxSess = n }) }

// WithPageSize sets how many records one page of the audit table shows
// (default DefaultPageSize, at most MaxPageSize).
func WithPageSize(n int) Option { return option(func(o *options) { o.pageSize = n }) }

// WithLoginLimit sets how many failed logins one client (an IP address; an
// IPv6 /64) may make at once, burst, and how often it earns another, every
// (defaults DefaultLoginBurst, DefaultLoginEvery).
func WithLoginLimit(burst int, every time.Duration) Option {
	return option(func(o *options) { o.loginBurst, o.loginEvery = burst, every })
}

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
	if o.lifetime <= 0 {
		o.lifetime = DefaultSessionLifetime
	}
	if o.maxSess <= 0 {
		o.maxSess = DefaultMaxSessions
	}
	if o.pageSize <= 0 {
		o.pageSize = DefaultPageSize
	}
	o.pageSize = min(o.pageSize, MaxPageSize)
	if o.loginBurst <= 0 {
		o.loginBurst = DefaultLoginBurst
	}
	if o.loginEvery <= 0 {
		o.loginEvery = DefaultLoginEvery
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o
}
