package flow

import "github.com/toolwire/toolwire/internal/limits"

// Limits are the numbers that bound what Load and Parse accept of a
// manifest, so that a hostile or broken file costs bounded time and memory.
// A zero or negative field means the default named beside it (or, after an
// earlier WithLimits, leaves what that one set). Names follow one rule: MaxX
// is an upper bound on X, and a size in bytes ends in Bytes.
type Limits struct {
	// MaxFileBytes bounds the bytes of a manifest (DefaultMaxFileSize,
	// 4 MiB).
	MaxFileBytes int
	// MaxDepth bounds the YAML nesting depth (DefaultMaxDepth, 64).
	MaxDepth int
	// MaxSteps bounds the steps of one flow, nested ones included
	// (DefaultMaxSteps, 10,000).
	MaxSteps int
	// MaxExprBytes bounds the bytes of one expression
	// (DefaultMaxExprLength, 4 KiB).
	MaxExprBytes int
	// MaxCost bounds the CEL cost of one evaluation (DefaultCostLimit,
	// 1,000,000); exceeding it raises ERR_EXPRESSION.
	MaxCost uint64
}

// WithLimits sets what Load and Parse accept. Its zero fields leave the
// value an earlier WithLimits set, or the default, so limits may be given
// in several options.
func WithLimits(l Limits) LoadOption {
	return loadOption(func(c *loadConfig) {
		limits.SetPositive(&c.maxFileSize, l.MaxFileBytes)
		limits.SetPositive(&c.maxDepth, l.MaxDepth)
		limits.SetPositive(&c.maxSteps, l.MaxSteps)
		limits.SetPositive(&c.maxExprLength, l.MaxExprBytes)
		limits.SetPositive(&c.costLimit, l.MaxCost)
	})
}
