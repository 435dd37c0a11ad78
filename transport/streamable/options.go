package streamable

import (
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/transport"
)

// Defaults of the handler's Limits; every limit can be changed.
const (
	DefaultMaxBodyBytes       = 4 << 20 // 4 MiB
	DefaultSessionIdleTimeout = 10 * time.Minute
	DefaultMaxSessions        = 10000
	DefaultRetryInterval      = time.Second
	DefaultKeepAliveInterval  = 15 * time.Second
	DefaultWriteTimeout       = 30 * time.Second
	DefaultReadTimeout        = 30 * time.Second
	DefaultMaxInFlight        = 4096
	// DefaultMaxInFlightPerSession is 256: far more concurrent calls than
	// an agent fanning out tool calls uses, yet one sixteenth of
	// DefaultMaxInFlight, so one session cannot take every slot.
	DefaultMaxInFlightPerSession = 256
	// DefaultMinBodyRate and DefaultBodyGrace: a POST body must come at 4
	// KiB a second (a poor mobile link) once its first 5 s have passed,
	// so a body that stalls is refused in seconds, not at the read
	// timeout.
	DefaultMinBodyRate = 4 << 10
	DefaultBodyGrace   = 5 * time.Second
	// DefaultMaxSessionsPerPrincipal and DefaultMaxAnonymousSessions: one
	// principal may hold half of DefaultMaxSessions, callers without
	// credentials together a quarter, so neither can take every session.
	DefaultMaxSessionsPerPrincipal = 5000
	DefaultMaxAnonymousSessions    = 2500
	// DefaultUnusedSessionTimeout ends, after 30 s, a session whose client
	// sent nothing after initialize (not even notifications/initialized):
	// a client that means to use it does so at once.
	DefaultUnusedSessionTimeout = 30 * time.Second
)

// HandlerOption configures NewHandler. Options apply in order, so a later
// one overrides an earlier one; nil options are ignored.
type HandlerOption interface{ applyHandler(*handlerConfig) }

// ServerOption configures Serve and ListenAndServe. Options apply in order,
// so a later one overrides an earlier one; nil options are ignored.
type ServerOption interface{ applyServer(*serverConfig) }

type handlerConfig struct {
	allowedHosts       []string
	allowedOrigins     []string
	maxBodyBytes       int64
	sessionIdleTimeout time.Duration
	maxSessions        int
	maxInFlight        int
	maxPerSession      int
	eventStore         EventStore
	sessionStore       SessionStore
	sessionBus         SessionBus
	retryInterval      time.Duration
	keepAliveInterval  time.Duration
	writeTimeout       time.Duration
	readTimeout        time.Duration
	budget             *transport.MemoryBudget
	noBudget           bool
	anonShare          int64 // 0: the default; below 0: none
	addrShare          int64 // 0: the default; below 0: none
	minBodyRate        int64 // below 0: none
	bodyGrace          time.Duration
	maxPerPrincipal    int
	maxAnonymous       int
	unusedTimeout      time.Duration
	admit              func(*http.Request, *auth.Principal) error
	logger             *slog.Logger
}

type handlerOption func(*handlerConfig)

func (f handlerOption) applyHandler(c *handlerConfig) { f(c) }

// WithAllowedHosts sets the Host header values accepted, each a host name
// (any port) or host:port; a request with another Host gets 403. By default,
// and when hosts is empty, only localhost, 127.0.0.1 and [::1] are accepted,
// which protects a loopback server against DNS rebinding. "*" accepts any
// host. Each call replaces the list an earlier one set.
func WithAllowedHosts(hosts ...string) HandlerOption {
	hosts = slices.Clone(hosts)
	return handlerOption(func(c *handlerConfig) { c.allowedHosts = hosts })
}

// WithAllowedOrigins sets the Origin header values accepted when a request
// carries one, as full origins ("https://app.example.com") or "*"; a request
// whose Origin is not allowed gets 403. By default, and when origins is
// empty, http and https origins on localhost, 127.0.0.1 and [::1] are
// accepted. Each call replaces the list an earlier one set.
func WithAllowedOrigins(origins ...string) HandlerOption {
	origins = slices.Clone(origins)
	return handlerOption(func(c *handlerConfig) { c.allowedOrigins = origins })
}

// WithSessionStore shares 2025-era sessions through store, so that every
// replica behind one endpoint serves every session (see SessionStore).
// The handler's opener must implement jsonrpc.SessionResumer and its
// sessions jsonrpc.StatefulSession (a *server.Server does). Use a shared
// EventStore too (WithEventStore), so that streams resume anywhere.
func WithSessionStore(store SessionStore) HandlerOption {
	return handlerOption(func(c *handlerConfig) { c.sessionStore = store })
}

// WithSessionBus passes shared sessions' messages between replicas (see
// SessionBus): cancellations and the client's answers reach the replica
// whose work they concern, messages outside requests reach the GET stream
// wherever it is held, and a POST stream resumed on another replica goes on
// live. It takes effect with WithSessionStore.
func WithSessionBus(bus SessionBus) HandlerOption {
	return handlerOption(func(c *handlerConfig) { c.sessionBus = bus })
}

