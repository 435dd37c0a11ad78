package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/taskstore"
)

// TestSweepRunsOnlyOnceATaskExpired: a periodic sweep of a store holding
// no expired task runs no statement (an idle server costs nothing), one
// past a task's expiry deletes it, and the earliest expiry is known again
// after a reopen; a table another process filled with expired tasks is
// swept when a Create finds it full.
func TestSweepRunsOnlyOnceATaskExpired(t *testing.T) {
	ctx := context.Background()
	clk := testclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "tasks.db")
	open := func(opts ...taskstore.Option) *Store {
		t.Helper()
		s, err := Open(path, append([]taskstore.Option{taskstore.WithClock(clk.Now)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open()
	// sweep sweeps s now and checks what it deleted and whether it ran
	// its statement.
	sweep := func(s *Store, when string, want int, runs bool) {
		t.Helper()
		before := s.sweeps
		n, err := s.Sweep(ctx, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if ran := s.sweeps > before; n != want || ran != runs {
			t.Errorf("sweeping %s: %d deleted, statement run %v; want %d, %v", when, n, ran, want, runs)
		}
	}
	sweep(s, "an empty store", 0, false)
	forever := task("forever", "alice")
	if err := s.Create(ctx, forever); err != nil {
		t.Fatal(err)
	}
	short := task("short", "alice")
	short.TTL = time.Minute
	if err := s.Create(ctx, short); err != nil {
		t.Fatal(err)
	}
	clk.Advance(59 * time.Second)
	sweep(s, "before the expiry", 0, false)
	clk.Advance(2 * time.Second)
	sweep(s, "past the expiry", 1, true)
	sweep(s, "again", 0, false)
	// An update that gives a task an expiry (from its creation, 61 s
	// ago) is known too.
	if _, err := s.Update(ctx, "forever", func(r *taskstore.Record) error { r.TTL = 2 * time.Minute; return nil }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(taskstore.WithLimits(taskstore.Limits{MaxTasks: 2}))
	clk.Advance(58 * time.Second)
	sweep(s, "reopened, before the expiry", 0, false)
	clk.Advance(2 * time.Second)
	sweep(s, "reopened, past the expiry", 1, true)

	// Another process's tasks, expired, fill the table.
	other := open()
	for _, id := range []string{"o1", "o2"} {
		r := task(id, "bob")
		r.TTL = time.Second
		if err := other.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(2 * time.Second)
	if err := s.Create(ctx, task("mine", "alice")); err != nil {
		t.Fatalf("Create in a table full of expired tasks: %v", err)
	}
	if _, err := s.Get(ctx, "alice", "mine"); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, task("more", "alice")); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, task("full", "alice")); !errors.Is(err, taskstore.ErrFull) {
		t.Errorf("Create past MaxTasks of live tasks: %v, want ErrFull", err)
	}
}
