package client

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/toolwire/toolwire"
	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Defaults of Limits and WithTimeout; each can be changed.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultProbeTimeout   = 10 * time.Second
	DefaultMaxMessageSize = 16 << 20
	DefaultMaxInputRounds = 8
	DefaultMaxPages       = 1000
	DefaultMaxResumes     = 5
	DefaultResumeDelay    = time.Second
	DefaultGracePeriod    = 2 * time.Second
	// DefaultMinReconnectDelay and DefaultMaxReconnectDelay bound the wait
	// before an SSE stream is reopened (Limits).
	DefaultMinReconnectDelay = 100 * time.Millisecond
	DefaultMaxReconnectDelay = 30 * time.Second
	// DefaultMinToolsTTL is the least time a tools/list is reused
	// (Limits.MinToolsTTL).
	DefaultMinToolsTTL = 30 * time.Second
	// DefaultMaxServerRequests bounds the server requests answered at once
	// (Limits.MaxServerRequests).
	DefaultMaxServerRequests = 16
)

// RequestHandler answers what a server asks of the client: legacy
// server-to-client requests (elicitation/create, sampling/createMessage,
// roots/list) and the inputRequests of a 2026-07-28 input_required result.
// The result is encoded as the answer; an error becomes a JSON-RPC error
// reply (legacy; a *jsonrpc.Error is sent as it is) or fails the call
// (input_required). ctx ends when the server cancels its request
// (notifications/cancelled) or the client closes. When the request is known
// to come with one of the client's calls (an input request always; over
// HTTP, one sent on the call's reply stream), ctx carries that call's
// context values, so the handler can tell which call it serves.
type RequestHandler func(ctx context.Context, method string, params json.RawMessage) (any, error)

// Progress is one notifications/progress report.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// LogMessage is one notifications/message from the server. Level is one
// of the eight syslog levels as the server sent it (a level outside them is
// passed on as it is, not dropped).
type LogMessage struct {
	Level  mcp.LoggingLevel `json:"level"`
	Logger string           `json:"logger,omitempty"`
	Data   json.RawMessage  `json:"data"`
}

// Option configures Connect. Options apply in order, so a later one
// overrides an earlier one (the middleware constructors add to the chain
// instead); nil options are ignored. The defaults are applied after all
// options, so a value a constructor treats as "the default" resets an
// earlier option (but a zero field of WithLimits keeps an earlier one's).
type Option interface{ applyClient(*config) }

// CallOption adjusts one request (Call, CallTool, CallToolRaw, CallToolAs,
// CallToolTask, WaitTask).
// Options apply in order, so a later one overrides an earlier one; nil
// options are ignored.
type CallOption interface{ applyCall(*callConfig) }

// config is what the options set, with the defaults applied by newConfig.
type config struct {
	clientInfo      mcp.Implementation
	capabilities    mcp.ClientCapabilities
	era             mcp.Era
	protocolVersion string
	timeout         time.Duration
	limits          Limits // as WithLimits set them, the defaults filled in by newConfig
	noValidate      bool
	requestHandler  RequestHandler
	middleware      []jsonrpc.Middleware
	receiving       []jsonrpc.Middleware
	onLog           func(LogMessage)
	onNotification  func(method string, params json.RawMessage)
	onUpdated       func(uri string)
	logger          *slog.Logger

	// Typed answers to server requests (handlers.go) and the capabilities
	// they add to those declared.
	elicit      ElicitationHandler
	elicitURL   bool
	sample      SamplingHandler
	sampleTools bool
	sampleCtx   bool
	rootsSet    bool
	roots       []mcp.Root
}

