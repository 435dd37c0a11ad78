package redisstore

import (
	"log/slog"
	"time"

	"github.com/toolwire/toolwire/transport/streamable"
)

// Defaults for the Option and EventStoreOption constructors.
const (
	// DefaultPrefix starts every key the package writes.
	DefaultPrefix = "toolwire:"
	// DefaultTimeout bounds every operation on Redis, including its
	// connection, so that Redis being down never hangs a request.
	DefaultTimeout = 2 * time.Second
	// DefaultPoolSize is how many connections a Client keeps to Redis.
	DefaultPoolSize = 32
	// DefaultHealthInterval is how often the background ping checks Redis.
	DefaultHealthInterval = time.Second
	// DefaultEventTTL is how long a session's events outlive its last Append.
	DefaultEventTTL = time.Hour
	// DefaultMaxEventsPerStream and DefaultMaxBytesPerSession are the
	// memory store's bounds (streamable).
	DefaultMaxEventsPerStream = streamable.DefaultMaxEventsPerStream
	DefaultMaxBytesPerSession = streamable.DefaultMaxBytesPerSession
	// MaxNameLen bounds session and stream ids, in bytes: they become part
	// of keys and event ids, and the handler's own are far shorter.
	MaxNameLen = 512
)

// Option configures Open. Options apply in order (a later one wins), nil
// options are ignored and defaults fill in the rest.
type Option interface{ applyClient(*clientConfig) }

type clientConfig struct {
	prefix         string
	timeout        time.Duration
	poolSize       int // 0: the URL's pool_size, else DefaultPoolSize
	healthInterval time.Duration
	logger         *slog.Logger
}

func newClientConfig(opts []Option) *clientConfig {
	c := &clientConfig{
		prefix:         DefaultPrefix,
		timeout:        DefaultTimeout,
		healthInterval: DefaultHealthInterval,
		logger:         slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		if o != nil {
			o.applyClient(c)
		}
	}
	return c
}

type clientOption func(*clientConfig)

func (f clientOption) applyClient(c *clientConfig) { f(c) }

// WithPrefix sets the prefix of every key the client writes (default
// DefaultPrefix), so that several deployments can share one Redis without
// seeing each other's state. An empty prefix means the default.
func WithPrefix(p string) Option {
	return clientOption(func(c *clientConfig) {
		if p == "" {
			p = DefaultPrefix
		}
		c.prefix = p
	})
}

// WithTimeout bounds every operation on Redis, from waiting for a pooled
// connection to reading the reply (default DefaultTimeout); past it the
// operation fails and the client counts Redis as unavailable. Values of
// zero or less mean the default.
func WithTimeout(d time.Duration) Option {
	return clientOption(func(c *clientConfig) {
		if d <= 0 {
			d = DefaultTimeout
		}
		c.timeout = d
	})
}

// WithPoolSize sets how many connections the client keeps to Redis (default:
// the URL's pool_size parameter, else DefaultPoolSize). Values below 1 mean
// the default.
func WithPoolSize(n int) Option {
	return clientOption(func(c *clientConfig) {
		if n < 1 {
			n = 0
		}
		c.poolSize = n
	})
}

// WithHealthInterval sets how often a background PING checks Redis (default
// DefaultHealthInterval), so that Healthy turns false while Redis is down
// even when no request runs, and true again soon after it is back. Values
// of zero or less mean the default.
func WithHealthInterval(d time.Duration) Option {
	return clientOption(func(c *clientConfig) {
		if d <= 0 {
			d = DefaultHealthInterval
		}
		c.healthInterval = d
	})
}

// WithLogger sets where the client reports Redis becoming unavailable and
// available again (default: discard). Its messages never hold the URL's
// password.
func WithLogger(l *slog.Logger) Option {
	return clientOption(func(c *clientConfig) {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		c.logger = l
	})
}

// EventStoreOption configures Client.EventStore. Options apply in order (a
// later one wins), nil options are ignored and defaults fill in the rest.
type EventStoreOption interface{ applyEventStore(*eventLimits) }

type eventLimits struct {
	maxEventsPerStream int
	maxBytesPerSession int
	ttl                time.Duration
}

type eventStoreOption func(*eventLimits)

func (f eventStoreOption) applyEventStore(l *eventLimits) { f(l) }

// WithMaxEventsPerStream bounds the events kept per stream (default
// DefaultMaxEventsPerStream); past it the stream's oldest events are
// evicted, and a client resuming from before them gets ErrEventsLost.
// Values below 1 mean the default.
func WithMaxEventsPerStream(n int) EventStoreOption {
	return eventStoreOption(func(l *eventLimits) {
		if n < 1 {
			n = DefaultMaxEventsPerStream
		}
		l.maxEventsPerStream = n
	})
}

// WithMaxBytesPerSession bounds the event data kept per session (default
// DefaultMaxBytesPerSession); past it the oldest events of the session's
// largest stream are evicted, as in the memory store. An event larger than
// the bound is evicted at once. Values below 1 mean the default.
func WithMaxBytesPerSession(n int) EventStoreOption {
	return eventStoreOption(func(l *eventLimits) {
		if n < 1 {
			n = DefaultMaxBytesPerSession
		}
		l.maxBytesPerSession = n
	})
}

// WithEventTTL sets how long a session's events outlive its last Append
// (default DefaultEventTTL), so that the events of sessions no replica
// dropped (a replica crashed) vanish on their own. Redis keeps it to the
// millisecond; values of zero or less mean the default.
func WithEventTTL(d time.Duration) EventStoreOption {
	return eventStoreOption(func(l *eventLimits) {
		if d <= 0 {
			d = DefaultEventTTL
		}
		l.ttl = d
	})
}
