package streamable

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound what one Streamable HTTP endpoint
// holds and how long it waits: request bodies, sessions, requests in
// flight, timeouts, connections. A zero field means the default named
// beside it (or, after an earlier WithLimits, leaves what that one set);
// what a negative value means is said per field. Sizes are in bytes.
// Names follow one rule: MaxX is an upper bound on X, MinX a lower bound,
// XTimeout a bound on how long X may take, XInterval a period.
type Limits struct {
	// MaxBodyBytes bounds a POST body (DefaultMaxBodyBytes, 4 MiB); a
	// larger one gets 413 with a JSON-RPC error, before any of it is read
	// when its Content-Length shows it. Negative means the default.
	MaxBodyBytes int64
	// ReadTimeout bounds reading one request body (DefaultReadTimeout,
	// 30 s). Negative means the default.
	ReadTimeout time.Duration
	// MinBodyRate is the rate, in bytes a second, below which a POST body
	// is refused once BodyGrace has passed (DefaultMinBodyRate, 4 KiB/s):
	// the body's deadline starts BodyGrace after its read begins and moves
	// a second later for every MinBodyRate bytes received, never past
	// ReadTimeout. A body that stalls holds its connection and memory for
	// BodyGrace, not the whole read timeout; it gets 400 and its
	// connection is closed. Negative leaves only ReadTimeout.
	MinBodyRate int64
	// BodyGrace is how long a POST body may take before MinBodyRate
	// applies (DefaultBodyGrace, 5 s). Negative means the default.
	BodyGrace time.Duration
	// WriteTimeout bounds each write to a client (DefaultWriteTimeout,
	// 30 s); a client that does not read for this long loses its stream.
	// Negative means the default.
	WriteTimeout time.Duration

	// MaxInFlight bounds the requests being served at once, both eras
	// together (DefaultMaxInFlight, 4096); past it a request gets 503 with
	// Retry-After: 1. A 2025-era request whose client dropped its stream
	// still counts until it finishes. Negative means the default.
	MaxInFlight int
	// MaxInFlightPerSession bounds the requests one 2025-era session may
	// have running at once (DefaultMaxInFlightPerSession, 256), so that one
	// client cannot take every slot of MaxInFlight; past it that session's
	// request POST gets 429 with Retry-After and a JSON-RPC error naming
	// the limit, and other sessions are still served. A request whose POST
	// connection dropped keeps counting until it finishes, is cancelled,
	// hits the tool timeout, or its session ends. Negative means the
	// default.
	MaxInFlightPerSession int
	// MaxAnonymousBytes bounds the bytes of the memory budget (see
	// WithMemoryBudget) that the bodies of requests without a principal
	// (none in the request's context, see auth.WithPrincipal) may hold
	// together, so that callers without credentials cannot starve those
	// with them, whose requests draw on the whole budget. The default is
	// half the budget's limit, never less than MaxBodyBytes; negative
	// gives them no share of their own. Each handler has its own share of
	// the budget it charges.
	MaxAnonymousBytes int64
	// MaxAddressBytes bounds what the bodies of requests without a
	// principal from one client address (the host of Request.RemoteAddr;
	// an IPv6 address by its /64) may hold at once, within
	// MaxAnonymousBytes, so that one client cannot take the whole
	// anonymous share. The default is an eighth of the budget's limit,
	// never less than MaxBodyBytes; negative means no bound per address.
	// Behind a proxy every client has the proxy's address.
	MaxAddressBytes int64

	// MaxSessions bounds the 2025-era sessions open at once
	// (DefaultMaxSessions, 10,000); an initialize past it gets 503 with
	// Retry-After: 1 and a JSON-RPC error naming the limit, once sessions
	// idle past SessionIdleTimeout have been swept. Negative means the
	// default.
	MaxSessions int
	// MaxSessionsPerPrincipal bounds the 2025-era sessions one principal
	// (auth.Principal.Key) may have open at once
	// (DefaultMaxSessionsPerPrincipal), so that one identity cannot take
	// every session; past it its initialize gets 503 with Retry-After.
	// Negative means the default.
	MaxSessionsPerPrincipal int
	// MaxAnonymousSessions bounds the 2025-era sessions opened without a
	// principal, all together (DefaultMaxAnonymousSessions); past it an
	// anonymous initialize gets 503 with Retry-After. Negative means the
	// default.
	MaxAnonymousSessions int
	// SessionIdleTimeout ends a 2025-era session that has had no request
	// and no open stream for this long (DefaultSessionIdleTimeout,
	// 10 minutes); its id then gets 404. Negative means the default.
	SessionIdleTimeout time.Duration
	// UnusedSessionTimeout ends, sooner, a 2025-era session whose client
	// has sent nothing naming it since initialize (no
	// notifications/initialized, no request, no GET)
	// (DefaultUnusedSessionTimeout, 30 s): opening sessions and leaving
	// them holds a slot for seconds, not minutes. A value past
	// SessionIdleTimeout is that timeout. Negative means the default.
	UnusedSessionTimeout time.Duration

	// RetryInterval is the SSE retry field sent with each priming event:
	// how long a client waits before reconnecting a closed stream
	// (DefaultRetryInterval, 1 s). Negative means the default.
	RetryInterval time.Duration
	// KeepAliveInterval is how often an idle SSE stream gets a comment
	// line, so that proxies and clients do not time it out
	// (DefaultKeepAliveInterval, 15 s). Negative turns keep-alives off.
	KeepAliveInterval time.Duration

	// The fields below bound a MemoryEventStore (NewMemoryEventStore);
	// NewHandler and Serve ignore them. What a bound evicts first is the
	// oldest event in its scope, and a client resuming from before an
	// evicted event gets 400 (ErrEventsLost).

	// MaxEventsPerStream bounds the events kept per stream
	// (DefaultMaxEventsPerStream, 1024). Negative means the default.
	MaxEventsPerStream int
	// MaxEventBytesPerSession bounds the event data kept per session
	// (DefaultMaxBytesPerSession, 8 MiB); past it the oldest events of the
	// session's largest stream are evicted. Negative means the default.
	MaxEventBytesPerSession int
	// MaxEventBytes bounds the event data kept by the whole store, every
	// session together (DefaultMaxBytes, 64 MiB): the per-session bound
	// alone lets memory grow with the number of sessions. An event larger
	// than the bound is evicted at once. Negative means the default.
	MaxEventBytes int

	// The fields below bound the HTTP server of Serve and ListenAndServe;
	// NewHandler ignores them.

	// MaxConns bounds the connections held at once (DefaultMaxConns); past
	// it a new connection waits to be accepted until one closes, so that
	// a flood of idle connections cannot exhaust the process's
	// descriptors. Negative means the default.
	MaxConns int
	// MaxHeaderBytes bounds the size of a request's headers
	// (DefaultMaxHeaderBytes, 64 KiB). Negative means the default.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds reading a request's headers
	// (DefaultReadHeaderTimeout, 10 s). Negative means the default.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request (DefaultIdleTimeout, 2 minutes). Negative means the
	// default.
	IdleTimeout time.Duration
	// ShutdownTimeout is how long requests in flight may finish once
	// Serve's context is done, before they are cancelled
	// (DefaultShutdownTimeout, 30 s). Negative means the default.
	ShutdownTimeout time.Duration
}

