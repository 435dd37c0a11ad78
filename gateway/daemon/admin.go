package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/admin"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/internal/httpguard"
)

// adminHandler is the admin page when the config sets its key, else nil.
func adminHandler(file *config.File, g *gateway.Gateway, store audit.Store, logger *slog.Logger) (http.Handler, error) {
	if file.Admin.KeyHash == "" {
		return nil, nil
	}
	return admin.NewHandler(admin.Config{KeyHash: file.Admin.KeyHash, Gateway: g, Policy: g.Policy, Audit: store, Logger: logger})
}

// serveAdmin serves /healthz (the process is up), /readyz (every
// upstream's state; 503 while one is not ready), /metrics (the gateway's
// Prometheus metrics) and, when page is not nil, the admin page under
// /admin/ on addr, and returns its base URL.
func serveAdmin(addr string, g *gateway.Gateway, page http.Handler, logger *slog.Logger) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("admin listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		type state struct {
			Name      string    `json:"name"`
			State     string    `json:"state"`
			Since     time.Time `json:"since"`
			Tools     int       `json:"tools"`
			Transport string    `json:"transport"`
			LastError string    `json:"lastError,omitempty"`
		}
		ready := true
		var out []state
		for _, u := range g.Upstreams() {
			out = append(out, state{u.Name, string(u.State), u.Since.UTC(), u.Tools, u.Transport, u.LastError})
			ready = ready && u.State == gateway.StateReady
		}
		w.Header().Set("Content-Type", "application/json")
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ready": ready, "upstreams": out})
	})
	mux.Handle("GET /metrics", g.MetricsHandler())
	paths := "/healthz /readyz /metrics"
	if page != nil {
		mux.Handle("/admin/", page)
		paths += " /admin/"
	}
	// Bounded in connections and time (httpguard.AuxLimits), so that
	// whoever reaches the admin port can never take the descriptors or
	// the memory the MCP listener needs.
	stop = httpguard.AuxLimits.Serve(ln, mux, slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		func(err error) { logger.Error("admin listener", "error", err) })
	url = "http://" + ln.Addr().String()
	logger.Info("admin endpoints", "url", url, "paths", paths, "max_conns", httpguard.AuxLimits.MaxConns)
	return url, stop, nil
}
