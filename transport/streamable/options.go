package streamable

import (
	"log/slog"
	"time"
)

// Defaults for Options; every limit can be changed.
const (
	DefaultMaxBodyBytes       = 4 << 20 // 4 MiB
	DefaultSessionIdleTimeout = 10 * time.Minute
	DefaultMaxSessions        = 10000
	DefaultRetryInterval      = time.Second
	DefaultKeepAliveInterval  = 15 * time.Second
	DefaultWriteTimeout       = 30 * time.Second
	DefaultReadTimeout        = 30 * time.Second
	DefaultMaxInFlight        = 4096
)

// Options configure a Handler. Zero values mean the defaults.
type Options struct {
	// AllowedHosts lists the Host header values accepted, as a host name (any
	// port) or host:port. The default accepts localhost, 127.0.0.1 and [::1]
	// only, which protects a loopback server against DNS rebinding. "*"
	// accepts any host.
	AllowedHosts []string
	// AllowedOrigins lists the Origin header values accepted when a request
	// carries one, as full origins ("https://app.example.com") or "*". The
	// default accepts http and https origins on localhost, 127.0.0.1 and
	// [::1]. A request whose Origin is not allowed gets 403.
	AllowedOrigins []string
	// MaxBodyBytes bounds a POST body; a larger one gets 413.
	MaxBodyBytes int64
	// SessionIdleTimeout ends a 2025-era session that has had no request and
	// no open stream for this long.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds how many 2025-era sessions may be open; an
	// initialize past it gets 503.
	MaxSessions int
	// MaxInFlight bounds the requests being served at once, both eras
	// together; past it a request gets 503. A 2025-era request whose client
	// dropped its stream still counts until it finishes.
	MaxInFlight int
	// EventStore keeps the events of 2025-era SSE streams for resumption with
	// Last-Event-ID. Nil means a NewMemoryEventStore with default limits.
	EventStore EventStore
	// RetryInterval is the SSE retry field sent with each priming event: how
	// long a client waits before reconnecting a closed stream.
	RetryInterval time.Duration
	// KeepAliveInterval is how often an idle SSE stream gets a comment line,
	// so proxies and clients do not time it out. Negative disables it.
	KeepAliveInterval time.Duration
	// WriteTimeout bounds each write to a client; a client that does not
	// read for this long loses its stream.
	WriteTimeout time.Duration
	// ReadTimeout bounds reading one request body.
	ReadTimeout time.Duration
	// Logger receives transport diagnostics; nil logs nothing.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.SessionIdleTimeout <= 0 {
		c.SessionIdleTimeout = DefaultSessionIdleTimeout
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.EventStore == nil {
		c.EventStore = NewMemoryEventStore(nil)
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = DefaultRetryInterval
	}
	if c.KeepAliveInterval == 0 {
		c.KeepAliveInterval = DefaultKeepAliveInterval
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
