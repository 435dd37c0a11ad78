package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
	"github.com/toolwire/toolwire/taskstore/storetest"
)

var testPrefixes atomic.Int64

// taskOptions turns the suite's taskstore options into TaskStore options.
// Those are opaque outside package taskstore, so it reads them off memory
// stores made with them: the clock from what Create stamps, the bound from
// where Create fails with ErrFull (up to 1000; past it, the default).
func taskOptions(opts []taskstore.Option) []TaskStoreOption {
	ctx := context.Background()
	clock := func() time.Time {
		r := &taskstore.Record{ID: "probe"}
		taskstore.NewMemory(opts...).Create(ctx, r)
		return r.CreatedAt
	}
	fixed := taskstore.WithClock(func() time.Time { return time.Unix(0, 0) })
	m := taskstore.NewMemory(append(opts[:len(opts):len(opts)], fixed)...)
	maxTasks := taskstore.DefaultMaxTasks
	for i := range 1000 {
		if err := m.Create(ctx, &taskstore.Record{ID: fmt.Sprint(i)}); errors.Is(err, taskstore.ErrFull) {
			maxTasks = i
			break
		}
	}
	return []TaskStoreOption{WithTaskClock(clock), WithLimits(Limits{MaxTasks: maxTasks})}
}

// newTaskStore makes a TaskStore on a client of its own, under a prefix of
// its own, closed at the test's end.
func newTaskStore(t *testing.T, url, prefix string, opts ...TaskStoreOption) (*TaskStore, *Client) {
	t.Helper()
	c := open(t, url, WithPrefix(prefix))
	s, err := c.TaskStore(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

func freshPrefix() string { return fmt.Sprintf("tt%d:", testPrefixes.Add(1)) }

// twoReplicas opens two task stores, each on its own client, on one fresh
// prefix of url: two replicas of a server sharing their tasks.
func twoReplicas(t *testing.T, url string, opts ...TaskStoreOption) (a, b *TaskStore) {
	t.Helper()
	prefix := freshPrefix()
	a, _ = newTaskStore(t, url, prefix, opts...)
	b, _ = newTaskStore(t, url, prefix, opts...)
	return a, b
}

// sharedTask is twoReplicas on the test Redis, with the working task "t1"
// of alice created on a.
func sharedTask(t *testing.T) (a, b *TaskStore) {
	t.Helper()
	a, b = twoReplicas(t, testenv.Redis(t).URL())
	if err := a.Create(context.Background(), newTask("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestTaskStoreSuite holds the Redis store to the memory and SQLite stores'
// contract (storetest.Run), each subtest on fresh keys.
func TestTaskStoreSuite(t *testing.T) {
	srv := testenv.Redis(t)
	storetest.Run(t, func(t *testing.T, opts ...taskstore.Option) taskstore.Store {
		s, _ := newTaskStore(t, srv.URL(), freshPrefix(), taskOptions(opts)...)
		return s
	})
}

func newTask(id, owner string) *taskstore.Record { return storetest.Task(id, owner) }

// TestTaskStoreReplicas: a task created on replica A is read, listed and
// updated on replica B (another client), and A sees B's update.
func TestTaskStoreReplicas(t *testing.T) {
	srv := testenv.Redis(t)
	ctx := context.Background()
	a, b := twoReplicas(t, srv.URL())
	if a.ReplicaID() == b.ReplicaID() {
		t.Fatal("two stores share a random replica id")
	}
	r := newTask("t1", "alice")
	r.TTL = time.Hour
	if err := a.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, "alice", "t1")
	if err != nil || !storetest.RecordsEqual(got, r) {
		t.Fatalf("B's Get = %+v, %v\nwant %+v", got, err, r)
	}
	if _, err := b.Get(ctx, "bob", "t1"); err != taskstore.ErrNotFound {
		t.Errorf("B's Get as bob = %v, want ErrNotFound", err)
	}
	p, err := b.List(ctx, "alice", "", 10)
	if err != nil || len(p.Records) != 1 || p.Records[0].ID != "t1" {
		t.Errorf("B's List = %+v, %v", p, err)
	}
	if _, err := b.Update(ctx, "t1", func(r *taskstore.Record) error {
		r.Status, r.Result = mcp.TaskCompleted, json.RawMessage(`{"content":[]}`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Get(ctx, "alice", "t1"); err != nil || got.Status != mcp.TaskCompleted || string(got.Result) != `{"content":[]}` {
		t.Errorf("A's Get after B's Update = %+v, %v", got, err)
	}
	if _, err := a.Update(ctx, "t1", func(*taskstore.Record) error { return nil }); err != taskstore.ErrTerminal {
		t.Errorf("A's Update of a task B ended = %v, want ErrTerminal", err)
	}
	if err := b.Create(ctx, newTask("t1", "bob")); !errors.Is(err, taskstore.ErrExists) {
		t.Errorf("B's Create of A's id = %v, want ErrExists", err)
	}
}

// TestTaskStoreConcurrentReplicas: 50 goroutines spread over two replicas
// each append their mark to one task's message through Update; every mark
// is there at the end (no update is lost to another replica's).
func TestTaskStoreConcurrentReplicas(t *testing.T) {
	ctx := context.Background()
	a, b := sharedTask(t)
	const n = 50
	fns := make([]func() error, n)
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		fns[i] = func() error {
			_, err := s.Update(ctx, "t1", func(r *taskstore.Record) error {
				r.StatusMessage += fmt.Sprintf("<%d>", i)
				return nil
			})
			return err
		}
	}
	storetest.Concurrently(t, fns...)
	got, err := b.Get(ctx, "alice", "t1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if !strings.Contains(got.StatusMessage, fmt.Sprintf("<%d>", i)) {
			t.Errorf("update %d lost: %q", i, got.StatusMessage)
		}
	}
	if len(got.StatusMessage) != len(strings.Join(func() []string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("<%d>", i))
		}
		return s
	}(), "")) {
		t.Errorf("message %q holds more than the %d marks", got.StatusMessage, n)
	}
}

// TestTaskStoreUpdateConflict: a writer that changes the task on another
// replica every time fn runs makes Update give up after
// MaxTaskUpdateAttempts with ErrTaskConflict, having changed nothing.
func TestTaskStoreUpdateConflict(t *testing.T) {
	ctx := context.Background()
	a, b := sharedTask(t)
	calls := 0
	_, err := a.Update(ctx, "t1", func(r *taskstore.Record) error {
		calls++
		r.StatusMessage = "from A"
		_, err := b.Update(ctx, "t1", func(r *taskstore.Record) error { r.StatusMessage = fmt.Sprint("B ", calls); return nil })
		return err
	})
	if !errors.Is(err, ErrTaskConflict) || calls != MaxTaskUpdateAttempts {
		t.Errorf("Update = %v after %d calls of fn, want ErrTaskConflict after %d", err, calls, MaxTaskUpdateAttempts)
	}
	if got, _ := a.Get(ctx, "alice", "t1"); got.StatusMessage != fmt.Sprint("B ", MaxTaskUpdateAttempts) {
		t.Errorf("message %q, want B's last", got.StatusMessage)
	}
}

// TestTaskStoreCluster: Recover and Sweep on replica B never touch the
// working tasks of a live replica A; once A's lease is gone (Close deletes
// it; a crashed A's lapses after its TTL), B's Sweep or Recover fails them
// with the Recover message, and leaves A's ended tasks alone.
func TestTaskStoreCluster(t *testing.T) {
	srv := testenv.Redis(t)
	ctx := context.Background()
	const msg = "the replica running it stopped"
	setup := func(t *testing.T) (a, b *TaskStore) {
		a, b = twoReplicas(t, srv.URL(), WithLimits(Limits{LeaseTTL: testLeaseTTL}))
		for _, id := range []string{"w", "i", "done"} {
			if err := a.Create(ctx, newTask(id, "alice")); err != nil {
				t.Fatal(err)
			}
		}
		a.Update(ctx, "i", func(r *taskstore.Record) error { r.Status = mcp.TaskInputRequired; return nil })
		a.Update(ctx, "done", func(r *taskstore.Record) error { r.Status = mcp.TaskCompleted; return nil })
		if err := b.Create(ctx, newTask("b", "alice")); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Recover(ctx, msg); n != 1 || err != nil {
			t.Errorf("B's Recover = %d, %v; want 1 (its own task only)", n, err)
		}
		// A's refresher keeps its lease past the TTL it was taken with.
		waitLeaseRenewed(t, a)
		if _, err := b.Sweep(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Recover(ctx, msg); n != 0 || err != nil {
			t.Errorf("B's second Recover = %d, %v; want 0", n, err)
		}
		for _, id := range []string{"w", "i"} {
			if got, err := b.Get(ctx, "alice", id); err != nil || got.Status.Terminal() {
				t.Errorf("A's live task %s after B's Recover and Sweep: %+v, %v", id, got, err)
			}
		}
		return a, b
	}
	checkFailed := func(t *testing.T, b *TaskStore) {
		for id, want := range map[string]mcp.TaskStatus{"w": mcp.TaskFailed, "i": mcp.TaskFailed, "done": mcp.TaskCompleted} {
			got, err := b.Get(ctx, "alice", id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != want || (want == mcp.TaskFailed && got.StatusMessage != msg) {
				t.Errorf("%s: %s %q, want %s", id, got.Status, got.StatusMessage, want)
			}
		}
	}
	t.Run("CloseThenSweep", func(t *testing.T) {
		a, b := setup(t)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Sweep(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		checkFailed(t, b)
	})
	t.Run("CrashThenRecover", func(t *testing.T) {
		a, b := setup(t)
		a.stopRefresh() // as if A died: the lease stays until its TTL
		if n, err := b.Recover(ctx, msg); n != 0 || err != nil {
			t.Errorf("Recover while A's lease lasts = %d, %v; want 0", n, err)
		}
		testwait.WaitFor(t, "A's lease to lapse", func() bool {
			n, _ := do(t, b.c, "EXISTS", a.leaseKey).Int()
			return n == 0
		})
		if n, err := b.Recover(ctx, msg); n != 2 || err != nil {
			t.Errorf("Recover after A's lease lapsed = %d, %v; want 2", n, err)
		}
		checkFailed(t, b)
	})
	t.Run("SameReplicaIDRestart", func(t *testing.T) {
		prefix := freshPrefix()
		old, _ := newTaskStore(t, srv.URL(), prefix, WithReplicaID("pod-0"))
		if err := old.Create(ctx, newTask("w", "alice")); err != nil {
			t.Fatal(err)
		}
		old.stopRefresh() // died; its lease still stands
		restarted, _ := newTaskStore(t, srv.URL(), prefix, WithReplicaID("pod-0"))
		if n, err := restarted.Recover(ctx, msg); n != 1 || err != nil {
			t.Errorf("Recover by the same replica id = %d, %v; want 1", n, err)
		}
	})
}

// testLeaseTTL is the lease of the tests that watch one: the refresher
// renews it every second, two seconds before it would lapse, however busy
// the machine.
const testLeaseTTL = 3 * time.Second

// waitLeaseRenewed waits until s's refresher has renewed its lease: the
// lease's PTTL, which only falls between renewals, goes up. A lease that
// lapses first fails the test.
func waitLeaseRenewed(t *testing.T, s *TaskStore) {
	t.Helper()
	low := int64(math.MaxInt64)
	testwait.WaitFor(t, "the lease to be renewed", func() bool {
		ms, err := do(t, s.c, "PTTL", s.leaseKey).Int64()
		if err != nil || ms < 0 {
			t.Fatalf("the lease lapsed before it was renewed: PTTL %d, %v", ms, err)
		}
		if ms > low {
			return true
		}
		low = ms
		return false
	})
}

// TestTaskStoreLease: the lease key exists with its TTL while the store is
// open and is gone after Close, which also stops the refresher (TestMain's
// goleak) and makes later calls fail with ErrClosed; closing the client
// stops it too; replica ids past MaxNameLen and leases below MinLeaseTTL
// are refused or raised.
func TestTaskStoreLease(t *testing.T) {
	srv := testenv.Redis(t)
	s, c := newTaskStore(t, srv.URL(), freshPrefix(), WithLimits(Limits{LeaseTTL: testLeaseTTL}), WithReplicaID("r1"))
	if s.leaseKey != c.prefix+"replica:r1" {
		t.Errorf("lease key %q", s.leaseKey)
	}
	waitLeaseRenewed(t, s)
	if ms, _ := do(t, c, "PTTL", s.leaseKey).Int64(); ms <= 0 || ms > testLeaseTTL.Milliseconds() {
		t.Errorf("lease PTTL %d ms, want within (0, %d]", ms, testLeaseTTL.Milliseconds())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _ := do(t, c, "EXISTS", s.leaseKey).Int(); n != 0 {
		t.Error("the lease outlived Close")
	}
	if err := s.Create(context.Background(), newTask("x", "a")); err != taskstore.ErrClosed {
		t.Errorf("Create after Close = %v, want ErrClosed", err)
	}
	if _, err := c.TaskStore(WithReplicaID(strings.Repeat("r", MaxNameLen+1))); err == nil {
		t.Error("a replica id past MaxNameLen was accepted")
	}
	if s2, err := c.TaskStore(WithLimits(Limits{LeaseTTL: time.Nanosecond})); err != nil || s2.cfg.leaseTTL != MinLeaseTTL {
		t.Errorf("tiny lease TTL: %v, %v; want MinLeaseTTL", s2.cfg.leaseTTL, err)
	} else {
		s2.Close()
	}
	// A store whose client closes first stops refreshing too.
	c2 := open(t, srv.URL(), WithPrefix(freshPrefix()))
	s3, err := c2.TaskStore()
	if err != nil {
		t.Fatal(err)
	}
	c2.Close()
	testwait.Returns(t, "the refresher stopping with its client", func() { <-s3.done })
}

// TestTaskStoreRoundTrips: after a warm-up (scripts load on first use),
// Get, Create and List are one round trip each, Update two.
func TestTaskStoreRoundTrips(t *testing.T) {
	srv := testenv.Redis(t)
	ctx := context.Background()
	s, c := newTaskStore(t, srv.URL(), freshPrefix())
	rt := countRoundTrips(c)
	s.Create(ctx, newTask("warm", "alice"))
	s.Get(ctx, "alice", "warm")
	s.List(ctx, "alice", "", 10)
	s.Update(ctx, "warm", func(*taskstore.Record) error { return nil })
	for _, op := range []struct {
		what string
		want int64
		f    func() error
	}{
		{"Create", 1, func() error { return s.Create(ctx, newTask("t1", "alice")) }},
		{"Get", 1, func() error { _, err := s.Get(ctx, "alice", "t1"); return err }},
		{"Get of a missing task", 1, func() error { _, err := s.Get(ctx, "alice", "nope"); return ignore(err, taskstore.ErrNotFound) }},
		{"List", 1, func() error { _, err := s.List(ctx, "alice", "", 10); return err }},
		{"Update", 2, func() error {
			_, err := s.Update(ctx, "t1", func(r *taskstore.Record) error { r.StatusMessage = "x"; return nil })
			return err
		}},
	} {
		before := rt.count()
		if err := op.f(); err != nil {
			t.Fatalf("%s: %v", op.what, err)
		}
		if n := rt.count() - before; n != op.want {
			t.Errorf("%s: %d round trips, want %d", op.what, n, op.want)
		}
	}
}

func ignore(err, want error) error {
	if errors.Is(err, want) {
		return nil
	}
	return err
}

// TestTaskStoreRedisDown: while Redis is stopped every operation fails
// within the client's timeout (never hangs); after Start the store works
// again (the restarted Redis holds nothing) and retakes its lease.
func TestTaskStoreRedisDown(t *testing.T) {
	srv := testenv.Redis(t)
	ctx := context.Background()
	s, c := newTaskStore(t, srv.URL(), freshPrefix(), WithLimits(Limits{LeaseTTL: 300 * time.Millisecond}))
	if err := s.Create(ctx, newTask("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	ops := map[string]func() error{
		"Create": func() error { return s.Create(ctx, newTask("t2", "alice")) },
		"Get":    func() error { _, err := s.Get(ctx, "alice", "t1"); return err },
		"Update": func() error {
			_, err := s.Update(ctx, "t1", func(*taskstore.Record) error { return nil })
			return err
		},
		"List":    func() error { _, err := s.List(ctx, "alice", "", 10); return err },
		"Sweep":   func() error { _, err := s.Sweep(ctx, time.Now()); return err },
		"Recover": func() error { _, err := s.Recover(ctx, "x"); return err },
	}
	for what, f := range ops {
		testwait.Returns(t, what+" with Redis down", func() {
			if err := f(); err == nil || errors.Is(err, taskstore.ErrNotFound) {
				t.Errorf("%s with Redis down = %v, want an error", what, err)
			}
		})
	}
	if c.Healthy() {
		t.Error("client healthy with Redis down")
	}
	srv.Start()
	testwait.WaitFor(t, "the store working again", func() bool {
		return s.Create(ctx, newTask("t3", "alice")) == nil
	})
	if got, err := s.Get(ctx, "alice", "t3"); err != nil || got.ID != "t3" {
		t.Errorf("Get after Start = %+v, %v", got, err)
	}
	testwait.WaitFor(t, "the lease retaken", func() bool {
		n, _ := do(t, c, "EXISTS", s.leaseKey).Int()
		return n == 1
	})
}

// TestTaskStoreDamaged: keys of the wrong shape under the prefix give
// errors, never a panic or a wrong record.
func TestTaskStoreDamaged(t *testing.T) {
	srv := testenv.Redis(t)
	ctx := context.Background()
	s, c := newTaskStore(t, srv.URL(), freshPrefix())
	if err := s.Create(ctx, newTask("good", "alice")); err != nil {
		t.Fatal(err)
	}
	do(t, c, "SET", s.taskKey("str"), "not a hash")
	do(t, c, "HSET", s.taskKey("partial"), "o", "alice", "s", "working")
	do(t, c, "HSET", s.taskKey("badnum"), "id", "badnum", "o", "alice", "s", "working", "c", "x", "u", "1", "x", "1", "t", "0", "i", "0", "r", "r", "v", "1")
	do(t, c, "HSET", s.taskKey("badstatus"), "id", "badstatus", "o", "alice", "s", "bogus", "c", nanos19(1), "u", nanos19(1), "x", nanos19(1<<62), "t", "0", "i", "0", "r", "r", "v", "1")
	do(t, c, "HSET", s.taskKey("otherid"), "id", "good", "o", "alice", "s", "working", "c", nanos19(1), "u", nanos19(1), "x", nanos19(1<<62), "t", "0", "i", "0", "r", "r", "v", "1")
	for _, id := range []string{"str", "partial", "badnum", "badstatus", "otherid"} {
		if r, err := s.Get(ctx, "alice", id); err == nil || errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("Get of damaged %s = %+v, %v; want an error", id, r, err)
		}
		if _, err := s.Update(ctx, id, func(*taskstore.Record) error { return nil }); err == nil || errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("Update of damaged %s = %v; want an error", id, err)
		}
	}
	// A damaged task in the owner's index makes List fail.
	do(t, c, "ZADD", s.ownerKey("alice"), "0", ownerMember(1, "badstatus"))
	if _, err := s.List(ctx, "alice", "", 10); err == nil {
		t.Error("List over a damaged task succeeded")
	}
	// The index itself of the wrong type.
	do(t, c, "DEL", s.ownerKey("bob"))
	do(t, c, "SET", s.ownerKey("bob"), "x")
	if _, err := s.List(ctx, "bob", "", 10); err == nil {
		t.Error("List over an index of the wrong type succeeded")
	}
	// Garbage in the all-tasks index is dropped by Sweep.
	do(t, c, "ZADD", s.allKey(), "0", "garbage", "0", "999:short")
	if _, err := s.Sweep(ctx, time.Now()); err != nil {
		t.Errorf("Sweep over garbage index entries: %v", err)
	}
	if got, err := s.Get(ctx, "alice", "good"); err != nil || got.ID != "good" {
		t.Errorf("the good task after all: %+v, %v", got, err)
	}
}

// TestTaskStoreBounds: ids past MaxNameLen, owners past MaxTaskOwnerLen
// and tasks past MaxTaskBytes are refused; Redis holds the key's TTL from
// the task's; a task Redis expired leaves no index entry after Sweep.
func TestTaskStoreBounds(t *testing.T) {
	srv := testenv.Redis(t)
	ctx := context.Background()
	s, c := newTaskStore(t, srv.URL(), freshPrefix())
	if err := s.Create(ctx, newTask(strings.Repeat("x", MaxNameLen+1), "alice")); err == nil {
		t.Error("an id past MaxNameLen was stored")
	}
	if err := s.Create(ctx, newTask("o", strings.Repeat("o", MaxTaskOwnerLen+1))); err == nil {
		t.Error("an owner past MaxTaskOwnerLen was stored")
	}
	big := newTask("big", "alice")
	big.Params = make(json.RawMessage, MaxTaskBytes)
	if err := s.Create(ctx, big); err == nil {
		t.Error("a task past MaxTaskBytes was stored")
	}
	if err := s.Create(ctx, newTask("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "t1", func(r *taskstore.Record) error {
		r.Result = make(json.RawMessage, MaxTaskBytes)
		return nil
	}); err == nil {
		t.Error("an update past MaxTaskBytes was stored")
	}
	if p, _ := s.List(ctx, strings.Repeat("o", MaxTaskOwnerLen+1), "", 10); len(p.Records) != 0 {
		t.Error("List of an over-long owner found tasks")
	}

	short := newTask("short", "alice")
	short.TTL = 200 * time.Millisecond
	if err := s.Create(ctx, short); err != nil {
		t.Fatal(err)
	}
	if ms, _ := do(t, c, "PTTL", s.taskKey("short")).Int64(); ms <= 0 || ms > 201 {
		t.Errorf("PTTL of a 200ms task: %d", ms)
	}
	if ms, _ := do(t, c, "PTTL", s.taskKey("t1")).Int64(); ms != -1 {
		t.Errorf("PTTL of a task without TTL: %d, want -1", ms)
	}
	testwait.WaitFor(t, "Redis expiring the task", func() bool {
		n, _ := do(t, c, "EXISTS", s.taskKey("short")).Int()
		return n == 0
	})
	if n, err := s.Sweep(ctx, time.Now()); n != 1 || err != nil {
		t.Errorf("Sweep after Redis expired the task = %d, %v; want 1", n, err)
	}
	if n, _ := do(t, c, "ZCARD", s.ownerKey("alice")).Int(); n != 1 {
		t.Errorf("alice's index holds %d entries, want 1", n)
	}
	if n, _ := do(t, c, "ZCARD", s.allKey()).Int(); n != 1 {
		t.Errorf("the all-tasks index holds %d entries, want 1", n)
	}
}

// TestTaskStoreSweepBatches: when the store is full, Create deletes at most
// one batch (sweepBatch) of expired tasks to make room; Sweep deletes more
// than a batch, in several round trips, and counts them all.
func TestTaskStoreSweepBatches(t *testing.T) {
	srv := testenv.Redis(t)
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	const n = sweepBatch*2 + 7
	s, c := newTaskStore(t, srv.URL(), freshPrefix(), WithTaskClock(clock), WithLimits(Limits{MaxTasks: n}))
	for i := range n {
		r := newTask(fmt.Sprint(i), "alice")
		r.TTL = time.Hour
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, newTask("full", "alice")); !errors.Is(err, taskstore.ErrFull) {
		t.Fatalf("Create past the bound = %v, want ErrFull", err)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if err := s.Create(ctx, newTask("room", "alice")); err != nil {
		t.Fatalf("Create once tasks expired = %v", err)
	}
	if held, _ := do(t, c, "ZCARD", s.allKey()).Int(); held != n-sweepBatch+1 {
		t.Errorf("after Create's sweep %d tasks held, want %d", held, n-sweepBatch+1)
	}
	if got, err := s.Sweep(ctx, now); got != n-sweepBatch || err != nil {
		t.Errorf("Sweep = %d, %v; want %d", got, err, n-sweepBatch)
	}
	if p, err := s.List(ctx, "alice", "", 10); err != nil || len(p.Records) != 1 || p.Records[0].ID != "room" {
		t.Errorf("List after Sweep = %+v, %v", p, err)
	}
}
