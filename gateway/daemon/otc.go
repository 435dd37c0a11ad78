package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/transport/streamable"
)

// otcShutdownTimeout bounds the OTC listener's shutdown.
const otcShutdownTimeout = 10 * time.Second

// serveOTC serves g's merged tools over Open Tool Calling 1.0 on
// file.OTCListen, behind authenticate (nil: every caller anonymous), with
// the Host policy of the MCP endpoint; it returns the
// listener's base URL once it is up. It stops when ctx is done, or stop
// is called.
func serveOTC(ctx context.Context, g *gateway.Gateway, file *config.File, authenticate func(http.Handler) http.Handler, logger *slog.Logger) (url string, stop func(), err error) {
	h, err := otc.NewHandler(otc.NewServerBackend(g.Server()), otc.WithLogger(logger),
		otc.WithAllowedHosts(allowedHosts(file.OTCListen, file, logger)...))
	if err != nil {
		return "", nil, fmt.Errorf("otc_listen: %w", err)
	}
	if err := h.Check(ctx); err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", file.OTCListen)
	if err != nil {
		return "", nil, fmt.Errorf("otc_listen: %w", err)
	}
	var handler http.Handler = h
	if authenticate != nil {
		handler = authenticate(h)
	}
	// Calls may run as long as their tools (no write timeout); the
	// connections held at once are bounded like the MCP listener's.
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: httpguard.AuxLimits.MaxHeaderBytes}
	n := file.Limits.MaxConns
	if n <= 0 {
		n = streamable.DefaultMaxConns
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(httpguard.LimitListener(ln, n)); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("OTC listener", "error", err)
		}
	}()
	url = "http://" + ln.Addr().String()
	logger.Info("serving the tools over Open Tool Calling 1.0", "otc_endpoint", url)
	stop = sync.OnceFunc(func() {
		sctx, cancel := context.WithTimeout(context.Background(), otcShutdownTimeout)
		defer cancel()
		_ = hs.Shutdown(sctx)
		<-done
	})
	context.AfterFunc(ctx, stop) // it stops taking calls with the MCP endpoint
	return url, stop, nil
}
