// Package sessionstoretest is the behaviour suite of
// streamable.SessionStore, so that every store (the memory one, the file's,
// Redis's) is held to the same contract the handler relies on.
package sessionstoretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Clock is a settable clock for stores that take one: stopped unless
// advanced (Now, Advance).
type Clock = testclock.Clock

// NewClock returns a clock stopped at a fixed instant.
func NewClock() *Clock { return testclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) }

// Maker makes an empty store for one test and closes it when the test
// ends. A store that can judge expiry by clk alone does so and returns
// clocked true; one that keeps its own time (the memory store, Redis)
// ignores clk, and the suite then waits for real deadlines to pass.
type Maker func(t *testing.T, clk *Clock) (s streamable.SessionStore, clocked bool)

// Run runs, as subtests of t, the behaviour every SessionStore must have.
func Run(t *testing.T, mk Maker) {
	ctx := context.Background()
	state := []byte("{\"v\":1}\x00\xff binary")
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"CreateTouch", func(t *testing.T) {
			s, _ := mk(t, NewClock())
			in := &streamable.SessionRecord{ID: "s1", Owner: "iss\x00alice", Prime: true, State: bytes.Clone(state)}
			if err := s.Create(ctx, in, time.Minute); err != nil {
				t.Fatal(err)
			}
			in.State[0], in.Owner = 'X', "mallory" // the store keeps its own copy
			rec, err := s.Touch(ctx, "s1", time.Minute)
			if err != nil || rec.ID != "s1" || rec.Owner != "iss\x00alice" || !rec.Prime || !bytes.Equal(rec.State, state) {
				t.Fatalf("Touch: %+v, %v", rec, err)
			}
			rec.State[0] = 'Y'
			if again, err := s.Touch(ctx, "s1", time.Minute); err != nil || !bytes.Equal(again.State, state) {
				t.Errorf("a caller changing a returned state changed the store's: %+v, %v", again, err)
			}
			if err := s.Create(ctx, &streamable.SessionRecord{ID: "anon"}, time.Minute); err != nil {
				t.Fatal(err)
			}
			if rec, err := s.Touch(ctx, "anon", time.Minute); err != nil || rec.Owner != "" || rec.Prime || len(rec.State) != 0 {
				t.Errorf("an anonymous session with no state: %+v, %v", rec, err)
			}
		}},
		{"Update", func(t *testing.T) {
			s, _ := mk(t, NewClock())
			if err := s.Create(ctx, &streamable.SessionRecord{ID: "s1", Owner: "alice", Prime: true, State: state}, time.Minute); err != nil {
				t.Fatal(err)
			}
			two := []byte(`{"v":2}`)
			if err := s.Update(ctx, "s1", two, time.Minute); err != nil {
				t.Fatal(err)
			}
			two[0] = 'X'
			if rec, err := s.Touch(ctx, "s1", time.Minute); err != nil || string(rec.State) != `{"v":2}` || rec.Owner != "alice" || !rec.Prime {
				t.Errorf("after Update: %+v, %v", rec, err)
			}
			if err := s.Update(ctx, "never", two, time.Minute); !errors.Is(err, streamable.ErrSessionNotFound) {
				t.Errorf("Update of a session never stored: %v, want ErrSessionNotFound", err)
			}
		}},
		{"Delete", func(t *testing.T) {
			s, _ := mk(t, NewClock())
			for _, id := range []string{"s1", "s2"} {
				if err := s.Create(ctx, &streamable.SessionRecord{ID: id, State: state}, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Delete(ctx, "s1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Touch(ctx, "s1", time.Minute); !errors.Is(err, streamable.ErrSessionNotFound) {
				t.Errorf("Touch after Delete: %v, want ErrSessionNotFound", err)
			}
			if err := s.Update(ctx, "s1", state, time.Minute); !errors.Is(err, streamable.ErrSessionNotFound) {
				t.Errorf("Update after Delete: %v, want ErrSessionNotFound", err)
			}
			if err := s.Delete(ctx, "s1"); err != nil {
				t.Errorf("a second Delete: %v", err)
			}
			if err := s.Delete(ctx, "never"); err != nil {
				t.Errorf("Delete of a session never stored: %v", err)
			}
			if _, err := s.Touch(ctx, "s2", time.Minute); err != nil {
				t.Errorf("the other session after a Delete: %v", err)
			}
		}},
		{"Unknown", func(t *testing.T) {
			s, _ := mk(t, NewClock())
			for _, id := range []string{"never", "", strings.Repeat("x", 4096), "a\x00b"} {
				if _, err := s.Touch(ctx, id, time.Minute); !errors.Is(err, streamable.ErrSessionNotFound) {
					t.Errorf("Touch %.20q: %v, want ErrSessionNotFound", id, err)
				}
			}
		}},
		{"Expiry", func(t *testing.T) {
			clk := NewClock()
			s, clocked := mk(t, clk)
			if !clocked {
				expiryRealTime(t, s)
				return
			}
			const ttl = time.Minute
			for _, id := range []string{"touched", "updated", "idle"} {
				if err := s.Create(ctx, &streamable.SessionRecord{ID: id, State: state}, ttl); err != nil {
					t.Fatal(err)
				}
			}
			// Each Touch or Update restarts its session's ttl; the idle one
			// expires a ttl after Create.
			for range 3 {
				clk.Advance(ttl * 3 / 4)
				if _, err := s.Touch(ctx, "touched", ttl); err != nil {
					t.Fatalf("Touch within the ttl: %v", err)
				}
				if err := s.Update(ctx, "updated", state, ttl); err != nil {
					t.Fatalf("Update within the ttl: %v", err)
				}
			}
			if _, err := s.Touch(ctx, "idle", ttl); !errors.Is(err, streamable.ErrSessionNotFound) {
				t.Errorf("a session idle past its ttl: %v, want ErrSessionNotFound", err)
			}
			clk.Advance(ttl - time.Millisecond)
			if _, err := s.Touch(ctx, "updated", time.Hour); err != nil {
				t.Errorf("a session a millisecond before its expiry: %v", err)
			}
			clk.Advance(ttl + time.Second)
			if _, err := s.Touch(ctx, "touched", ttl); !errors.Is(err, streamable.ErrSessionNotFound) {
				t.Errorf("Touch past the ttl: %v, want ErrSessionNotFound", err)
			}
			if err := s.Update(ctx, "touched", state, ttl); !errors.Is(err, streamable.ErrSessionNotFound) {
				t.Errorf("Update past the ttl: %v, want ErrSessionNotFound", err)
			}
			if _, err := s.Touch(ctx, "updated", ttl); err != nil {
				t.Errorf("the session touched with an hour's ttl: %v", err)
			}
			// An expired id may be opened again.
			if err := s.Create(ctx, &streamable.SessionRecord{ID: "idle", Owner: "bob"}, ttl); err != nil {
				t.Errorf("Create of an expired id: %v", err)
			}
			if rec, err := s.Touch(ctx, "idle", ttl); err != nil || rec.Owner != "bob" {
				t.Errorf("the id opened again: %+v, %v", rec, err)
			}
		}},
		{"Concurrent", func(t *testing.T) {
			s, _ := mk(t, NewClock())
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for g := range 8 {
				wg.Go(func() {
					for i := range 20 {
						id := fmt.Sprintf("c%d-%d", g, i)
						want := fmt.Appendf(nil, `{"n":%d}`, i)
						if err := s.Create(ctx, &streamable.SessionRecord{ID: id, Owner: id, State: state}, time.Minute); err != nil {
							errs <- err
							return
						}
						if err := s.Update(ctx, id, want, time.Minute); err != nil {
							errs <- err
							return
						}
						rec, err := s.Touch(ctx, id, time.Minute)
						if err != nil || rec.Owner != id || !bytes.Equal(rec.State, want) {
							errs <- fmt.Errorf("%s: %+v, %v", id, rec, err)
							return
						}
						if i%2 == 0 {
							if err := s.Delete(ctx, id); err != nil {
								errs <- err
								return
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			for g := range 8 {
				for i := range 20 {
					id := fmt.Sprintf("c%d-%d", g, i)
					_, err := s.Touch(ctx, id, time.Minute)
					if deleted := i%2 == 0; deleted != errors.Is(err, streamable.ErrSessionNotFound) || !deleted && err != nil {
						t.Errorf("%s (deleted %v): %v", id, deleted, err)
					}
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

// expiryRealTime is the Expiry test of a store that keeps its own time: a
// session untouched past its ttl is gone once that much time has passed
// (waited for on this process's clock, which starts after Create returned,
// so no store's deadline is later), and one with time left is not.
func expiryRealTime(t *testing.T, s streamable.SessionStore) {
	ctx := context.Background()
	const ttl = 50 * time.Millisecond
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "long"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "short"}, ttl); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	testwait.WaitFor(t, "the short session's ttl to pass", func() bool { return time.Since(created) > ttl })
	if _, err := s.Touch(ctx, "short", ttl); !errors.Is(err, streamable.ErrSessionNotFound) {
		t.Errorf("a session idle past its ttl: %v, want ErrSessionNotFound", err)
	}
	if _, err := s.Touch(ctx, "long", time.Hour); err != nil {
		t.Errorf("a session with time left: %v", err)
	}
}
