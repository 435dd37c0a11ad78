package load

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

func TestLatencies(t *testing.T) {
	calls := 0
	if _, _, err := Latencies(50, func(i int) error { calls++; return nil }); err != nil || calls != 50 {
		t.Fatalf("err = %v after %d calls, want nil after 50", err, calls)
	}
	boom := errors.New("boom")
	if _, _, err := Latencies(50, func(i int) error {
		if i == 7 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the call's error", err)
	}
	if _, _, err := Latencies(0, func(int) error { return nil }); err == nil {
		t.Fatal("no calls timed, no error")
	}
}

func TestRate(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	cps, bps, total, err := Rate(4, time.Millisecond, 10*time.Millisecond, time.Second, func(k, i int) (int64, error) {
		mu.Lock()
		seen[k] = true
		mu.Unlock()
		time.Sleep(100 * time.Microsecond)
		return 10, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cps <= 0 || math.Abs(bps-10*cps) > 1e-9*bps || total <= 0 || len(seen) != 4 {
		t.Fatalf("cps %v, bps %v, total %d, callers seen %d", cps, bps, total, len(seen))
	}

	boom := errors.New("boom")
	if _, _, _, err := Rate(2, 0, time.Millisecond, time.Second, func(k, i int) (int64, error) {
		if k == 1 && i == 3 {
			return 0, boom
		}
		return 0, nil
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the failing call's error", err)
	}

	// A caller that completes no call within hang is reported. (Rate waits
	// for its callers, so the stuck one is let go once hang has passed, as a
	// client's own timeout would.)
	block := make(chan struct{})
	time.AfterFunc(100*time.Millisecond, func() { close(block) })
	if _, _, _, err := Rate(2, 0, time.Millisecond, 20*time.Millisecond, func(k, i int) (int64, error) {
		if k == 1 {
			<-block
			return 0, errors.New("timed out")
		}
		return 0, nil
	}); err == nil {
		t.Fatal("a caller that never answered was not reported")
	}
}
