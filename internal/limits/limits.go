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
