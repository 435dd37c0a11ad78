package enrich

import "github.com/toolwire/toolwire/internal/limits"

// Limits are the numbers that bound what enrichment may cost. A zero field
// means the default named beside it (or, after an earlier WithLimits,
// leaves what that one set). Names follow one rule: MaxX is an upper bound
// on X, and a size in bytes ends in Bytes.
type Limits struct {
	// MaxOutputBytes bounds what one rule or one hook may add to a result,
	// in bytes of JSON (blocks, structured keys and values); a rule that
	// would add more is skipped whole (DefaultMaxOutput, 64 KiB).
	// Negative means the default.
	MaxOutputBytes int
	// MaxCELCost bounds one evaluation of a When expression in CEL cost
	// units; an expression that goes over fails, and its rule is skipped
	// (DefaultCELCostLimit).
	MaxCELCost uint64
}

// WithLimits sets what enrichment may cost. Its zero fields leave the value
// an earlier WithLimits set, or the default.
func WithLimits(l Limits) Option {
	return option(func(o *options) { limits.Overlay(&o.limits, l) })
}
