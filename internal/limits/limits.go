// Package limits holds what every component's WithLimits shares: the rule
// that a zero field of a Limits struct leaves the value as it was (an
// earlier WithLimits's, or the default), so that limits may be given in
// several options without one resetting another.
package limits

// Set stores v in *dst unless v is the zero value, which leaves *dst as it
// was.
func Set[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// SetPositive stores v in *dst when it is above zero, for limits whose
// default is in *dst already and that have no meaning at or below zero.
func SetPositive[T ~int | ~int64 | ~uint64](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

// Default stores def in *dst when *dst is zero or less: how a
// configuration whose options leave a limit unset, or set it to zero or
// less, gets that limit's default.
func Default[T ~int | ~int64 | ~uint64](dst *T, def T) {
	if *dst <= 0 {
		*dst = def
	}
}
