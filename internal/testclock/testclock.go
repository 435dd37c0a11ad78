// Package testclock is a clock that tests move by hand. Code that reads
// the time through a func() time.Time (token lifetimes, cache expiry, rate
// limit windows, task and session expiry) is given Clock.Now, and the test
// steps past a deadline with Advance instead of waiting for it.
package testclock

import (
	"sync"
	"time"
)

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// New returns a clock stopped at t0.
func New(t0 time.Time) *Clock { return &Clock{t: t0} }

// NewStepping returns a clock at t0 that moves on by step after every
// reading, so that successive readings are distinct and ordered.
func NewStepping(t0 time.Time, step time.Duration) *Clock {
	return &Clock{t: t0, step: step}
}

// Now is the clock's time (then, for a stepping clock, moves it on).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// SetStep changes how far each later reading moves the clock on (0 stops
// it), for a test that wants a given duration measured between two
// readings.
func (c *Clock) SetStep(step time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step = step
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
