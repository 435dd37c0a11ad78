package client

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Defaults for the limits in Options; each can be changed there.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultProbeTimeout   = 10 * time.Second
	DefaultMaxMessageSize = 16 << 20
	DefaultMaxInputRounds = 8
	DefaultMaxPages       = 1000
	DefaultMaxResumes     = 5
	DefaultResumeDelay    = time.Second
	DefaultGracePeriod    = 2 * time.Second
)

// RequestHandler answers what a server asks of the client: legacy
// server-to-client requests (elicitation/create, sampling/createMessage,
// roots/list) and the inputRequests of a 2026-07-28 input_required result.
// The result is encoded as the answer; an error becomes a JSON-RPC error
// reply (legacy; a *jsonrpc.Error is sent as it is) or fails the call
// (input_required). ctx ends when the server cancels its request
// (notifications/cancelled) or the client closes.
type RequestHandler func(ctx context.Context, method string, params json.RawMessage) (any, error)

// Progress is one notifications/progress report.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// LogMessage is one notifications/message from the server.
type LogMessage struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// Options configure a Client. The zero value is usable.
type Options struct {
	// ClientInfo names this client; default {toolwire-client, <version>}.
	ClientInfo mcp.Implementation
	// Capabilities are declared to the server (in initialize, or in every
	// modern request's _meta). Declare only what RequestHandler can answer.
	Capabilities mcp.ClientCapabilities
	// Era picks the protocol family: mcp.EraModern (2026-07-28:
	// server/discover, per-request _meta and headers), mcp.EraLegacy
	// (2025-11-25 and older: initialize, then a session) or the zero value,
	// mcp.EraAuto, which probes with server/discover, falls back to
	// initialize, and remembers the answer.
	Era mcp.Era
	// ProtocolVersion, when set, is the version asked for first (for example
	// "2025-06-18" with EraLegacy). Default: the newest of the era.
	ProtocolVersion string
	// Timeout bounds each request unless a call sets its own; 0 means
	// DefaultTimeout, a negative value means no limit.
	Timeout time.Duration
	// ProbeTimeout bounds the server/discover probe of EraAuto; 0 means
	// DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// MaxMessageSize bounds one incoming message (a JSON body, an SSE event,
	// a stdio line or a message read from a Conn) in bytes; 0 means
	// DefaultMaxMessageSize.
	MaxMessageSize int
	// DisableOutputValidation turns off checking structuredContent against
	// the tool's outputSchema.
	DisableOutputValidation bool
	// MaxInputRounds bounds input_required round trips per call; 0 means
	// DefaultMaxInputRounds.
	MaxInputRounds int
	// MaxPages bounds the pages one listing follows; 0 means DefaultMaxPages.
	MaxPages int
	// MaxResumes bounds Last-Event-ID reconnections per request; 0 means
	// DefaultMaxResumes, a negative value disables resumption.
	MaxResumes int
	// RequestHandler answers server requests; nil answers every one but
	// ping with "method not found". ping is answered by the client itself.
	RequestHandler RequestHandler
	// Middleware wraps every request the client sends, outermost first: the
	// handler gets the request's method and params as the caller gave them
	// (no id yet, no _meta the client adds) and returns the raw result
	// (json.RawMessage) or the error. A middleware can observe (log, time,
	// count), rewrite the params, or refuse by returning an error without
	// calling next, in which case nothing is sent. Every wire request passes
	// through it, including server/discover, initialize, each page of a
	// listing and each round of an input_required call.
	Middleware []jsonrpc.Middleware
	// ReceivingMiddleware wraps every request the server sends the client,
	// outermost first, before the answer is chosen (ping, or RequestHandler):
	// legacy server-to-client requests (the request's ID is the server's)
	// and the inputRequests of 2026-07-28 input_required results (the ID is
	// the input's key, a string). What the chain returns is the answer; an
	// error becomes the JSON-RPC error reply, or fails the call.
	ReceivingMiddleware []jsonrpc.Middleware
	// OnLog receives notifications/message.
	OnLog func(LogMessage)
	// OnNotification receives every other server notification (method and
	// raw params), after the client has acted on it.
	OnNotification func(method string, params json.RawMessage)
	// Logger receives diagnostics and a stdio child's stderr; default: discard.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.ClientInfo.Name == "" {
		c.ClientInfo = mcp.Implementation{Name: "toolwire-client", Version: Version}
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.MaxInputRounds <= 0 {
		c.MaxInputRounds = DefaultMaxInputRounds
	}
	if c.MaxPages <= 0 {
		c.MaxPages = DefaultMaxPages
	}
	if c.MaxResumes == 0 {
		c.MaxResumes = DefaultMaxResumes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Version is the client's default clientInfo version.
const Version = "0.1.0"

// CallOption adjusts one request.
type CallOption func(*callConfig)

type callConfig struct {
	timeout    time.Duration
	hasTimeout bool
	progress   func(Progress)
	noValidate bool
}

// WithTimeout bounds this request (a negative value: no limit), overriding
// Options.Timeout.
func WithTimeout(d time.Duration) CallOption {
	return func(c *callConfig) { c.timeout, c.hasTimeout = d, true }
}

// WithProgress asks the server for progress reports (a progressToken is
// sent) and delivers them to fn, in order, on the goroutine reading them
// (over HTTP, reports on the request's own reply stream are read on the
// caller's): fn must not block.
func WithProgress(fn func(Progress)) CallOption {
	return func(c *callConfig) { c.progress = fn }
}

// WithoutOutputValidation skips the outputSchema check for this call.
func WithoutOutputValidation() CallOption {
	return func(c *callConfig) { c.noValidate = true }
}
