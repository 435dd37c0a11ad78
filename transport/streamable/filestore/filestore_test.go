package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/transport/streamable"
	"github.com/toolwire/toolwire/transport/streamable/sessionstoretest"
)

// open opens a store at path on clk, closed when the test ends unless the
// test closed it.
func open(t *testing.T, path string, clk *sessionstoretest.Clock, opts ...Option) *Store {
	t.Helper()
	s, err := Open(path, append([]Option{WithClock(clk.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSuite(t *testing.T) {
	sessionstoretest.Run(t, func(t *testing.T, clk *sessionstoretest.Clock) (streamable.SessionStore, bool) {
		return open(t, filepath.Join(t.TempDir(), "sessions.log"), clk), true
	})
}

// TestReopen: what a store held is served by the next store on the same
// file (another process after a restart): owner, prime and the last state,
// on the same id; sessions deleted or expired meanwhile are not.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.log")
	clk := sessionstoretest.NewClock()
	s := open(t, path, clk)
	for _, id := range []string{"kept", "deleted", "idle"} {
		if err := s.Create(ctx, &streamable.SessionRecord{ID: id, Owner: "iss\x00alice", Prime: true, State: []byte(`{"v":1}`)}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(40 * time.Second)
	if _, err := s.Touch(ctx, "kept", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, "kept", []byte(`{"v":2}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "deleted"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Past idle's ttl and the quarter written ahead of it, within kept's.
	clk.Advance(40 * time.Second)
	s = open(t, path, clk)
	if n := s.Len(); n != 1 {
		t.Errorf("reopened: %d sessions, want 1", n)
	}
	rec, err := s.Touch(ctx, "kept", time.Minute)
	if err != nil || rec.Owner != "iss\x00alice" || !rec.Prime || string(rec.State) != `{"v":2}` {
		t.Fatalf("after reopening: %+v, %v", rec, err)
	}
	for _, id := range []string{"deleted", "idle"} {
		if _, err := s.Touch(ctx, id, time.Minute); !errors.Is(err, streamable.ErrSessionNotFound) {
			t.Errorf("%s after reopening: %v, want ErrSessionNotFound", id, err)
		}
	}
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "kept"}, time.Minute); err == nil {
		t.Error("a second Create of a live id succeeded after reopening")
	}
}

// TestExpiryWrittenAhead: after a restart a session lives at least its
// ttl from its last request, and at most a quarter of it longer, however
// its requests fell; the requests in between cost one write per quarter
// of the ttl at most.
func TestExpiryWrittenAhead(t *testing.T) {
	ctx := context.Background()
	const ttl = 100 * time.Second
	for _, gap := range []time.Duration{time.Second, 7 * time.Second, 24 * time.Second, 26 * time.Second, 99 * time.Second} {
		for _, after := range []time.Duration{ttl - time.Millisecond, ttl + ttl/4 + time.Millisecond} {
			t.Run(fmt.Sprintf("%v/%v", gap, after), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "sessions.log")
				clk := sessionstoretest.NewClock()
				s := open(t, path, clk)
				if err := s.Create(ctx, &streamable.SessionRecord{ID: "s"}, ttl); err != nil {
					t.Fatal(err)
				}
				const touches = 40
				before := s.ops.Load()
				for range touches {
					clk.Advance(gap)
					if _, err := s.Touch(ctx, "s", ttl); err != nil {
						t.Fatal(err)
					}
				}
				span := gap * touches
				if writes, most := s.ops.Load()-before, int64(span/(ttl/4))+1; writes > most {
					t.Errorf("%d touches %v apart: %d writes, want at most %d", touches, gap, writes, most)
				}
				s.Close()
				clk.Advance(after)
				s = open(t, path, clk)
				_, err := s.Touch(ctx, "s", ttl)
				if alive := after < ttl; alive != (err == nil) {
					t.Errorf("reopened %v after the last request: %v", after, err)
				}
			})
		}
	}
}

// TestTouchCost: a request on an established session writes no record
// until its expiry has moved a quarter of the ttl past the file's, then
// one; after a restart, the file holds the expiry written ahead, so the
// first request writes nothing more than any other.
func TestTouchCost(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.log")
	clk := sessionstoretest.NewClock()
	s := open(t, path, clk)
	ops := func(f func()) int64 {
		before := s.ops.Load()
		f()
		return s.ops.Load() - before
	}
	if n := ops(func() { s.Create(ctx, &streamable.SessionRecord{ID: "s"}, time.Minute) }); n != 1 {
		t.Errorf("Create: %d records, want 1", n)
	}
	touch := func() {
		if _, err := s.Touch(ctx, "s", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if n := ops(func() {
		for range 100 {
			touch()
		}
	}); n != 0 {
		t.Errorf("100 touches at once: %d records, want 0", n)
	}
	clk.Advance(16 * time.Second)
	if n := ops(touch); n != 1 {
		t.Errorf("a touch past the quarter: %d records, want 1", n)
	}
	if n := ops(touch); n != 0 {
		t.Errorf("the touch after it: %d records, want 0", n)
	}
	if n := ops(func() { s.Update(ctx, "s", []byte("x"), time.Minute) }); n != 1 {
		t.Errorf("Update: %d records, want 1", n)
	}
	s.Close()
	s = open(t, path, clk)
	if n := ops(touch); n != 0 {
		t.Errorf("the first touch after reopening: %d records, want 0", n)
	}
	clk.Advance(16 * time.Second)
	if n := ops(touch); n != 1 {
		t.Errorf("a touch past the quarter after reopening: %d records, want 1", n)
	}
	if n := ops(func() { s.Touch(ctx, "never", time.Minute) }); n != 0 {
		t.Errorf("a touch of an unknown id: %d records, want 0", n)
	}
}

// TestCap: past Limits.MaxSessions, a new session drops the expired ones
// first, then those unused longest; the file never holds more, reopened
// too.
func TestCap(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.log")
	clk := sessionstoretest.NewClock()
	s := open(t, path, clk, WithLimits(Limits{MaxSessions: 3}))
	create := func(id string, ttl time.Duration) {
		t.Helper()
		if err := s.Create(ctx, &streamable.SessionRecord{ID: id}, ttl); err != nil {
			t.Fatal(err)
		}
	}
	create("short", time.Second)
	create("a", time.Minute)
	clk.Advance(2 * time.Second) // short expired
	create("b", time.Minute)
	clk.Advance(time.Second)
	create("c", time.Minute) // drops short
	clk.Advance(30 * time.Second)
	if _, err := s.Touch(ctx, "a", time.Minute); err != nil { // b is now unused longest
		t.Fatal(err)
	}
	create("d", time.Minute) // drops b
	if n := s.Len(); n != 3 {
		t.Errorf("%d sessions, want 3", n)
	}
	for id, want := range map[string]bool{"short": false, "a": true, "b": false, "c": true, "d": true} {
		if _, err := s.Touch(ctx, id, time.Minute); (err == nil) != want {
			t.Errorf("%s: %v, want kept %v", id, err, want)
		}
	}
	s.Close()
	// A later WithLimits that leaves MaxSessions zero keeps the cap.
	s = open(t, path, clk, WithLimits(Limits{MaxSessions: 3}), WithLimits(Limits{}))
	create("e", time.Minute)
	if n := s.Len(); n != 3 {
		t.Errorf("reopened: %d sessions, want 3", n)
	}
}

// TestSweep: once the store holds enough sessions, a Create drops the expired
// sessions, those whose expiry was written ahead of their ttl too, and no
// later store brings them back.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.log")
	clk := sessionstoretest.NewClock()
	s := open(t, path, clk)
	for i := range 64 {
		if err := s.Create(ctx, &streamable.SessionRecord{ID: fmt.Sprintf("old%d", i)}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(61 * time.Second) // expired; the file says so only 15 s later
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "new"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 1 {
		t.Errorf("after the sweep: %d sessions, want 1", n)
	}
	s.Close()
	s = open(t, path, clk)
	if n := s.Len(); n != 1 {
		t.Errorf("reopened: %d sessions, want 1", n)
	}
	if _, err := s.Touch(ctx, "old7", time.Minute); !errors.Is(err, streamable.ErrSessionNotFound) {
		t.Errorf("a swept session after reopening: %v", err)
	}
}

// TestBounds: ids and states past the bounds are refused, never stored.
func TestBounds(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "sessions.log"), sessionstoretest.NewClock())
	long := strings.Repeat("x", MaxIDLen+1)
	if err := s.Create(ctx, &streamable.SessionRecord{ID: long}, time.Minute); err == nil {
		t.Error("an id past MaxIDLen was stored")
	}
	if err := s.Create(ctx, &streamable.SessionRecord{ID: ""}, time.Minute); err == nil {
		t.Error("an empty id was stored")
	}
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "big", State: make([]byte, MaxSessionState+1)}, time.Minute); err == nil {
		t.Error("a state past MaxSessionState was stored")
	}
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "s"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, "s", make([]byte, MaxSessionState+1), time.Minute); err == nil || errors.Is(err, streamable.ErrSessionNotFound) {
		t.Errorf("Update past MaxSessionState: %v", err)
	}
	if n := s.Len(); n != 1 {
		t.Errorf("%d sessions stored, want 1", n)
	}
}

// TestFileMode: the database is private to its user, in a private
// directory.
func TestFileMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "sessions.log")
	s := open(t, path, sessionstoretest.NewClock())
	defer s.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
	}
}