// newConfig applies opts and then the defaults.
func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o.applyClient(&c)
		}
	}
	if c.clientInfo.Name == "" {
		c.clientInfo = mcp.Implementation{Name: "toolwire-client", Version: toolwire.Version()}
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	limits.Default(&c.limits.ProbeTimeout, DefaultProbeTimeout)
	limits.Default(&c.limits.MaxMessageBytes, DefaultMaxMessageSize)
	limits.Default(&c.limits.MaxInputRounds, DefaultMaxInputRounds)
	limits.Default(&c.limits.MaxPages, DefaultMaxPages)
	if c.limits.MaxResumes == 0 {
		c.limits.MaxResumes = DefaultMaxResumes
	}
	limits.Default(&c.limits.MinReconnectDelay, DefaultMinReconnectDelay)
	limits.Default(&c.limits.MaxReconnectDelay, DefaultMaxReconnectDelay)
	c.limits.MaxReconnectDelay = max(c.limits.MaxReconnectDelay, c.limits.MinReconnectDelay)
	if c.limits.MinToolsTTL == 0 {
		c.limits.MinToolsTTL = DefaultMinToolsTTL
	}
	c.limits.MinToolsTTL = max(c.limits.MinToolsTTL, 0)
	limits.Default(&c.limits.MinTaskPoll, DefaultMinTaskPoll)
	limits.Default(&c.limits.MaxTaskPoll, DefaultMaxTaskPoll)
	c.limits.MaxTaskPoll = max(c.limits.MaxTaskPoll, c.limits.MinTaskPoll)
	limits.Default(&c.limits.MaxServerRequests, DefaultMaxServerRequests)
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	c.capabilities = c.declared()
	return c
}

type clientOption func(*config)

func (f clientOption) applyClient(c *config) { f(c) }

// WithClientInfo sets the clientInfo sent in initialize and in every
// 2026-07-28 request's _meta. By default, and when info.Name is empty, it is
// {toolwire-client, toolwire.Version()}.
func WithClientInfo(info mcp.Implementation) Option {
	return clientOption(func(c *config) { c.clientInfo = info })
}

// WithCapabilities sets the capabilities declared to the server: in
// initialize, or in every 2026-07-28 request's _meta. By default none are
// declared but those the typed handlers add (WithElicitationHandler,
// WithSamplingHandler, WithRoots); a member set here wins over the one a
// handler would add, the others are merged in. Declare only what the
// handlers or WithRequestHandler can answer.
func WithCapabilities(caps mcp.ClientCapabilities) Option {
	return clientOption(func(c *config) { c.capabilities = caps })
}

// WithEra picks the protocol family: mcp.EraModern (2026-07-28:
// server/discover, per-request _meta and headers), mcp.EraLegacy
// (2025-11-25 and older: initialize, then a session) or mcp.EraAuto, the
// default, which probes with server/discover, falls back to initialize, and
// remembers the answer. Any other value makes Connect fail.
func WithEra(era mcp.Era) Option {
	return clientOption(func(c *config) { c.era = era })
}

// WithProtocolVersion sets the protocol version asked for first (for
// example "2025-06-18" with mcp.EraLegacy). By default, and when v is empty
// or not a version the client speaks in the era being negotiated, the
// newest version of that era is asked for.
func WithProtocolVersion(v string) Option {
	return clientOption(func(c *config) { c.protocolVersion = v })
}

// WithRequestHandler sets what answers the requests a server sends the
// client (legacy server-to-client requests and 2026-07-28 inputRequests).
// ping is answered by the client itself, and elicitation/create,
// sampling/createMessage and roots/list by their typed handlers when set
// (WithElicitationHandler, WithSamplingHandler, WithRoots); a request for a
// capability the client did not declare never reaches h. By default, and
// when h is nil, every other request is answered with -32601 (method not
// found).
func WithRequestHandler(h RequestHandler) Option {
	return clientOption(func(c *config) { c.requestHandler = h })
}

// WithLogHandler sets what receives the server's notifications/message. By
// default, and when fn is nil, they are dropped. fn runs on the goroutine
// reading them and must not block.
func WithLogHandler(fn func(LogMessage)) Option {
	return clientOption(func(c *config) { c.onLog = fn })
}

// WithResourceUpdatedHandler sets what receives the URI of every
// notifications/resources/updated: of a legacy session's resources/subscribe
// or of a 2026-07-28 subscriptions/listen stream (see Listen). The
// notification also reaches WithNotificationHandler and the Listen callback.
// fn runs on the goroutine reading it and must not block.
func WithResourceUpdatedHandler(fn func(uri string)) Option {
	return clientOption(func(c *config) { c.onUpdated = fn })
}

