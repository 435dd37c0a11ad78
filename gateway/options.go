package gateway

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Defaults of the options and Limits.
const (
	DefaultTimeout      = 60 * time.Second // per upstream call, unless Upstream.Timeout says otherwise
	DefaultMinBackoff   = 100 * time.Millisecond
	DefaultMaxBackoff   = 30 * time.Second
	DefaultCrashLimit   = 5 // failures within DefaultCrashWindow make an upstream down
	DefaultCrashWindow  = time.Minute
	DefaultStartTimeout = 30 * time.Second // how long New and Reload wait for a first connection
	DefaultSeparator    = "__"
	// DefaultUpstreamConns is how many idle connections to one HTTP
	// upstream are kept for reuse (Limits.MaxIdleConns).
	DefaultUpstreamConns = 256
	// DefaultMaxUpstreamMessage bounds one message from an upstream, in
	// bytes (Limits.MaxMessageBytes): 16 MiB, the client package's default.
	DefaultMaxUpstreamMessage = client.DefaultMaxMessageSize
	// DefaultAuditMaxValue is the longest string value of a request's
	// arguments kept whole in the audit trail, in bytes
	// (WithAuditRedaction); longer ones are cut.
	DefaultAuditMaxValue = 1024
)

// Option configures New. Options apply in order (a later one wins), nil
// options are ignored and defaults fill in the rest, as everywhere in the
// project.
type Option interface{ applyGateway(*options) }

type options struct {
	logger      *slog.Logger
	info        mcp.Implementation
	limits      Limits // the defaults filled in by newOptions
	logLevel    mcp.LoggingLevel
	logLevelSet bool
	serverOpts  []server.Option
	clientOpts  []client.Option
	tracing     *tracing // nil: no spans (trace.go)

	audit         AuditLog // trust.go; nil: no audit trail
	auditRedact   []string
	auditMaxValue int
}

type option func(*options)

func (f option) applyGateway(o *options) { f(o) }

// WithLogger sets the gateway's logger: supervision, catalog warnings,
// upstream stderr lines and upstream log messages, each tagged with the
// upstream's name. Default: discard.
func WithLogger(l *slog.Logger) Option { return option(func(o *options) { o.logger = l }) }

// WithInfo sets how the gateway introduces itself downstream (default
// "toolwire-gateway").
func WithInfo(info mcp.Implementation) Option { return option(func(o *options) { o.info = info }) }

// WithUpstreamLogLevel sets the level every upstream session is asked to
// log at (logging/setLevel, or the 2026-07-28 _meta), default "info"; ""
// asks nothing, leaving each upstream's own default. Upstream log messages
// go to the gateway's logger and, within a call, to the downstream request
// (see the elicitation notes in input.go for which call).
func WithUpstreamLogLevel(level mcp.LoggingLevel) Option {
	return option(func(o *options) { o.logLevel, o.logLevelSet = level, true })
}

// WithServerOptions adds options to the downstream server the gateway
// owns (middleware, page size, logging...). They apply after the gateway's
// own, so a middleware given here runs inside the gateway's forwarding one
// only for requests the gateway does not forward.
func WithServerOptions(opts ...server.Option) Option {
	return option(func(o *options) { o.serverOpts = append(o.serverOpts, opts...) })
}

// WithClientOptions adds options to every upstream connection (client info,
// probe timeout, era...). The gateway's own (logger, handlers, page limit)
// apply after them.
func WithClientOptions(opts ...client.Option) Option {
	return option(func(o *options) { o.clientOpts = append(o.clientOpts, opts...) })
}

func newOptions(opts []Option) options {
	var o options
	for _, op := range opts {
		if op != nil {
			op.applyGateway(&o)
		}
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.info.Name == "" {
		o.info = mcp.Implementation{Name: "toolwire-gateway", Version: toolwire.Version()}
	}
	limits.Default(&o.limits.CallTimeout, DefaultTimeout)
	limits.Default(&o.limits.MinBackoff, DefaultMinBackoff)
	limits.Default(&o.limits.MaxBackoff, DefaultMaxBackoff)
	o.limits.MaxBackoff = max(o.limits.MaxBackoff, o.limits.MinBackoff)
	limits.Default(&o.limits.MaxCrashes, DefaultCrashLimit)
	limits.Default(&o.limits.CrashWindow, DefaultCrashWindow)
	if !o.logLevelSet {
		o.logLevel = mcp.LevelInfo
	}
	limits.Default(&o.limits.StartTimeout, DefaultStartTimeout)
	limits.Default(&o.limits.MaxIdleConns, DefaultUpstreamConns)
	limits.Default(&o.limits.MaxMessageBytes, DefaultMaxUpstreamMessage)
	o.limits.Inputs = o.limits.Inputs.withDefaults()
	o.limits.Lists = o.limits.Lists.withDefaults()
	if o.auditMaxValue == 0 {
		o.auditMaxValue = DefaultAuditMaxValue
	}
	if o.tracing != nil {
		// Outermost, so that the client middleware given by
		// WithClientOptions sees the trace context in _meta.
		o.clientOpts = append([]client.Option{client.WithMiddleware(o.tracing.clientMiddleware)}, o.clientOpts...)
	}
	return o
}

// WithTracerProvider turns on OpenTelemetry traces (trace.go): a SERVER span
// per downstream request and a CLIENT span per upstream request made for
// it, named and described by the semantic conventions for MCP, with the
// W3C trace context carried in params._meta (and the traceparent header to
// HTTP upstreams). Default, and with nil: no spans, and no trace context
// read or propagated.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return option(func(o *options) {
		o.tracing = nil
		if tp != nil {
			o.tracing = newTracing(tp)
		}
	})
}

// AuditLog is where the gateway writes its audit records: an audit.Store
// (sync delivery) or an *audit.Async in front of one (async delivery).
type AuditLog interface {
	Append(ctx context.Context, r *audit.Record) error
}

// WithAudit records every tools/call, prompts/get and resources/read, and
// every denied or rate-limited one, as one record in l, after the request
// is answered and before the answer leaves: with a store (sync delivery)
// an acknowledged request is always in the trail, and a record that cannot
// be written withholds the answer (a JSON-RPC error instead). With
// *audit.Async a full queue drops the record (counted in
// toolwire_gateway_audit_dropped_total) and the answer goes out. The
// gateway does not close l.
func WithAudit(l AuditLog) Option { return option(func(o *options) { o.audit = l }) }

// WithAuditRedaction sets what of a request's arguments the audit trail
// keeps: members named like one of keys (at any depth, case-insensitively)
// are replaced by "[redacted]", and string values longer than
// maxValueBytes are cut (default DefaultAuditMaxValue; negative: no
// limit). See audit.Redact.
func WithAuditRedaction(keys []string, maxValueBytes int) Option {
	return option(func(o *options) { o.auditRedact, o.auditMaxValue = keys, maxValueBytes })
}
