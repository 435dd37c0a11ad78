package backoff

import (
	"math"
	"testing"
	"time"
)

func TestBase(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		p    Policy
		n    int
		want time.Duration
	}{
		{Policy{Initial: 100 * ms, Max: 30 * time.Second}, 1, 100 * ms},
		{Policy{Initial: 100 * ms, Max: 30 * time.Second}, 0, 100 * ms},
		{Policy{Initial: 100 * ms, Max: 30 * time.Second}, -5, 100 * ms},
		{Policy{Initial: 100 * ms, Max: 30 * time.Second}, 2, 200 * ms},
		{Policy{Initial: 100 * ms, Max: 30 * time.Second}, 4, 800 * ms},
		{Policy{Initial: 100 * ms, Max: 30 * time.Second}, 9, 25600 * ms},
		{Policy{Initial: 100 * ms, Max: 30 * time.Second}, 10, 30 * time.Second},
		{Policy{Initial: 100 * ms, Max: 30 * time.Second}, math.MaxInt, 30 * time.Second},
		{Policy{Initial: 100 * ms, Max: 5 * time.Second, Factor: 1.5}, 3, 225 * ms},
		{Policy{Initial: 100 * ms, Max: 5 * time.Second, Factor: 1}, 50, 100 * ms},
		{Policy{Initial: 100 * ms, Factor: 0.5}, 3, 400 * ms}, // below 1: doubles
		{Policy{Initial: time.Hour}, 1000, math.MaxInt64},     // no cap: the largest Duration
		{Policy{Initial: 0, Max: time.Second}, 10, 0},
		{Policy{Initial: -time.Second, Max: time.Second}, 3, 0},
		{Policy{Initial: 2 * time.Second, Max: time.Second}, 1, time.Second},
	} {
		if got := c.p.Base(c.n); got != c.want {
			t.Errorf("%+v.Base(%d) = %v, want %v", c.p, c.n, got, c.want)
		}
	}
}

// Jitter stays within its range, and does spread: over many draws both
// halves of the range are seen.
func TestJitter(t *testing.T) {
	const d = 1000 * time.Millisecond
	for _, c := range []struct {
		j      Jitter
		lo, hi time.Duration // [lo, hi)
	}{
		{FullJitter, 0, d},
		{EqualJitter, d / 2, d},
	} {
		p := Policy{Initial: d, Max: d, Jitter: c.j}
		mid := c.lo + (c.hi-c.lo)/2
		var low, high bool
		for range 1000 {
			got := p.Delay(1)
			if got < c.lo || got >= c.hi {
				t.Fatalf("jitter %d: %v outside [%v, %v)", c.j, got, c.lo, c.hi)
			}
			low, high = low || got < mid, high || got >= mid
		}
		if !low || !high {
			t.Errorf("jitter %d: 1000 draws all on one side of %v", c.j, mid)
		}
	}
	if got := (Policy{Initial: d}).Delay(1); got != d {
		t.Errorf("no jitter: %v", got)
	}
	for _, j := range []Jitter{NoJitter, FullJitter, EqualJitter} {
		p := Policy{Jitter: j}
		if got := p.Jittered(0); got != 0 {
			t.Errorf("jitter %d of 0: %v", j, got)
		}
		if got := p.Jittered(1); got < 0 || got > 1 {
			t.Errorf("jitter %d of 1ns: %v", j, got)
		}
		if got := p.Jittered(math.MaxInt64); got < 0 {
			t.Errorf("jitter %d of the largest Duration: %v", j, got)
		}
	}
}