// WithMemoryBudget charges the body of every POST to b as it arrives, until
// its request is answered (for a 2025-era call whose POST connection
// dropped, until the call ends), so that requests in flight cannot hold
// more memory than the budget allows whatever their content would cost
// decoded, and a body announced but not sent holds next to nothing. A
// request without a principal is charged to a share of b
// (Limits.MaxAnonymousBytes, Limits.MaxAddressBytes). Past it a POST gets 503 with
// Retry-After and a JSON-RPC error with jsonrpc.CodeOverloaded: refused
// before its body is read when its Content-Length shows it does not fit
// now (id null), else once the bytes read do not fit, undecoded, with the
// id its bytes show. One budget may be
// shared with stdio and other handlers. By default the handler uses
// transport.SharedMemoryBudget (transport.DefaultMemoryBudget, 32 MiB,
// shared by the whole process); a nil b turns the budget off (POST bodies
// are admitted whatever the requests in flight hold; Limits.MaxBodyBytes and
// Limits.MaxInFlight still apply). A budget smaller than Limits.MaxBodyBytes
// refuses the largest bodies always.
func WithMemoryBudget(b *transport.MemoryBudget) HandlerOption {
	return handlerOption(func(c *handlerConfig) { c.budget, c.noBudget = b, b == nil })
}

// WithSessionAdmission decides whether the caller of an initialize may
// have a 2025-era session at all, before anything is counted or opened: it
// gets the HTTP request and its principal (nil without credentials) and
// returns nil to admit it. A refused initialize gets 403 with the error as
// its JSON-RPC error: a *jsonrpc.Error as it is, any other error with code
// -32600 and the error's text, which the client sees. An authorization
// layer in front (a gateway's personas) uses it so that a caller it would
// refuse everything holds no session either.
func WithSessionAdmission(admit func(r *http.Request, p *auth.Principal) error) HandlerOption {
	return handlerOption(func(c *handlerConfig) { c.admit = admit })
}

// WithEventStore sets where the events of 2025-era SSE streams are kept for
// resumption with Last-Event-ID. By default, and when s is nil, each handler
// has its own NewMemoryEventStore with default limits (1024 events per
// stream, 8 MiB per session, 64 MiB in all). Only the events of streams
// whose client holds an event id are stored: nothing else can be resumed.
func WithEventStore(s EventStore) HandlerOption {
	return handlerOption(func(c *handlerConfig) { c.eventStore = s })
}

// LoggerOption sets where diagnostics go. It is both a HandlerOption (a
// request refused for using another principal's session, expired sessions,
// replies not delivered, events not stored) and a ServerOption (errors of
// the HTTP server, at warn level).
type LoggerOption struct{ l *slog.Logger }

// WithLogger sets where the handler's or the server's diagnostics go. By
// default, and when l is nil, nothing is logged. Pass the same value to
// NewHandler and to Serve to log both.
func WithLogger(l *slog.Logger) LoggerOption { return LoggerOption{l} }

func (o LoggerOption) applyHandler(c *handlerConfig) { c.logger = o.l }
func (o LoggerOption) applyServer(c *serverConfig)   { c.logger = o.l }

// newHandlerConfig applies opts and then the defaults.
func newHandlerConfig(opts []HandlerOption) handlerConfig {
	var c handlerConfig
	for _, o := range opts {
		if o != nil {
			o.applyHandler(&c)
		}
	}
	limits.Default(&c.maxBodyBytes, DefaultMaxBodyBytes)
	limits.Default(&c.sessionIdleTimeout, DefaultSessionIdleTimeout)
	limits.Default(&c.maxSessions, DefaultMaxSessions)
	limits.Default(&c.maxInFlight, DefaultMaxInFlight)
	limits.Default(&c.maxPerSession, DefaultMaxInFlightPerSession)
	if c.eventStore == nil {
		c.eventStore = NewMemoryEventStore()
	}
	limits.Default(&c.retryInterval, DefaultRetryInterval)
	if c.keepAliveInterval == 0 {
		c.keepAliveInterval = DefaultKeepAliveInterval
	}
	limits.Default(&c.writeTimeout, DefaultWriteTimeout)
	limits.Default(&c.readTimeout, DefaultReadTimeout)
	if c.budget == nil && !c.noBudget {
		c.budget = transport.SharedMemoryBudget()
	}
	if c.minBodyRate == 0 {
		c.minBodyRate = DefaultMinBodyRate
	}
	limits.Default(&c.bodyGrace, DefaultBodyGrace)
	limits.Default(&c.maxPerPrincipal, DefaultMaxSessionsPerPrincipal)
	limits.Default(&c.maxAnonymous, DefaultMaxAnonymousSessions)
	limits.Default(&c.unusedTimeout, DefaultUnusedSessionTimeout)
	c.unusedTimeout = min(c.unusedTimeout, c.sessionIdleTimeout)
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c
}