// LimitsOption sets Limits. It is a HandlerOption (the handler's fields), a
// ServerOption (the HTTP server's: MaxConns, MaxHeaderBytes,
// ReadHeaderTimeout, IdleTimeout, ShutdownTimeout) and a
// MemoryEventStoreOption (the event store's); pass the same value to
// NewHandler, Serve and NewMemoryEventStore to set all.
type LimitsOption struct{ l Limits }

// WithLimits sets the endpoint's limits. Its zero fields leave the value an
// earlier WithLimits set, or the default, so limits may be given in several
// options.
func WithLimits(l Limits) LimitsOption { return LimitsOption{l} }

func (o LimitsOption) applyHandler(c *handlerConfig) {
	l := o.l
	limits.Set(&c.maxBodyBytes, l.MaxBodyBytes)
	limits.Set(&c.readTimeout, l.ReadTimeout)
	limits.Set(&c.minBodyRate, l.MinBodyRate)
	limits.Set(&c.bodyGrace, l.BodyGrace)
	limits.Set(&c.writeTimeout, l.WriteTimeout)
	limits.Set(&c.maxInFlight, l.MaxInFlight)
	limits.Set(&c.maxPerSession, l.MaxInFlightPerSession)
	limits.Set(&c.anonShare, l.MaxAnonymousBytes)
	limits.Set(&c.addrShare, l.MaxAddressBytes)
	limits.Set(&c.maxSessions, l.MaxSessions)
	limits.Set(&c.maxPerPrincipal, l.MaxSessionsPerPrincipal)
	limits.Set(&c.maxAnonymous, l.MaxAnonymousSessions)
	limits.Set(&c.sessionIdleTimeout, l.SessionIdleTimeout)
	limits.Set(&c.unusedTimeout, l.UnusedSessionTimeout)
	limits.Set(&c.retryInterval, l.RetryInterval)
	limits.Set(&c.keepAliveInterval, l.KeepAliveInterval)
}

func (o LimitsOption) applyServer(c *serverConfig) {
	l := o.l
	limits.Set(&c.maxConns, l.MaxConns)
	limits.Set(&c.maxHeaderBytes, l.MaxHeaderBytes)
	limits.Set(&c.readHeaderTimeout, l.ReadHeaderTimeout)
	limits.Set(&c.idleTimeout, l.IdleTimeout)
	limits.Set(&c.shutdownTimeout, l.ShutdownTimeout)
}

func (o LimitsOption) applyMemoryEventStore(l *memoryLimits) {
	limits.Set(&l.maxEventsPerStream, o.l.MaxEventsPerStream)
	limits.Set(&l.maxBytesPerSession, o.l.MaxEventBytesPerSession)
	limits.Set(&l.maxBytes, o.l.MaxEventBytes)
}
