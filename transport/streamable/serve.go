package streamable

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Defaults for ServerOptions.
const (
	DefaultAddr              = "127.0.0.1:8080"
	DefaultPath              = "/mcp"
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultShutdownTimeout   = 30 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
)

// ServerOptions configure Serve and ListenAndServe. Zero values mean the
// defaults.
type ServerOptions struct {
	// Path is where the MCP endpoint lives; other paths get 404.
	Path string
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its next
	// request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the size of a request's headers.
	MaxHeaderBytes int
	// ShutdownTimeout is how long requests in flight may finish once ctx is
	// done, before they are cancelled.
	ShutdownTimeout time.Duration
	// OnListen, if set, is called with the endpoint URL once listening.
	OnListen func(url string)
	// Logger receives server errors; nil logs nothing.
	Logger *slog.Logger
}

func (o *ServerOptions) withDefaults() ServerOptions {
	c := ServerOptions{}
	if o != nil {
		c = *o
	}
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// ListenAndServe listens on addr (DefaultAddr when empty: loopback only) and
// serves h like Serve.
func ListenAndServe(ctx context.Context, addr string, h *Handler, opts *ServerOptions) error {
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, h, opts)
}

// Serve serves h at opts.Path on ln until ctx is done, then shuts down
// gracefully: the listener closes, streams end, and requests in flight get
// up to ShutdownTimeout to finish. There is no whole-request write timeout,
// which would cut SSE streams; the handler bounds each write instead.
func Serve(ctx context.Context, ln net.Listener, h *Handler, opts *ServerOptions) error {
	o := opts.withDefaults()
	mux := http.NewServeMux()
	mux.Handle(o.Path, h)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if o.OnListen != nil {
		o.OnListen("http://" + ln.Addr().String() + o.Path)
	}
	select {
	case err := <-errc:
		h.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
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
