package streamable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/limits"
)

// Defaults for ListenAndServe and the server's Limits.
const (
	DefaultAddr              = "127.0.0.1:8080"
	DefaultPath              = "/mcp"
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultShutdownTimeout   = 30 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	// DefaultMaxConns bounds the connections the endpoint holds at once
	// (Limits.MaxConns): past it new ones wait in the kernel's backlog, so
	// that a flood of idle connections cannot exhaust the process's
	// descriptors.
	DefaultMaxConns = 4096
)

type serverConfig struct {
	path              string
	readHeaderTimeout time.Duration
	idleTimeout       time.Duration
	maxHeaderBytes    int
	maxConns          int
	shutdownTimeout   time.Duration
	onListen          func(url string)
	logger            *slog.Logger
	wrap              []func(http.Handler) http.Handler
	routes            []route
}

// route is another handler served next to the endpoint (WithRoute).
type route struct {
	pattern string
	h       http.Handler
}

type serverOption func(*serverConfig)

func (f serverOption) applyServer(c *serverConfig) { f(c) }

// WithPath sets where the MCP endpoint lives (default "/mcp"); other paths
// get 404. An empty path means the default.
func WithPath(p string) ServerOption {
	return serverOption(func(c *serverConfig) { c.path = p })
}

// WithOnListen sets a function called with the endpoint's URL
// ("http://host:port/path") once the server is listening. By default, and
// when f is nil, nothing is called.
func WithOnListen(f func(url string)) ServerOption {
	return serverOption(func(c *serverConfig) { c.onListen = f })
}

// WithHTTPMiddleware wraps the endpoint's handler in mw (authentication,
// say: an http.Handler that puts an auth.Principal on the request's
// context). Several wrap in order: the first given is the outermost.
func WithHTTPMiddleware(mw func(http.Handler) http.Handler) ServerOption {
	return serverOption(func(c *serverConfig) {
		if mw != nil {
			c.wrap = append(c.wrap, mw)
		}
	})
}

// WithRoute serves h at pattern (an http.ServeMux pattern) next to the
// endpoint, for example the Protected Resource Metadata of RFC 9728.
func WithRoute(pattern string, h http.Handler) ServerOption {
	return serverOption(func(c *serverConfig) { c.routes = append(c.routes, route{pattern, h}) })
}

// newServerConfig applies opts and then the defaults.
func newServerConfig(opts []ServerOption) serverConfig {
	var c serverConfig
	for _, o := range opts {
		if o != nil {
			o.applyServer(&c)
		}
	}
	if c.path == "" {
		c.path = DefaultPath
	}
	limits.Default(&c.readHeaderTimeout, DefaultReadHeaderTimeout)
	limits.Default(&c.idleTimeout, DefaultIdleTimeout)
	limits.Default(&c.maxHeaderBytes, DefaultMaxHeaderBytes)
	limits.Default(&c.maxConns, DefaultMaxConns)
	limits.Default(&c.shutdownTimeout, DefaultShutdownTimeout)
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// ListenAndServe listens on addr (DefaultAddr when empty: loopback only) and
// serves h like Serve.
func ListenAndServe(ctx context.Context, addr string, h *Handler, opts ...ServerOption) error {
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, h, opts...)
}

// Serve serves h at the endpoint path (WithPath) on ln until ctx is done,
// then shuts down gracefully: the listener closes, streams end, and requests
// in flight get up to the shutdown timeout (Limits.ShutdownTimeout) to finish. There is no whole-request write timeout,
// which would cut SSE streams; the handler bounds each write instead.
func Serve(ctx context.Context, ln net.Listener, h *Handler, opts ...ServerOption) error {
	o := newServerConfig(opts)
	mux := http.NewServeMux()
	var endpoint http.Handler = h
	for i := len(o.wrap) - 1; i >= 0; i-- {
		endpoint = o.wrap[i](endpoint)
	}
	mux.Handle(o.path, endpoint)
	if err := addRoutes(mux, o.routes); err != nil {
		h.Close()
		return err
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: o.readHeaderTimeout,
		IdleTimeout:       o.idleTimeout,
		MaxHeaderBytes:    o.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(o.logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(httpguard.LimitListener(ln, o.maxConns)) }()
	if o.onListen != nil {
		o.onListen("http://" + ln.Addr().String() + o.path)
	}
	select {
	case err := <-errc:
		h.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	serr := make(chan error, 1)
	go func() { serr <- srv.Shutdown(sctx) }()
	herr := h.Shutdown(sctx)
	err := <-serr
	if e := <-errc; e != nil && !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return errors.Join(herr, err)
}

// addRoutes registers WithRoute's handlers; a pattern the mux refuses
// (malformed, or conflicting with another) is an error, not a panic.
func addRoutes(mux *http.ServeMux, routes []route) (err error) {
	for _, r := range routes {
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("streamable: route %q: %v", r.pattern, p)
				}
			}()
			mux.Handle(r.pattern, r.h)
		}()
		if err != nil {
			return err
		}
	}
	return nil
}
