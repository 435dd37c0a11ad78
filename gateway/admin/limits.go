package admin

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound the admin page's logins and what it
// shows. A zero or negative field means the default named beside it (or,
// after an earlier WithLimits, leaves what that one set). Names follow one
// rule: MaxX is an upper bound on X, XTTL a lifetime, XInterval a period.
type Limits struct {
	// SessionTTL is how long a login lasts, counted from the login, not
	// from the last request (DefaultSessionLifetime, 12 hours).
	SessionTTL time.Duration
	// MaxSessions bounds the sessions kept at once (DefaultMaxSessions,
	// 1000). A login beyond it ends the oldest session.
	MaxSessions int
	// PageSize is how many records one page of the audit table shows
	// (DefaultPageSize, 50; at most MaxPageSize).
	PageSize int
	// MaxFailedLogins is how many failed logins one client (an IP
	// address; an IPv6 /64) may make at once (DefaultLoginBurst, 5), and
	// FailedLoginInterval how often it earns another (DefaultLoginEvery,
	// 10 s).
	MaxFailedLogins     int
	FailedLoginInterval time.Duration
}

// WithLimits sets the admin page's limits. Its zero fields leave the value
// an earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) Option {
	return option(func(o *options) { limits.Overlay(&o.limits, l) })
}
