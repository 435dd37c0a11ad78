package transport

import (
	"log/slog"
	"testing"
	"time"
)

// TestServeOptionDefaults: zero and out-of-range values mean the defaults
// (a negative MaxQueued means no queue), later options override earlier
// ones, and nil options are ignored.
func TestServeOptionDefaults(t *testing.T) {
	c := newServeConfig(nil)
	if c.maxConcurrency != DefaultMaxConcurrency || c.maxQueued != DefaultMaxQueued ||
		c.drainTimeout != DefaultDrainTimeout || c.inlineBudget != DefaultInlineTimeout ||
		c.maxMessageSize != 0 || c.logger == nil {
		t.Fatalf("defaults: %+v", c)
	}
	c = newServeConfig([]ServeOption{WithLimits(Limits{MaxConcurrency: -1, MaxQueued: -5, DrainTimeout: -time.Second,
		InlineTimeout: 0}), WithLogger(nil), nil})
	if c.maxConcurrency != DefaultMaxConcurrency || c.maxQueued != 0 ||
		c.drainTimeout != DefaultDrainTimeout || c.inlineBudget != DefaultInlineTimeout || c.logger == nil {
		t.Fatalf("out of range: %+v", c)
	}
	l := slog.New(slog.DiscardHandler)
	c = newServeConfig([]ServeOption{WithLimits(Limits{MaxConcurrency: 3}), WithLimits(Limits{MaxConcurrency: 2, MaxQueued: 7,
		DrainTimeout: time.Second, InlineTimeout: time.Microsecond, MaxMessageBytes: 99}), WithLogger(l)})
	if c.maxConcurrency != 2 || c.maxQueued != 7 || c.drainTimeout != time.Second ||
		c.inlineBudget != time.Microsecond || c.maxMessageSize != 99 || c.logger != l {
		t.Fatalf("set: %+v", c)
	}
}
