// Package backoff is the one retry-delay policy of the module: the gateway
// reconnecting to an upstream, the client reopening an SSE stream, a flow's
// retry step and the Redis task store's compare-and-set all wait by it.
package backoff

import (
	"math"
	"math/rand/v2"
	"time"
)

// Jitter says how a delay is spread so that many waiters do not retry in
// step.
type Jitter int

const (
	// NoJitter waits the delay exactly.
	NoJitter Jitter = iota
	// FullJitter waits between zero and the delay.
	FullJitter
	// EqualJitter waits between half the delay and all of it.
	EqualJitter
)

// Policy is an exponential backoff: the wait before retry n (n >= 1) is
// Initial * Factor^(n-1), at most Max, spread by Jitter.
type Policy struct {
	// Initial is the wait before the first retry.
	Initial time.Duration
	// Max caps the wait; 0 means no cap but the largest Duration.
	Max time.Duration
	// Factor is the growth per retry; below 1 (the zero value) means 2.
	Factor float64
	// Jitter spreads each wait (default NoJitter).
	Jitter Jitter
}

// Delay is the wait before retry n (n >= 1; below 1 counts as 1), jitter
// applied.
func (p Policy) Delay(n int) time.Duration { return p.Jittered(p.Base(n)) }

// Base is the wait before retry n without jitter: never negative, never
// past Max, and never overflowing however large n is.
func (p Policy) Base(n int) time.Duration {
	ceiling := float64(math.MaxInt64)
	if p.Max > 0 {
		ceiling = float64(p.Max)
	}
	factor := p.Factor
	if factor < 1 {
		factor = 2
	}
	d := float64(max(p.Initial, 0))
	for i := 1; i < n && d < ceiling; i++ {
		d *= factor
	}
	if d >= ceiling {
		if p.Max > 0 {
			return p.Max
		}
		return math.MaxInt64
	}
	return time.Duration(d)
}

// Jittered spreads d by the policy's Jitter: FullJitter to [0, d),
// EqualJitter to [d/2, d).
func (p Policy) Jittered(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	switch p.Jitter {
	case FullJitter:
		return rand.N(d)
	case EqualJitter:
		h := d / 2
		return h + rand.N(d-h)
	}
	return d
}
