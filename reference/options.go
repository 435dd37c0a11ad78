package reference

import (
	"context"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/server"
)

// Option configures what the reference server exposes.
type Option interface{ applyReference(*config) }

type config struct {
	envAllow  []string        // names (or prefixes ending in *) get-env may show
	fileRoot  string          // directory gzip-file-as-resource may read; "" for none
	gzipMax   int64           // bytes gzip-file-as-resource reads at most
	gzipStore int             // gzipped resources kept at most
	stage     int64           // nanoseconds per simulate-research-query stage
	tick      time.Duration   // pace of the toggled simulations
	life      context.Context // ends every toggled simulation when done
	toggles   *toggles        // running simulations (toggles.go)
}

const (
	// DefaultGzipMaxBytes bounds what gzip-file-as-resource reads.
	DefaultGzipMaxBytes = 1 << 20
	// DefaultGzipResources bounds the gzipped resources kept; the oldest
	// go first.
	DefaultGzipResources = 32
	// DefaultTickInterval is the pace of toggle-simulated-logging and
	// toggle-subscriber-updates.
	DefaultTickInterval = 5 * time.Second
)

type optionFunc func(*config)

func (f optionFunc) applyReference(c *config) { f(c) }

// WithEnvAllow widens what get-env shows: each entry is a variable name, or
// a prefix ending in "*". Values of variables whose names look secret
// (TOKEN, SECRET, PASSWORD, KEY, ...) are still shown as "[redacted]".
func WithEnvAllow(names ...string) Option {
	return optionFunc(func(c *config) { c.envAllow = append(c.envAllow, names...) })
}

// WithFileRoot lets gzip-file-as-resource read regular files under dir
// (file:// URIs or paths relative to it; nothing outside it, no symlink
// escapes). Without it the tool accepts data: URIs only.
func WithFileRoot(dir string) Option {
	return optionFunc(func(c *config) { c.fileRoot = dir })
}

// WithLifetime ends every simulation the toggle tools started once ctx is
// done (serve passes its own context); without it they end when toggled
// off or, for simulated logging, when their session closes.
func WithLifetime(ctx context.Context) Option {
	return optionFunc(func(c *config) { c.life = ctx })
}

func newConfig(opts []Option) *config {
	c := &config{}
	for _, o := range opts {
		if o != nil {
			o.applyReference(c)
		}
	}
	limits.Default(&c.gzipMax, DefaultGzipMaxBytes)
	limits.Default(&c.gzipStore, DefaultGzipResources)
	limits.Default(&c.tick, DefaultTickInterval)
	if c.life == nil {
		c.life = context.Background()
	}
	c.toggles = &toggles{logging: map[*server.Session]chan struct{}{}}
	return c
}
