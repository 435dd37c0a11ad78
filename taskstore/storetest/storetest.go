// Package storetest is the behaviour suite of taskstore.Store, so that
// stores outside package taskstore (redisstore's) are held to the contract
// of the memory and SQLite stores.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
)

// Maker makes an empty store for one test, configured by opts, and closes
// it when the test ends.
type Maker func(t *testing.T, opts ...taskstore.Option) taskstore.Store

// newFakeClock is a settable clock; with step it advances on every reading.
func newFakeClock(step time.Duration) *testclock.Clock {
	return testclock.NewStepping(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step)
}

// Task returns a working task of owner, as the suite creates them.
func Task(id, owner string) *taskstore.Record {
	return &taskstore.Record{
		ID: id, Owner: owner, Status: mcp.TaskWorking,
		ProtocolVersion: "2026-07-28", Method: "tools/call",
		Params: json.RawMessage(`{"name":"slow","arguments":{"n":1}}`),
	}
}

// Run runs, as subtests of t, the behaviour every taskstore.Store must
// have: the contract of the memory and SQLite stores. mk makes an empty
// store for one subtest; a store with a clock (taskstore.WithClock) must
// judge expiry by it alone.
func Run(t *testing.T, mk Maker) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, mk Maker)
	}{
		{"CreateGet", func(t *testing.T, mk Maker) {
			clk := newFakeClock(0)
			s := mk(t, taskstore.WithClock(clk.Now))
			r := Task("t1", "alice")
			r.TTL, r.PollInterval = time.Hour, 2*time.Second
			r.InputRequests = json.RawMessage(`{"a":1}`)
			if err := s.Create(ctx, r); err != nil {
				t.Fatal(err)
			}
			if !r.CreatedAt.Equal(clk.Now()) || !r.UpdatedAt.Equal(r.CreatedAt) {
				t.Errorf("Create stamped %v/%v, want the clock's %v", r.CreatedAt, r.UpdatedAt, clk.Now())
			}
			got, err := s.Get(ctx, "alice", "t1")
			if err != nil {
				t.Fatal(err)
			}
			if !RecordsEqual(got, r) {
				t.Errorf("Get = %+v\nwant %+v", got, r)
			}
			// Copies in and out: changing either does not change the store.
			r.Params[0] = 'X'
			got.Result = json.RawMessage(`1`)
			got.StatusMessage = "mutated"
			again, _ := s.Get(ctx, "alice", "t1")
			if string(again.Params) != `{"name":"slow","arguments":{"n":1}}` || again.Result != nil || again.StatusMessage != "" {
				t.Errorf("stored record changed through a caller's copy: %+v", again)
			}
		}},
		{"OwnerIsolation", func(t *testing.T, mk Maker) {
			s := mk(t)
			if err := s.Create(ctx, Task("t1", "alice")); err != nil {
				t.Fatal(err)
			}
			_, errOther := s.Get(ctx, "bob", "t1")
			_, errAnon := s.Get(ctx, "", "t1")
			_, errMissing := s.Get(ctx, "alice", "nope")
			for _, err := range []error{errOther, errAnon, errMissing} {
				if err != taskstore.ErrNotFound {
					t.Errorf("Get = %v, want exactly taskstore.ErrNotFound", err)
				}
			}
			p, err := s.List(ctx, "bob", "", 10)
			if err != nil || len(p.Records) != 0 || p.Next != "" {
				t.Errorf("bob's List = %+v, %v; want empty", p, err)
			}
		}},
		{"DuplicateID", func(t *testing.T, mk Maker) {
			s := mk(t)
			if err := s.Create(ctx, Task("t1", "alice")); err != nil {
				t.Fatal(err)
			}
			for _, owner := range []string{"alice", "bob"} {
				if err := s.Create(ctx, Task("t1", owner)); !errors.Is(err, taskstore.ErrExists) {
					t.Errorf("duplicate Create by %s = %v, want taskstore.ErrExists", owner, err)
				}
			}
			if got, err := s.Get(ctx, "alice", "t1"); err != nil || got.Owner != "alice" {
				t.Errorf("after duplicate: %+v, %v", got, err)
			}
		}},
		{"InvalidCreate", func(t *testing.T, mk Maker) {
			s := mk(t)
			if err := s.Create(ctx, &taskstore.Record{}); err == nil {
				t.Error("Create without id succeeded")
			}
			if err := s.Create(ctx, &taskstore.Record{ID: "x", Status: "bogus"}); err == nil {
				t.Error("Create with unknown status succeeded")
			}
			r := &taskstore.Record{ID: "y"}
			if err := s.Create(ctx, r); err != nil || r.Status != mcp.TaskWorking {
				t.Errorf("Create with no status = %v, status %q; want working", err, r.Status)
			}
		}},
		{"Update", func(t *testing.T, mk Maker) {
			clk := newFakeClock(0)
			s := mk(t, taskstore.WithClock(clk.Now))
			if err := s.Create(ctx, Task("t1", "alice")); err != nil {
				t.Fatal(err)
			}
			created := clk.Now()
			clk.Advance(time.Second)
			got, err := s.Update(ctx, "t1", func(r *taskstore.Record) error {
				r.Status, r.StatusMessage = mcp.TaskInputRequired, "need a name"
				r.InputRequests = json.RawMessage(`{"q":{}}`)
				r.ID, r.Owner, r.CreatedAt = "hijack", "mallory", time.Time{} // ignored
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != "t1" || got.Owner != "alice" || !got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(created.Add(time.Second)) {
				t.Errorf("Update returned %+v", got)
			}
			stored, err := s.Get(ctx, "alice", "t1")
			if err != nil || !RecordsEqual(stored, got) {
				t.Errorf("stored %+v, %v\nwant %+v", stored, err, got)
			}
			boom := errors.New("boom")
			if _, err := s.Update(ctx, "t1", func(r *taskstore.Record) error { r.StatusMessage = "lost"; return boom }); err != boom {
				t.Errorf("Update with failing fn = %v, want boom", err)
			}
			if again, _ := s.Get(ctx, "alice", "t1"); again.StatusMessage != "need a name" {
				t.Errorf("aborted update was kept: %q", again.StatusMessage)
			}
			if _, err := s.Update(ctx, "nope", func(*taskstore.Record) error { return nil }); err != taskstore.ErrNotFound {
				t.Errorf("Update of missing = %v, want taskstore.ErrNotFound", err)
			}
			if _, err := s.Update(ctx, "t1", func(r *taskstore.Record) error { r.Status = "bogus"; return nil }); err == nil {
				t.Error("Update to an unknown status succeeded")
			}
		}},
		{"TerminalRefusal", func(t *testing.T, mk Maker) {
			s := mk(t)
			for _, st := range []mcp.TaskStatus{mcp.TaskCompleted, mcp.TaskFailed, mcp.TaskCancelled} {
				id := "t-" + string(st)
				if err := s.Create(ctx, Task(id, "alice")); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Update(ctx, id, func(r *taskstore.Record) error {
					r.Status, r.Result = st, json.RawMessage(`{"content":[]}`)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				called := false
				_, err := s.Update(ctx, id, func(r *taskstore.Record) error {
					called = true
					r.Status = mcp.TaskWorking
					return nil
				})
				if err != taskstore.ErrTerminal || called {
					t.Errorf("%s: Update = %v (fn called %v), want taskstore.ErrTerminal without calling fn", st, err, called)
				}
				if got, _ := s.Get(ctx, "alice", id); got.Status != st || string(got.Result) != `{"content":[]}` {
					t.Errorf("%s: terminal task changed: %+v", st, got)
				}
			}
		}},
		{"ConcurrentUpdates", func(t *testing.T, mk Maker) {
			s := mk(t)
			r := Task("t1", "alice")
			r.StatusMessage = "0"
			if err := s.Create(ctx, r); err != nil {
				t.Fatal(err)
			}
			const n = 50
			var fns []func() error
			for range n {
				fns = append(fns, func() error {
					_, err := s.Update(ctx, "t1", func(r *taskstore.Record) error {
						var v int
						if _, err := fmt.Sscan(r.StatusMessage, &v); err != nil {
							return err
						}
						r.StatusMessage = fmt.Sprint(v + 1)
						return nil
					})
					return err
				}, func() error { // a reader runs alongside
					_, err := s.Get(ctx, "alice", "t1")
					return err
				})
			}
			Concurrently(t, fns...)
			got, _ := s.Get(ctx, "alice", "t1")
			if got.StatusMessage != fmt.Sprint(n) {
				t.Errorf("counter = %s after %d concurrent increments", got.StatusMessage, n)
			}
		}},
		{"ListPaging", func(t *testing.T, mk Maker) {
			clk := newFakeClock(time.Millisecond)
			s := mk(t, taskstore.WithClock(clk.Now))
			for i := range 25 {
				if err := s.Create(ctx, Task(fmt.Sprintf("a%02d", i), "alice")); err != nil {
					t.Fatal(err)
				}
				if err := s.Create(ctx, Task(fmt.Sprintf("b%02d", i), "bob")); err != nil {
					t.Fatal(err)
				}
			}
			var ids []string
			cursor := ""
			for page := 0; ; page++ {
				p, err := s.List(ctx, "alice", cursor, 10)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range p.Records {
					if r.Owner != "alice" {
						t.Fatalf("List leaked %s's task %s", r.Owner, r.ID)
					}
					ids = append(ids, r.ID)
				}
				// Tasks created while paging come before the cursor and so
				// change nothing for the pages still to come.
				if err := s.Create(ctx, Task(fmt.Sprintf("new%d", page), "alice")); err != nil {
					t.Fatal(err)
				}
				if p.Next == "" {
					break
				}
				if len(p.Records) != 10 {
					t.Fatalf("page %d has %d records and a next cursor", page, len(p.Records))
				}
				cursor = p.Next
			}
			if len(ids) != 25 {
				t.Fatalf("listed %d tasks, want 25: %v", len(ids), ids)
			}
			for i, id := range ids {
				if want := fmt.Sprintf("a%02d", 24-i); id != want {
					t.Fatalf("ids[%d] = %s, want %s (newest first): %v", i, id, want, ids)
				}
			}
			// An exactly full last page has no next cursor.
			p, err := s.List(ctx, "bob", "", 25)
			if err != nil || len(p.Records) != 25 || p.Next != "" {
				t.Errorf("bob's List(25) = %d records, next %q, %v", len(p.Records), p.Next, err)
			}
			// limit below 1 means 1.
			if p, err := s.List(ctx, "bob", "", 0); err != nil || len(p.Records) != 1 || p.Records[0].ID != "b24" {
				t.Errorf("List(limit 0) = %+v, %v", p, err)
			}
		}},
		{"ListSameInstant", func(t *testing.T, mk Maker) {
			clk := newFakeClock(0) // every task created at the same instant
			s := mk(t, taskstore.WithClock(clk.Now))
			for i := range 7 {
				if err := s.Create(ctx, Task(fmt.Sprintf("t%d", i), "alice")); err != nil {
					t.Fatal(err)
				}
			}
			var ids []string
			for cursor := ""; ; {
				p, err := s.List(ctx, "alice", cursor, 3)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range p.Records {
					ids = append(ids, r.ID)
				}
				if cursor = p.Next; cursor == "" {
					break
				}
			}
			if fmt.Sprint(ids) != "[t6 t5 t4 t3 t2 t1 t0]" {
				t.Errorf("ids = %v", ids)
			}
		}},
		{"InvalidCursor", func(t *testing.T, mk Maker) {
			s := mk(t)
			for _, c := range []string{"!!!", "AAAA", "eyJ4IjoxfQ", "AQAAAAAAAAAB"} {
				if _, err := s.List(ctx, "alice", c, 10); !errors.Is(err, taskstore.ErrInvalidCursor) {
					t.Errorf("List(cursor %q) = %v, want taskstore.ErrInvalidCursor", c, err)
				}
			}
		}},
		{"ExpiryAndSweep", func(t *testing.T, mk Maker) {
			clk := newFakeClock(0)
			s := mk(t, taskstore.WithClock(clk.Now))
			short, long, forever := Task("short", "alice"), Task("long", "alice"), Task("forever", "alice")
			short.TTL, long.TTL = time.Minute, time.Hour
			for _, r := range []*taskstore.Record{short, long, forever} {
				if err := s.Create(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := s.Sweep(ctx, clk.Now().Add(59*time.Second)); n != 0 || err != nil {
				t.Errorf("early Sweep = %d, %v", n, err)
			}
			clk.Advance(time.Minute)
			// Expired but not yet swept: already invisible.
			if _, err := s.Get(ctx, "alice", "short"); err != taskstore.ErrNotFound {
				t.Errorf("Get of expired = %v", err)
			}
			if _, err := s.Update(ctx, "short", func(*taskstore.Record) error { return nil }); err != taskstore.ErrNotFound {
				t.Errorf("Update of expired = %v", err)
			}
			if p, _ := s.List(ctx, "alice", "", 10); len(p.Records) != 2 {
				t.Errorf("List shows %d tasks, want 2", len(p.Records))
			}
			if n, err := s.Sweep(ctx, clk.Now()); n != 1 || err != nil {
				t.Errorf("Sweep = %d, %v; want 1", n, err)
			}
			if n, err := s.Sweep(ctx, clk.Now().Add(24*time.Hour)); n != 1 || err != nil {
				t.Errorf("second Sweep = %d, %v; want 1", n, err)
			}
			if _, err := s.Get(ctx, "alice", "forever"); err != nil {
				t.Errorf("task without TTL: %v", err)
			}
		}},
		{"MaxTasks", func(t *testing.T, mk Maker) {
			clk := newFakeClock(0)
			s := mk(t, taskstore.WithClock(clk.Now), taskstore.WithLimits(taskstore.Limits{MaxTasks: 3}))
			for i := range 3 {
				r := Task(fmt.Sprint(i), "alice")
				if i == 0 {
					r.TTL = time.Minute
				}
				if err := s.Create(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Create(ctx, Task("x", "alice")); !errors.Is(err, taskstore.ErrFull) {
				t.Errorf("Create past the bound = %v, want taskstore.ErrFull", err)
			}
			clk.Advance(time.Minute) // task 0 expires: Create sweeps it away
			if err := s.Create(ctx, Task("x", "alice")); err != nil {
				t.Errorf("Create after expiry = %v", err)
			}
			if err := s.Create(ctx, Task("y", "alice")); !errors.Is(err, taskstore.ErrFull) {
				t.Errorf("Create past the bound = %v, want taskstore.ErrFull", err)
			}
		}},
		{"Recover", func(t *testing.T, mk Maker) {
			clk := newFakeClock(0)
			s := mk(t, taskstore.WithClock(clk.Now))
			states := map[string]mcp.TaskStatus{
				"w": mcp.TaskWorking, "i": mcp.TaskInputRequired,
				"c": mcp.TaskCompleted, "f": mcp.TaskFailed, "x": mcp.TaskCancelled,
			}
			for id, st := range states {
				r := Task(id, "alice")
				r.Status, r.StatusMessage = st, "before"
				if err := s.Create(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			clk.Advance(time.Second)
			n, err := s.Recover(ctx, "the server restarted")
			if n != 2 || err != nil {
				t.Errorf("Recover = %d, %v; want 2", n, err)
			}
			for id, st := range states {
				got, err := s.Get(ctx, "alice", id)
				if err != nil {
					t.Fatal(err)
				}
				if st.Terminal() {
					if got.Status != st || got.StatusMessage != "before" {
						t.Errorf("%s: terminal task changed: %+v", id, got)
					}
				} else if got.Status != mcp.TaskFailed || got.StatusMessage != "the server restarted" || !got.UpdatedAt.Equal(clk.Now()) {
					t.Errorf("%s: recovered = %+v", id, got)
				}
			}
			if n, _ := s.Recover(ctx, "again"); n != 0 {
				t.Errorf("second Recover changed %d", n)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, mk) })
	}
}

// Concurrently runs each of fns on a goroutine of its own, all at once,
// waits for them all and fails t with the first error one returned: how
// the suite, and a store's own tests across replicas, check that updates
// made at the same time are each applied once.
func Concurrently(t testing.TB, fns ...func() error) {
	t.Helper()
	errs := make(chan error, len(fns))
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Go(func() { errs <- f() })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// RecordsEqual reports whether a and b hold the same task, nil and empty
// raw fields apart.
func RecordsEqual(a, b *taskstore.Record) bool {
	return a.ID == b.ID && a.Owner == b.Owner && a.Status == b.Status && a.StatusMessage == b.StatusMessage &&
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) && a.TTL == b.TTL &&
		a.PollInterval == b.PollInterval && a.ProtocolVersion == b.ProtocolVersion && a.Method == b.Method &&
		string(a.Params) == string(b.Params) && string(a.Result) == string(b.Result) &&
		string(a.Error) == string(b.Error) && string(a.InputRequests) == string(b.InputRequests) &&
		(a.Params == nil) == (b.Params == nil) && (a.Result == nil) == (b.Result == nil) &&
		(a.Error == nil) == (b.Error == nil) && (a.InputRequests == nil) == (b.InputRequests == nil)
}
