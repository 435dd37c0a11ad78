package reference

import (
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Limits are the numbers that bound the reference server's tools. A zero or
// negative field means the default named beside it (or, after an earlier
// WithLimits, leaves what that one set). Names follow one rule: MaxX is an
// upper bound on X, XInterval a period, and a size in bytes ends in Bytes.
type Limits struct {
	// MaxGzipBytes is the most bytes gzip-file-as-resource reads
	// (DefaultGzipMaxBytes, 1 MiB).
	MaxGzipBytes int64
	// MaxGzipResources is the most gzipped resources kept, the oldest
	// going first (DefaultGzipResources, 32).
	MaxGzipResources int
	// TickInterval is how often toggle-simulated-logging sends a message
	// and toggle-subscriber-updates announces updates
	// (DefaultTickInterval, 5 s).
	TickInterval time.Duration
}

// WithLimits sets the reference tools' limits. Its zero fields leave the
// value an earlier WithLimits set, or the default.
func WithLimits(l Limits) Option {
	return optionFunc(func(c *config) {
		limits.Set(&c.gzipMax, l.MaxGzipBytes)
		limits.Set(&c.gzipStore, l.MaxGzipResources)
		limits.Set(&c.tick, l.TickInterval)
	})
}
