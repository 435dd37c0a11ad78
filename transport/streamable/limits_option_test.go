package streamable

import (
	"testing"
	"time"
)

// Limits given in two options add up: the second one's zero fields keep
// the first one's values, its others win; the server's fields reach Serve's
// configuration and not the handler's, and the other way round.
func TestWithLimitsMerges(t *testing.T) {
	c := newHandlerConfig([]HandlerOption{
		WithLimits(Limits{MaxSessions: 7, ReadTimeout: time.Minute, MaxConns: 3}),
		WithLimits(Limits{MaxInFlight: 9, ReadTimeout: time.Second}),
	})
	if c.maxSessions != 7 || c.maxInFlight != 9 || c.readTimeout != time.Second {
		t.Fatalf("handler config: sessions %d, in flight %d, read timeout %v", c.maxSessions, c.maxInFlight, c.readTimeout)
	}
	s := newServerConfig([]ServerOption{
		WithLimits(Limits{MaxConns: 3, MaxSessions: 7}),
		WithLimits(Limits{ShutdownTimeout: time.Second}),
	})
	if s.maxConns != 3 || s.shutdownTimeout != time.Second || s.maxHeaderBytes != DefaultMaxHeaderBytes {
		t.Fatalf("server config: conns %d, shutdown %v, header bytes %d", s.maxConns, s.shutdownTimeout, s.maxHeaderBytes)
	}
}
