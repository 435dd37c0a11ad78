package testwait

import (
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// fakeT records the failure a helper reports and ends its goroutine, as
// t.Fatalf does.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fakeT) Fatal(args ...any) {
	f.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

// run calls f with a fake T in a goroutine of its own and returns what it
// failed with ("" if it did not).
func run(t *testing.T, f func(ft *fakeT)) string {
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ft)
	}()
	<-done
	return ft.failed
}

func TestWaitForHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		failed := run(t, func(ft *fakeT) {
			WaitFor(ft, "three", func() bool { return time.Since(start) >= 3*time.Second })
		})
		if failed != "" {
			t.Fatalf("failed: %s", failed)
		}
		if took := time.Since(start); took < 3*time.Second || took > 3*time.Second+20*time.Millisecond {
			t.Errorf("returned %v after the condition began to hold at 3s, want within one poll", took)
		}
	})
}

func TestWaitForHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		failed := run(t, func(ft *fakeT) { WaitFor(ft, "the impossible", func() bool { return false }) })
		if !strings.Contains(failed, "still waiting for the impossible after 1m0s") {
			t.Errorf("failed with %q", failed)
		}
		if took := time.Since(start); took < Limit {
			t.Errorf("gave up after %v, before Limit", took)
		}
	})
}

func TestWaitForNil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		failed := run(t, func(ft *fakeT) {
			WaitForNil(ft, "two", func() error {
				if time.Since(start) < 2*time.Second {
					return errors.New("not yet")
				}
				return nil
			})
		})
		if failed != "" {
			t.Fatalf("failed: %s", failed)
		}
		failed = run(t, func(ft *fakeT) { WaitForNil(ft, "never", func() error { return errors.New("still broken") }) })
		if !strings.Contains(failed, "still waiting for never after 1m0s: still broken") {
			t.Errorf("failed with %q", failed)
		}
	})
}

func TestRecv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int)
		go func() {
			time.Sleep(time.Second)
			ch <- 7
		}()
		var got int
		if failed := run(t, func(ft *fakeT) { got = Recv(ft, ch, "seven") }); failed != "" || got != 7 {
			t.Errorf("got %d, failed %q", got, failed)
		}
		failed := run(t, func(ft *fakeT) { Recv(ft, ch, "a second value") })
		if !strings.Contains(failed, "still waiting for a second value after 1m0s") {
			t.Errorf("failed with %q", failed)
		}
		close(ch)
		failed = run(t, func(ft *fakeT) { Recv(ft, ch, "a value") })
		if !strings.Contains(failed, "the channel was closed") {
			t.Errorf("failed with %q", failed)
		}
	})
}

func TestClosedAndReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		done := make(chan struct{})
		if failed := run(t, func(ft *fakeT) { Closed(ft, done, "done") }); !strings.Contains(failed, "still waiting for done") {
			t.Errorf("open channel: failed with %q", failed)
		}
		close(done)
		if failed := run(t, func(ft *fakeT) { Closed(ft, done, "done") }); failed != "" {
			t.Errorf("closed channel: failed with %q", failed)
		}
		if failed := run(t, func(ft *fakeT) { Returns(ft, "a nap", func() { time.Sleep(time.Minute / 2) }) }); failed != "" {
			t.Errorf("returning call: failed with %q", failed)
		}
		block := make(chan struct{})
		failed := run(t, func(ft *fakeT) { Returns(ft, "a stuck call", func() { <-block }) })
		if !strings.Contains(failed, "still waiting for a stuck call to return") {
			t.Errorf("stuck call: failed with %q", failed)
		}
		close(block)
	})
}

func TestContext(t *testing.T) {
	ctx := Context(t)
	end, ok := ctx.Deadline()
	if !ok || time.Until(end) > Limit {
		t.Errorf("deadline %v (set %v), want at most %v away", end, ok, Limit)
	}
}

func TestMustJSON(t *testing.T) {
	if got := string(MustJSON(t, map[string]int{"a": 1})); got != `{"a":1}` {
		t.Errorf("got %s", got)
	}
	if failed := run(t, func(ft *fakeT) { MustJSON(ft, func() {}) }); !strings.Contains(failed, "unsupported type") {
		t.Errorf("failed with %q", failed)
	}
}

// A wait gives up before the binary's -timeout would kill it, so that the
// failure names what was waited for.
func TestLimitFollowsTimeout(t *testing.T) {
	f := flag.Lookup("test.timeout")
	was := f.Value.String()
	defer f.Value.Set(was)
	if err := f.Value.Set("0"); err != nil {
		t.Fatal(err)
	}
	if d := limit(); d != Limit {
		t.Errorf("no timeout: limit %v, want %v", d, Limit)
	}
	if err := f.Value.Set("10s"); err != nil {
		t.Fatal(err)
	}
	if d := limit(); d > 9*time.Second {
		t.Errorf("timeout 10s: limit %v, want at most 9s", d)
	}
}
