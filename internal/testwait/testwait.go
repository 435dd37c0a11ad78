// Package testwait is how the project's tests wait: for the condition itself
// (a record written, a value on a channel), never for an amount of time.
// Every wait has one generous bound, Limit, that only a hang reaches, so a
// test passes on a loaded two-core machine as it does on an idle one, and
// fails, naming what it waited for, when the thing never happens.
//
// It depends on the standard library only, so the internal tests of any
// package in the module can use it.
package testwait

import (
	"context"
	"encoding/json"
	"flag"
	"testing"
	"time"
)

// Limit is how long a wait lasts before the test calls it a hang: far
// longer than anything a test waits for takes on a busy machine. It is a
// failure bound, never an assertion on speed.
const Limit = 60 * time.Second

// started is when the test binary started, near enough to when its
// -test.timeout began to run.
var started = time.Now()

// limit is Limit, or less when the test binary's -timeout comes first: the
// wait then fails the test naming what it waited for, before the binary
// panics with every goroutine's stack. (It reads the flag, not t.Deadline,
// which panics in a synctest bubble; in a bubble, whose clock starts in
// 2000, the binary's deadline is far away and the limit is Limit.)
func limit() time.Duration {
	d := Limit
	f := flag.Lookup("test.timeout")
	if f == nil {
		return d
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return d
	}
	if timeout, ok := g.Get().(time.Duration); ok && timeout > 0 {
		if left := time.Until(started.Add(timeout)) * 9 / 10; left < d {
			d = max(left, time.Second)
		}
	}
	return d
}

// WaitFor polls cond, from 1 ms apart up to 20 ms apart, until it holds, and
// fails the test with what (such as "the session to expire") if it still
// does not after Limit. Call it from the test's goroutine.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if d, ok := Until(cond); !ok {
		t.Fatalf("still waiting for %s after %v", what, d)
	}
}

// WaitForNil polls f as WaitFor polls its condition, until f returns nil,
// and fails the test with what and f's last error if it has not after
// Limit. Call it from the test's goroutine.
func WaitForNil(t testing.TB, what string, f func() error) {
	t.Helper()
	var err error
	if d, ok := Until(func() bool { err = f(); return err == nil }); !ok {
		t.Fatalf("still waiting for %s after %v: %v", what, d, err)
	}
}

// Until calls cond, as WaitFor does, until it holds (ok) or the limit has
// passed (returned): for callers that fail with more context than WaitFor's.
func Until(cond func() bool) (time.Duration, bool) {
	if cond() {
		return 0, true
	}
	d := limit()
	deadline := time.Now().Add(d)
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		time.Sleep(pause)
		if cond() {
			return 0, true
		}
		if time.Now().After(deadline) {
			return d, false
		}
	}
}

// Recv receives from ch, failing the test with what if nothing comes within
// Limit, or if ch is closed (a closed channel delivers its zero value; use
// Closed to wait for the close itself). Call it from the test's goroutine.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	d := limit()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("waiting for %s: the channel was closed", what)
		}
		return v
	case <-timer.C:
		t.Fatalf("still waiting for %s after %v", what, d)
	}
	panic("unreachable")
}

// Closed waits until ch is closed or delivers a value (a done channel,
// ctx.Done()), failing the test with what after Limit. Call it from the
// test's goroutine.
func Closed[T any](t testing.TB, ch <-chan T, what string) {
	t.Helper()
	d := limit()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("still waiting for %s after %v", what, d)
	}
}

// Returns runs f in a goroutine and waits for it to return, failing the
// test with what if it has not after Limit (a hang detector). Call it from
// the test's goroutine.
func Returns(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	Closed(t, done, what+" to return")
}

// Context returns the test's context (cancelled when the test ends) with
// Limit as its deadline: for calls that take a context and must not hang
// the test, never as an expectation of how fast they are.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), limit())
	t.Cleanup(cancel)
	return ctx
}

// MustJSON returns v as JSON, failing the test if it cannot be encoded.
func MustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