// WithNotificationHandler sets what receives the server's notifications
// other than notifications/progress (see WithProgress) and
// notifications/message (see WithLogHandler), as method and raw params,
// after the client has acted on them: notifications/tools/list_changed
// drops the cached tools/list, notifications/cancelled cancels the server
// request it names, notifications/resources/updated goes to
// WithResourceUpdatedHandler, and a subscription's notifications to its
// Listen callback. By default, and when fn is nil, they are dropped. fn
// runs on the goroutine reading them and must not block.
func WithNotificationHandler(fn func(method string, params json.RawMessage)) Option {
	return clientOption(func(c *config) { c.onNotification = fn })
}

// WithLogger sets where diagnostics go (malformed messages, broken SSE
// streams, session re-initialization) and a stdio child's stderr. By
// default, and when l is nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return clientOption(func(c *config) { c.logger = l })
}

// WithMiddleware wraps every request the client sends in mws, the first
// outermost; each call adds to the chain after (inside) the middleware
// earlier calls gave. A middleware gets the request's method and params as
// the caller gave them (no id yet, no _meta the client adds) and returns
// the raw result (json.RawMessage) or the error. It can observe (log, time,
// count), rewrite the params, or refuse by returning an error without
// calling next, in which case nothing is sent. Every wire request passes
// through it, including server/discover, initialize, each page of a
// listing and each round of an input_required call.
func WithMiddleware(mws ...jsonrpc.Middleware) Option {
	return clientOption(func(c *config) { c.middleware = append(c.middleware, mws...) })
}

// WithReceivingMiddleware wraps every request the server sends the client
// in mws, the first outermost, before the answer is chosen (ping, or the
// RequestHandler); each call adds to the chain after (inside) the
// middleware earlier calls gave. It sees legacy server-to-client requests
// (the request's ID is the server's) and the inputRequests of 2026-07-28
// input_required results (the ID is the input's key, a string). What the
// chain returns is the answer; an error becomes the JSON-RPC error reply,
// or fails the call.
func WithReceivingMiddleware(mws ...jsonrpc.Middleware) Option {
	return clientOption(func(c *config) { c.receiving = append(c.receiving, mws...) })
}

// TimeoutOption bounds how long a request may wait for its response. As an
// Option it is the default for every request; as a CallOption it applies to
// that one request.
type TimeoutOption struct{ d time.Duration }

// WithTimeout bounds how long a request waits for its response (default
// 60 s), input_required rounds included. When it expires the server is told
// the request is cancelled (notifications/cancelled, or over 2026-07-28 HTTP
// by closing the response stream) and the call fails with a transport error
// that matches context.DeadlineExceeded. Zero means the default (for a call,
// the client's timeout); a negative value means no limit.
func WithTimeout(d time.Duration) TimeoutOption { return TimeoutOption{d} }

func (o TimeoutOption) applyClient(c *config) { c.timeout = o.d }
func (o TimeoutOption) applyCall(c *callConfig) {
	c.timeout, c.hasTimeout = o.d, o.d != 0
}

// OutputValidationOption turns the check of a tools/call result's
// structuredContent against the tool's outputSchema on or off. As an Option
// it applies to every call; as a CallOption to that one call, over the
// client's.
type OutputValidationOption struct{ on bool }

// WithOutputValidation turns the outputSchema check on or off (on by
// default: structuredContent is validated against the outputSchema from
// tools/list). Off, CallTool needs no tools/list first.
func WithOutputValidation(on bool) OutputValidationOption { return OutputValidationOption{on} }

func (o OutputValidationOption) applyClient(c *config) { c.noValidate = !o.on }
func (o OutputValidationOption) applyCall(c *callConfig) {
	c.validate = &o.on
}

