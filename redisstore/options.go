package redisstore

import (
	"log/slog"
	"time"

	"github.com/toolwire/toolwire/transport/streamable"
)

// Defaults of the options and Limits.
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
