package stat

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := Median(c.v); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v, want NaN", got)
	}
}

func TestCell(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want string
	}{
		{nil, "–"},
		{[]float64{math.NaN()}, "–"},
		{[]float64{1234.5}, "1234"},
		{[]float64{-12.34}, "-12.3"},
		{[]float64{0.123}, "0.12"},
		{[]float64{12, 8, 150}, "12.0 (8.00–150)"},
	} {
		if got := Cell(c.v); got != c.want {
			t.Errorf("Cell(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestMedianOf(t *testing.T) {
	type sample struct{ n int64 }
	get := func(s sample) int64 { return s.n }
	if got := MedianOf([]sample{{7}, {1}, {4}}, get); got != 4 {
		t.Errorf("odd count: %d, want 4", got)
	}
	if got := MedianOf([]sample{{7}, {1}, {4}, {2}}, get); got != 4 {
		t.Errorf("even count: %d, want the upper middle value 4", got)
	}
}
