package streamable

import (
	"log/slog"
	"testing"
	"time"
)

// TestHandlerOptionDefaults: zero and out-of-range values mean the
// defaults, a negative keep-alive interval disables keep-alives, later
// options override earlier ones, and nil options are ignored.
func TestHandlerOptionDefaults(t *testing.T) {
	c := newHandlerConfig(nil)
	if c.maxBodyBytes != DefaultMaxBodyBytes || c.sessionIdleTimeout != DefaultSessionIdleTimeout ||
		c.maxSessions != DefaultMaxSessions || c.maxInFlight != DefaultMaxInFlight || c.eventStore == nil ||
		c.retryInterval != DefaultRetryInterval || c.keepAliveInterval != DefaultKeepAliveInterval ||
		c.writeTimeout != DefaultWriteTimeout || c.readTimeout != DefaultReadTimeout || c.logger == nil ||
		c.allowedHosts != nil || c.allowedOrigins != nil {
		t.Fatalf("defaults: %+v", c)
	}
	c = newHandlerConfig([]HandlerOption{WithLimits(Limits{
		MaxBodyBytes:       -1,
		SessionIdleTimeout: -1,
		MaxSessions:        0,
		MaxInFlight:        -3,
	}), WithEventStore(nil), WithLimits(Limits{RetryInterval: 0, KeepAliveInterval: -1,
		WriteTimeout: -1, ReadTimeout: 0}), WithLogger(nil), nil})
	if c.maxBodyBytes != DefaultMaxBodyBytes || c.sessionIdleTimeout != DefaultSessionIdleTimeout ||
		c.maxSessions != DefaultMaxSessions || c.maxInFlight != DefaultMaxInFlight || c.eventStore == nil ||
		c.retryInterval != DefaultRetryInterval || c.keepAliveInterval != -1 ||
		c.writeTimeout != DefaultWriteTimeout || c.readTimeout != DefaultReadTimeout || c.logger == nil {
		t.Fatalf("out of range: %+v", c)
	}
	hosts := []string{"a.example"}
	store := NewMemoryEventStore()
	l := slog.New(slog.DiscardHandler)
	c = newHandlerConfig([]HandlerOption{WithAllowedHosts("x"), WithAllowedHosts(hosts...),
		WithAllowedOrigins("https://a.example"), WithLimits(Limits{MaxBodyBytes: 10, MaxSessions: 2, MaxInFlight: 3}),
		WithEventStore(store), WithLimits(Limits{KeepAliveInterval: time.Second}), WithLogger(l)})
	hosts[0] = "changed"
	if len(c.allowedHosts) != 1 || c.allowedHosts[0] != "a.example" || c.allowedOrigins[0] != "https://a.example" ||
		c.maxBodyBytes != 10 || c.maxSessions != 2 || c.maxInFlight != 3 || c.eventStore != store ||
		c.keepAliveInterval != time.Second || c.logger != l {
		t.Fatalf("set: %+v", c)
	}
}

// TestServerOptionDefaults: the same rules for Serve's options; one
// WithLogger value serves as both kinds of option.
func TestServerOptionDefaults(t *testing.T) {
	c := newServerConfig([]ServerOption{WithPath(""), WithLimits(Limits{
		ReadHeaderTimeout: -1,
		IdleTimeout:       0,
		MaxHeaderBytes:    -1,
		ShutdownTimeout:   0,
	}), WithOnListen(nil), nil})
	if c.path != DefaultPath || c.readHeaderTimeout != DefaultReadHeaderTimeout || c.idleTimeout != DefaultIdleTimeout ||
		c.maxHeaderBytes != DefaultMaxHeaderBytes || c.shutdownTimeout != DefaultShutdownTimeout ||
		c.onListen != nil || c.logger == nil {
		t.Fatalf("defaults: %+v", c)
	}
	l := slog.New(slog.DiscardHandler)
	log := WithLogger(l)
	c = newServerConfig([]ServerOption{WithPath("/x"), WithPath("/y"), WithLimits(Limits{MaxHeaderBytes: 5}), log})
	if h := newHandlerConfig([]HandlerOption{log}); h.logger != l || c.logger != l || c.path != "/y" || c.maxHeaderBytes != 5 {
		t.Fatalf("set: %+v", c)
	}
}

// TestMemoryEventStoreOptionDefaults: values below 1 mean the defaults.
func TestMemoryEventStoreOptionDefaults(t *testing.T) {
	s := NewMemoryEventStore(WithLimits(Limits{MaxEventsPerStream: 0, MaxEventBytesPerSession: -1, MaxEventBytes: 0}), nil)
	if s.lim.maxEventsPerStream != DefaultMaxEventsPerStream || s.lim.maxBytesPerSession != DefaultMaxBytesPerSession ||
		s.lim.maxBytes != DefaultMaxBytes || DefaultMaxBytes != 64<<20 {
		t.Fatalf("defaults: %+v", s.lim)
	}
	s = NewMemoryEventStore(WithLimits(Limits{MaxEventsPerStream: 4, MaxEventBytesPerSession: 9, MaxEventBytes: 7}), WithLimits(Limits{MaxEventBytes: 8}))
	if s.lim.maxEventsPerStream != 4 || s.lim.maxBytesPerSession != 9 || s.lim.maxBytes != 8 {
		t.Fatalf("set: %+v", s.lim)
	}
}
