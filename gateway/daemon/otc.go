package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/toolwire/toolwire/auth"
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
	var handler http.Handler = otcAdmitPersonas(g, h)
	if authenticate != nil {
		handler = authenticate(handler)
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

// otcAdmitPersonas refuses the OTC requests of a caller no persona admits
// (gateway.AdmitSession) with 403 and an OTC error naming the caller, as
// the MCP endpoint does (admitPersonas), instead of an empty tool list:
// all but GET /health, which probes use without credentials.
func otcAdmitPersonas(g *gateway.Gateway, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := g.AdmitSession(r, auth.PrincipalFrom(r.Context()))
		if err == nil || r.URL.Path == "/health" {
			next.ServeHTTP(w, r)
			return
		}
		d := otc.OTC
		if r.Header.Get(otc.HeaderOXPVersion) != "" {
			d = otc.OXP
			w.Header().Set(otc.HeaderOXPVersion, "1.0")
		}
		body, _ := json.Marshal(otc.ServerErrorResponse{Schema: d.SchemaURI(), Message: err.Error()})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(body)
	})
}
