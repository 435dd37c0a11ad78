// Package stat is the arithmetic and number formatting the bench
// programs' reports share: the median of a figure's repetitions and the
// table cell that shows it.
package stat

import (
	"fmt"
	"math"
	"slices"
)

// Median is the median of v, the mean of the two middle values for an
// even count; NaN (not measured) for none.
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Num formats a figure with as many decimals as its size deserves: none
// from 100 up, one from 10, two below; "–" for NaN (not measured).
func Num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "–"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// Cell is a figure's repetitions in a table: "median (min–max)", the one
// value alone, or "–" for none.
func Cell(v []float64) string {
	if len(v) == 0 {
		return "–"
	}
	if len(v) == 1 {
		return Num(v[0])
	}
	return fmt.Sprintf("%s (%s–%s)", Num(Median(v)), Num(slices.Min(v)), Num(slices.Max(v)))
}

// MedianOf is the median of the values get finds in s (not empty): the
// upper of the two middle values for an even count, so that it is always
// one sample's own value (a byte or goroutine count, never a mean of two).
func MedianOf[S any](s []S, get func(S) int64) int64 {
	v := make([]int64, len(s))
	for i := range s {
		v[i] = get(s[i])
	}
	slices.Sort(v)
	return v[len(v)/2]
}
