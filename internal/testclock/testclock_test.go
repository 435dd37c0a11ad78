package testclock_test

import (
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testclock"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testclock.New(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("a stopped clock moved on its own: %v", got)
	}
	c.Advance(time.Minute)
	if got := c.Now(); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after Advance(1m): %v", got)
	}
}

func TestSteppingClock(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testclock.NewStepping(t0, time.Millisecond)
	first, second := c.Now(), c.Now()
	if !first.Equal(t0) || !second.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("readings %v, %v; want %v then a millisecond later", first, second, t0)
	}
	c.Advance(time.Second)
	if got := c.Now(); !got.Equal(t0.Add(time.Second + 2*time.Millisecond)) {
		t.Fatalf("after Advance(1s): %v", got)
	}
}

func TestSetStep(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testclock.New(t0)
	c.SetStep(time.Second)
	if a, b := c.Now(), c.Now(); b.Sub(a) != time.Second || !a.Equal(t0) {
		t.Fatalf("readings %v, %v after SetStep(1s)", a, b)
	}
	c.SetStep(0)
	if a, b := c.Now(), c.Now(); !a.Equal(b) {
		t.Fatalf("readings %v, %v after SetStep(0)", a, b)
	}
}
