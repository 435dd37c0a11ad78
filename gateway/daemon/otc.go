package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/transport/streamable"
)

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
	// Calls may run as long as their tools; the connections held at once
	// are bounded like the MCP listener's. It stops taking calls with the
	// MCP endpoint (ctx).
	n := file.Limits.MaxConns
	if n <= 0 {
		n = streamable.DefaultMaxConns
	}
	errc, stop := httpguard.ServeCalls(ctx, ln, handler, n)
	go func() {
		if err := <-errc; err != nil {
			logger.Error("OTC listener", "error", err)
		}
	}()
	url = "http://" + ln.Addr().String()
	logger.Info("serving the tools over Open Tool Calling 1.0", "otc_endpoint", url)
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
