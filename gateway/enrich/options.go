package enrich

import "github.com/toolwire/toolwire/internal/limits"

// Defaults of Limits.
const (
	// DefaultMaxOutput bounds what one rule or hook may add to a result,
	// in bytes of JSON (Limits.MaxOutputBytes): 64 KiB.
	DefaultMaxOutput = 64 << 10
	// DefaultCELCostLimit bounds one evaluation of a When expression, in
	// CEL cost units (Limits.MaxCELCost): ample for conditions on
	// arguments and structured fields (tens of units), enough for a
	// contains or startsWith over about a megabyte of text (a unit per
	// ten bytes), and about 10 ms of comprehension work at worst. Raise
	// it for rules that scan larger texts.
	DefaultCELCostLimit = 100_000
)

// Option configures New. Options apply in order (a later one wins, except
// that hooks add up), nil options are ignored and defaults fill in the
// rest, as everywhere in the project.
type Option interface{ applyEnrich(*options) }

type options struct {
	hooks  []Hook
	limits Limits // the defaults filled in by newOptions
}

type option func(*options)

func (f option) applyEnrich(o *options) { f(o) }

// WithHooks adds Go hooks, run in order after the rules on every result
// the rules could enrich (whatever the tool). Nil hooks are ignored.
func WithHooks(hooks ...Hook) Option {
	return option(func(o *options) {
		for _, h := range hooks {
			if h != nil {
				o.hooks = append(o.hooks, h)
			}
		}
	})
}

func newOptions(opts []Option) options {
	var o options
	for _, op := range opts {
		if op != nil {
			op.applyEnrich(&o)
		}
	}
	limits.Default(&o.limits.MaxOutputBytes, DefaultMaxOutput)
	limits.Default(&o.limits.MaxCELCost, DefaultCELCostLimit)
	return o
}
