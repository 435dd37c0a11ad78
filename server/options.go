package server

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Defaults for the server's limits; every one can be changed by an Option.
const (
	DefaultPageSize    = 100
	DefaultToolTimeout = 10 * time.Minute
	DefaultListTTL     = time.Minute
)

type config struct {
	features       []Feature // WithCapabilities
	instructions   string
	pageSize       int
	timeout        time.Duration
	listTTL        time.Duration
	cacheScope     mcp.CacheScope
	logger         *slog.Logger
	validateOutput bool
	maxViolations  int
	receiving      []jsonrpc.Middleware
	sendingMW      []jsonrpc.Middleware
	input          inputConfig // multi round-trip requests (input.go)
	logging        logConfig   // WithLogLevel, WithLogName (logging.go)

	resources    resourceConfig                  // Limits.MaxURILength, Limits.MaxSubscriptions (resource.go)
	rootsChanged func(context.Context, *Session) // WithRootsChangedHandler (roots.go)
	tasks        taskConfig                      // WithTaskStore, Limits (task.go)
	listFilter   ListFilter                      // WithListFilter (listfilter.go)
}

func defaultConfig() config {
	return config{
		pageSize:       DefaultPageSize,
		timeout:        DefaultToolTimeout,
		listTTL:        DefaultListTTL,
		cacheScope:     mcp.CachePublic,
		logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		validateOutput: true,
	}
}

// Option configures a Server.
type Option interface{ applyServer(*config) }

// ToolOption configures one tool at registration.
type ToolOption interface{ applyTool(*toolConfig) }

type toolConfig struct {
	timeout     time.Duration
	hasTimeout  bool
	taskSupport mcp.TaskSupport // WithTaskSupport (task.go)
	deferTask   bool            // WithDeferredTask
}

type serverOption func(*config)

func (f serverOption) applyServer(c *config) { f(c) }

// Feature is a server feature whose capability can be declared before any
// item of it is registered (WithCapabilities).
type Feature string

// Features WithCapabilities declares.
const (
	FeatureTools       Feature = "tools"
	FeaturePrompts     Feature = "prompts"
	FeatureResources   Feature = "resources"
	FeatureCompletions Feature = "completions"
)

// WithCapabilities declares features from the start, with their methods
// served (empty lists, unknown names refused as usual), instead of with
// the first item registered: for a server whose items come and go, such
// as a gateway's, which must declare the same capabilities while its
// catalog is empty. A feature the server does not know is ignored.
func WithCapabilities(features ...Feature) Option {
	return serverOption(func(c *config) { c.features = append(c.features, features...) })
}

// WithInstructions sets the instructions initialize and server/discover return.
func WithInstructions(s string) Option {
	return serverOption(func(c *config) { c.instructions = s })
}

// WithLogger sets where the server logs (recovered panics, output that fails
// its schema). By default it logs nothing and never prints.
func WithLogger(l *slog.Logger) Option {
	return serverOption(func(c *config) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithListCaching sets the ttlMs and cacheScope of 2026-07-28 list results
// (default one minute, public).
func WithListCaching(ttl time.Duration, scope mcp.CacheScope) Option {
	return serverOption(func(c *config) {
		if ttl < 0 {
			ttl = 0
		}
		c.listTTL = ttl
		if scope != "" {
			c.cacheScope = scope
		}
	})
}

// WithOutputValidation turns the check of typed output against its
// outputSchema on or off (on by default).
func WithOutputValidation(on bool) Option {
	return serverOption(func(c *config) { c.validateOutput = on })
}

// TimeoutOption sets a tool call timeout. As a server Option it is the default
// for every tool; as a ToolOption it applies to that tool. Zero means none.
type TimeoutOption struct{ d time.Duration }

// WithTimeout bounds how long a tools/call may run (default 10 minutes). When
// it expires the handler's context is cancelled and the caller gets an
// isError result saying so.
func WithTimeout(d time.Duration) TimeoutOption { return TimeoutOption{d} }

func (o TimeoutOption) applyServer(c *config)   { c.timeout = max(o.d, 0) }
func (o TimeoutOption) applyTool(t *toolConfig) { t.timeout, t.hasTimeout = max(o.d, 0), true }

// WithMiddleware wraps every request the server receives, in every era, in
// mws (the first outermost). A middleware sees the method and raw params,
// can read the request's peer, headers and principal with RequestFrom, and
// can observe or replace the result or error: it can refuse a tools/call
// with an isError result (mcp.ErrorResult) without the tool running.
func WithMiddleware(mws ...jsonrpc.Middleware) Option {
	return serverOption(func(c *config) { c.receiving = append(c.receiving, mws...) })
}

// WithSendingMiddleware wraps every request the server sends its clients
// (ping, roots/list, sampling, elicitation) in mws; a middleware sees the
// method and params before they are sent and the client's result after.
func WithSendingMiddleware(mws ...jsonrpc.Middleware) Option {
	return serverOption(func(c *config) { c.sendingMW = append(c.sendingMW, mws...) })
}
