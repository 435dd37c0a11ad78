package config

import (
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
)

// Bounds of an upstream's per-client sessions.
const (
	// MaxMaxSessions is the largest max_sessions of an upstream.
	MaxMaxSessions = 4096
	// MaxIdleTimeout is the longest idle_timeout of an upstream.
	MaxIdleTimeout = 24 * time.Hour
)

// sessionModes are the values of an upstream's sessions key.
var sessionModes = []string{string(gateway.SessionsShared), string(gateway.SessionsPerClient)}

// sessionKey decodes one of an upstream's session keys (sessions,
// max_sessions, idle_timeout) into u; false when key is none of them.
func (d *decoder) sessionKey(key string, v ast.Node, what string, u *gateway.Upstream) bool {
	switch key {
	case "sessions":
		s, ok := d.str(v, what)
		if !ok {
			return true
		}
		if err := checkSessions(s); err != nil {
			d.Errorf(v, "%s: %v", what, err)
			return true
		}
		u.Sessions = gateway.SessionMode(s)
	case "max_sessions":
		if n, ok := d.integer(v, what, 1, MaxMaxSessions); ok {
			u.MaxSessions = int(n)
		}
	case "idle_timeout":
		if t, _, ok := d.duration(v, what, false, checkIdleTimeout); ok {
			u.IdleTimeout = t
		}
	default:
		return false
	}
	return true
}

// sessionsPerClientOnly reports max_sessions and idle_timeout on an
// upstream whose sessions are shared: they bound per-client sessions only.
func (d *decoder) sessionsPerClientOnly(u gateway.Upstream, keys map[string]ast.Node, p string) {
	if u.Sessions == gateway.SessionsPerClient {
		return
	}
	for _, k := range []string{"max_sessions", "idle_timeout"} {
		if n := keys[k]; n != nil {
			d.Errorf(n, "%s: %s applies to sessions: per_client only", p, k)
		}
	}
}

// checkSessions refuses a sessions value other than shared and
// per_client, suggesting the one a typo away.
func checkSessions(s string) error {
	return checkOneOf(s, sessionModes, "is neither shared nor per_client", "")
}

// checkIdleTimeout refuses an idle_timeout outside (0, MaxIdleTimeout].
func checkIdleTimeout(t time.Duration) error { return checkDurationUpTo(t, MaxIdleTimeout) }

// checkUpstreamSessions is what Validate checks of an upstream's session
// settings (a Config built in code, not decoded).
func checkUpstreamSessions(u gateway.Upstream, add func(string, ...any), p string) {
	if u.Sessions != "" {
		if err := checkSessions(string(u.Sessions)); err != nil {
			add("%s: sessions: %v", p, err)
		}
	}
	if u.MaxSessions < 0 || u.MaxSessions > MaxMaxSessions {
		add("%s: max_sessions: %d is not from 1 to %d", p, u.MaxSessions, MaxMaxSessions)
	}
	if u.IdleTimeout != 0 {
		if err := checkIdleTimeout(u.IdleTimeout); err != nil {
			add("%s: idle_timeout: %v", p, err)
		}
	}
	if u.Sessions != gateway.SessionsPerClient && (u.MaxSessions != 0 || u.IdleTimeout != 0) {
		add("%s: max_sessions and idle_timeout apply to sessions: per_client only", p)
	}
}
