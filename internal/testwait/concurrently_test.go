package testwait_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
)

// Every caller runs every round, in order, with the callers in flight
// together.
func TestConcurrentlyRunsEveryRound(t *testing.T) {
	const callers, rounds = 4, 3
	var mu sync.Mutex
	next := make([]int, callers)
	arrived := make(chan struct{})
	var n atomic.Int32
	ok := testwait.Concurrently(t, callers, rounds, func(c, r int) error {
		if r == 0 {
			// Each caller's first round waits for every caller's: it
			// ends only if all are in flight together.
			if n.Add(1) == callers {
				close(arrived)
			}
			testwait.Closed(t, arrived, "every caller's first round")
		}
		mu.Lock()
		defer mu.Unlock()
		if next[c] != r {
			return fmt.Errorf("caller %d: round %d after %d", c, r, next[c]-1)
		}
		next[c]++
		return nil
	})
	if !ok {
		return
	}
	for c, got := range next {
		if got != rounds {
			t.Errorf("caller %d ran %d rounds, want %d", c, got, rounds)
		}
	}
}

// A caller stops at its first error, the others run on, and every error
// is reported.
func TestConcurrentlyReportsEachError(t *testing.T) {
	var ran [3]atomic.Int32
	ft := &recorder{TB: t}
	ok := testwait.Concurrently(ft, 3, 4, func(c, r int) error {
		ran[c].Add(1)
		if c > 0 && r == 1 {
			return fmt.Errorf("caller %d failed", c)
		}
		return nil
	})
	if ok || ft.errors.Load() != 2 {
		t.Fatalf("ok %v with %d errors reported, want false and 2", ok, ft.errors.Load())
	}
	if a, b, c := ran[0].Load(), ran[1].Load(), ran[2].Load(); a != 4 || b != 2 || c != 2 {
		t.Fatalf("rounds run %d, %d, %d; want 4, 2, 2", a, b, c)
	}
}

// recorder counts the errors reported to it instead of failing the test.
type recorder struct {
	testing.TB
	errors atomic.Int32
}

func (r *recorder) Error(...any) { r.errors.Add(1) }
func (r *recorder) Helper()      {}
