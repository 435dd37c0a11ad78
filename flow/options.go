package flow

import (
	"os"

	"github.com/toolwire/toolwire/client"
)

// Defaults of Limits; each can be changed with WithLimits.
const (
	DefaultMaxFileSize   = 4 << 20   // bytes of one manifest file (Limits.MaxFileBytes)
	DefaultMaxDepth      = 64        // YAML nesting depth (Limits.MaxDepth)
	DefaultMaxSteps      = 10000     // steps per flow, nested ones included (Limits.MaxSteps)
	DefaultMaxExprLength = 4 << 10   // bytes of one expression (Limits.MaxExprBytes)
	DefaultCostLimit     = 1_000_000 // CEL cost per evaluation (Limits.MaxCost)
)

// Bounds the format itself sets on a manifest's numbers; values outside
// them are static errors.
const (
	// MaxConcurrency bounds for_each's concurrency.
	MaxConcurrency = 64
	// MaxIterations bounds while's max_iterations.
	MaxIterations = 1_000_000
	// MaxAttempts bounds retry.attempts.
	MaxAttempts = 100
)

// LoadOption configures Load and Parse.
type LoadOption interface{ applyLoad(*loadConfig) }

// RunOption configures Run and Check.
type RunOption interface{ applyRun(*runConfig) }

type loadConfig struct {
	maxFileSize   int
	maxDepth      int
	maxSteps      int
	maxExprLength int
	costLimit     uint64
}

func newLoadConfig(opts []LoadOption) *loadConfig {
	c := &loadConfig{
		maxFileSize:   DefaultMaxFileSize,
		maxDepth:      DefaultMaxDepth,
		maxSteps:      DefaultMaxSteps,
		maxExprLength: DefaultMaxExprLength,
		costLimit:     DefaultCostLimit,
	}
	for _, o := range opts {
		if o != nil {
			o.applyLoad(c)
		}
	}
	return c
}

type runConfig struct {
	inputs     map[string]string
	clients    map[string]*client.Client
	clientOpts []client.Option
	observer   func(Event)
	lookupEnv  func(string) (string, bool)
	connect    bool
}

func newRunConfig(opts []RunOption) *runConfig {
	c := &runConfig{lookupEnv: os.LookupEnv}
	for _, o := range opts {
		if o != nil {
			o.applyRun(c)
		}
	}
	return c
}

type loadOption func(*loadConfig)

func (f loadOption) applyLoad(c *loadConfig) { f(c) }

type runOption func(*runConfig)

func (f runOption) applyRun(c *runConfig) { f(c) }

// WithInputs sets the flow's inputs from strings (as --input k=v gives
// them); each is converted to its declared type.
func WithInputs(in map[string]string) RunOption {
	return runOption(func(c *runConfig) {
		if c.inputs == nil {
			c.inputs = map[string]string{}
		}
		for k, v := range in {
			c.inputs[k] = v
		}
	})
}

// WithClient uses c for the manifest's client name instead of connecting
// one; the flow never closes it.
func WithClient(name string, c *client.Client) RunOption {
	return runOption(func(rc *runConfig) {
		if rc.clients == nil {
			rc.clients = map[string]*client.Client{}
		}
		rc.clients[name] = c
	})
}

// WithClientOptions adds options to every client the flow connects.
func WithClientOptions(opts ...client.Option) RunOption {
	return runOption(func(c *runConfig) { c.clientOpts = append(c.clientOpts, opts...) })
}

// WithObserver receives an Event when each step starts and ends. It may be
// called from several goroutines (for_each with concurrency).
func WithObserver(fn func(Event)) RunOption {
	return runOption(func(c *runConfig) { c.observer = fn })
}

// WithEnv replaces os.LookupEnv as the source of env.<NAME>.
func WithEnv(lookup func(string) (string, bool)) RunOption {
	return runOption(func(c *runConfig) {
		if lookup != nil {
			c.lookupEnv = lookup
		}
	})
}

// WithConnect makes Check start the clients and check calls against the
// servers' tools.
func WithConnect(on bool) RunOption {
	return runOption(func(c *runConfig) { c.connect = on })
}