type callConfig struct {
	timeout    time.Duration
	hasTimeout bool
	progress   func(Progress)
	// validate, when set, turns the outputSchema check on or off for this
	// call, whatever the client's setting.
	validate *bool
	// onStart, when set, learns the id of each wire request the call
	// sends (subscriptions/listen routes its notifications by it).
	onStart func(jsonrpc.ID)
	// onToken, when set, learns the progress token of each wire request
	// the call sends with one (a 2025-11-25 task keeps it for its life).
	onToken func(string)
	// caps, when set, is the clientCapabilities a 2026-07-28 request
	// declares in its _meta instead of the client's (tasks.go adds the
	// tasks extension to the requests that use it).
	caps json.RawMessage
	// Task options (task.go).
	taskTTL    *time.Duration
	taskStatus func(mcp.Task)
	// onLog, when set, gets the log messages that come with the call.
	onLog func(LogMessage)
	// Relayed input (WithInputRounds, WithInputResponses).
	noRounds     bool
	inputs       json.RawMessage
	requestState json.RawMessage
}

// progressOption is a CallOption holding only a func, so that it is stored
// in the interface as it is, without an allocation.
type progressOption struct{ fn func(Progress) }

func (o progressOption) applyCall(c *callConfig) { c.progress = o.fn }

// WithProgress asks the server for progress reports (a progressToken is
// sent) and delivers them to fn, in order, on the goroutine reading them
// (over HTTP, reports on the request's own reply stream are read on the
// caller's): fn must not block. By default, and when fn is nil, no
// progressToken is sent.
func WithProgress(fn func(Progress)) CallOption { return progressOption{fn} }

// logOption is a CallOption holding only a func, as progressOption.
type logOption struct{ fn func(LogMessage) }

func (o logOption) applyCall(c *callConfig) { c.onLog = o.fn }

type inputRoundsOption bool

func (o inputRoundsOption) applyCall(c *callConfig) { c.noRounds = !bool(o) }

// WithInputRounds turns the answering of a 2026-07-28 call's input_required
// results on or off (on by default). Off, the call returns such a result as
// it is (raw, as from Call): for a relay, such as a gateway, whose own
// client answers and retries the call with WithInputResponses.
func WithInputRounds(on bool) CallOption { return inputRoundsOption(on) }

type inputResponsesOption struct{ responses, state json.RawMessage }

func (o inputResponsesOption) applyCall(c *callConfig) {
	c.inputs, c.requestState = o.responses, o.state
}

// WithInputResponses sends the call as the retry of an input_required
// result: with params.inputResponses and params.requestState as given
// (raw JSON, passed on as they are; either may be nil to leave it out).
func WithInputResponses(responses, requestState json.RawMessage) CallOption {
	return inputResponsesOption{responses, requestState}
}

// WithCallLog delivers to fn the notifications/message the server sends
// with this call: over HTTP, those on the call's own reply stream (stdio
// says nothing of which request a message belongs to: there only the
// WithLogHandler handler gets them, as it gets every message). fn runs on
// the goroutine reading them and must not block.
func WithCallLog(fn func(LogMessage)) CallOption { return logOption{fn} }

// newCallConfig applies opts in order.
// validates says whether this call checks structuredContent against the
// tool's outputSchema: the call's setting if it has one, else the client's.
func (cc *callConfig) validates(c *Client) bool {
	if cc.validate != nil {
		return *cc.validate
	}
	return !c.cfg.noValidate
}

func newCallConfig(opts []CallOption) callConfig {
	if len(opts) == 0 {
		return callConfig{}
	}
	cc := new(callConfig) // the options may keep it: only allocated when there are some
	for _, o := range opts {
		if o != nil {
			o.applyCall(cc)
		}
	}
	return *cc
}

type headerKey struct{}

// ContextWithHeader returns a context whose requests' POSTs carry h
// (Streamable HTTP only), over the same names in HTTP.Header; the MCP
// headers the client sets itself win. It is how a WithMiddleware
// middleware, which cannot add CallOptions, adds per-request headers such
// as a W3C traceparent.
func ContextWithHeader(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headerKey{}, h)
}

// headerFrom is the extra headers ContextWithHeader put on ctx, or nil.
func headerFrom(ctx context.Context) http.Header {
	h, _ := ctx.Value(headerKey{}).(http.Header)
	return h
}
