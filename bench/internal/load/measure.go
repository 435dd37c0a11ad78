package load

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Latencies times n sequential calls of call and returns the 50th and 99th
// percentiles in microseconds. The caller warms up first.
func Latencies(n int, call func(i int) error) (p50, p99 float64, err error) {
	if n <= 0 {
		return 0, 0, fmt.Errorf("no calls to time")
	}
	lat := make([]time.Duration, n)
	for i := range lat {
		t := time.Now()
		if err := call(i); err != nil {
			return 0, 0, err
		}
		lat[i] = time.Since(t)
	}
	slices.Sort(lat)
	return float64(lat[len(lat)/2].Microseconds()), float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), nil
}

// RateCall is caller k's i-th call; it returns the response bytes it read
// (0 if it does not count them).
type RateCall func(k, i int) (bytes int64, err error)

// Rate runs callers concurrent loops of call for warmup+dur and returns the
// calls and response bytes per second over dur, and how many calls were made
// in all (each one checked by call).
//
// The window stays open until a call completed in it, and the run until
// every caller made at least one call, so a slow peer is measured, not
// failed; only a hang (no progress within hang) is an error.
func Rate(callers int, warmup, dur, hang time.Duration, call RateCall) (cps, bps float64, total int64, err error) {
	var (
		n, nbytes atomic.Int64
		started   atomic.Int64 // callers that completed a call
		stop      atomic.Bool
		firstErr  error
		errOnce   sync.Once
		wg        sync.WaitGroup
	)
	for k := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				b, err := call(k, i)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				if i == 0 {
					started.Add(1)
				}
				n.Add(1)
				nbytes.Add(b)
			}
		}()
	}
	time.Sleep(warmup)
	n0, b0, t0 := n.Load(), nbytes.Load(), time.Now()
	time.Sleep(dur)
	deadline := time.Now().Add(hang)
	for (n.Load() == n0 || started.Load() < int64(callers)) && !stop.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	n1, b1, el := n.Load(), nbytes.Load(), time.Since(t0)
	stop.Store(true)
	wg.Wait()
	total = n.Load()
	if firstErr != nil {
		return 0, 0, total, firstErr
	}
	if n1 == n0 || started.Load() < int64(callers) {
		return 0, 0, total, fmt.Errorf("calls did not complete within %s", hang)
	}
	return float64(n1-n0) / el.Seconds(), float64(b1-b0) / el.Seconds(), total, nil
}
