// Package storetest is the behaviour suite of audit.Store, so that the
// stores outside package audit (sqlite's, postgres') are held to one
// contract, and the helpers their own tests share.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/testwait"
)

// Sample returns a record with every caller field set, its Time and
// Duration made from i.
func Sample(i int) *audit.Record {
	return &audit.Record{
		Time:          time.Date(2026, 11, 23, 12, 0, 0, i, time.UTC),
		Duration:      time.Duration(i) * time.Millisecond,
		RequestID:     "1",
		SessionID:     "sess",
		Identity:      "alice",
		Persona:       "analyst",
		Upstream:      "warehouse",
		Tool:          "query_table",
		Method:        "tools/call",
		Arguments:     json.RawMessage(`{"table":"orders"}`),
		Outcome:       audit.OutcomeOK,
		RequestBytes:  120,
		ResponseBytes: 4000,
		ContentBlocks: 2,
		Era:           "2025",
		Transport:     "streamable",
	}
}

// GlobCases are Filter.Tool glob patterns and tool names to try them on,
// for the tests that a store's SQL reads the globs as policy.CompileGlob
// does.
func GlobCases() (patterns, names []string) {
	return []string{
			"*", "?", "a*", "*a", "a?c", "a*c", "*b*", "**", "a**b", "?*?", "query_*", "é?", "?é",
			"file:///etc/*", "%", "_", "%*", "_?", "50%_off*", "a.b", "x y",
		}, []string{
			"", "a", "b", "c", "x", "ab", "abc", "ac", "aXc", "abbc", "query_table", "query_view", "queryXtable",
			"é", "éa", "aé", "ê", "file:///etc/b/c", "%", "_", "%%", "_x", "50%_off now", "50X_off", "a.b", "aXb",
			"x y", "*", "a*b",
		}
}

// Kind makes stores of one kind for Run.
type Kind struct {
	// Open returns a new store on a new, empty database, closed when the
	// test ends.
	Open func(t *testing.T, opts ...audit.Option) audit.Store
	// Reopen returns another store on s's database (s may be closed).
	Reopen func(t *testing.T, s audit.Store, opts ...audit.Option) audit.Store
	// Group returns the group commit s appends through, for the tests of
	// group commit (they hold batches with its hook).
	Group func(s audit.Store) *audit.GroupCommit
}

// Run runs, as subtests of t, the behaviour every audit.Store must have:
// the chain Append builds, group commit, Query's filters, Sweep, Limits,
// the clock, Close. only, when given, names the subtests to run (a store
// that is a view of another runs the ones it can: "Query", "AnyBytes").
func Run(t *testing.T, k Kind, only ...string) {
	tests := []struct {
		name string
		fn   func(*testing.T, Kind)
	}{
		{"AppendSetsChain", testAppendSetsChain},
		{"ConcurrentAppends", testConcurrentAppends},
		{"GroupCommitBatches", testGroupCommitBatches},
		{"FailingBatch", testFailingBatch},
		{"CancelledAppends", testCancelledAppends},
		{"CancelledBatchMember", testCancelledBatchMember},
		{"CloseWithQueuedAppends", testCloseWithQueuedAppends},
		{"SweepKeepsChainVerifiable", testSweepKeepsChainVerifiable},
		{"ReopenContinuesChain", testReopenContinuesChain},
		{"Query", testQuery},
		{"AnyBytes", testAnyBytes},
		{"Limits", testLimits},
		{"Clock", testClock},
	}
	for _, tc := range tests {
		if len(only) > 0 && !slices.Contains(only, tc.name) {
			continue
		}
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, k) })
	}
}

// MustVerify verifies s and fails the test unless the chain holds.
func MustVerify(t testing.TB, s audit.Store) *audit.VerifyReport {
	t.Helper()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("verify: %v", rep.Break)
	}
	return rep
}

// WantBreak verifies s and fails the test unless Verify names a break
// of kind at seq, as it must once the store's rows are edited or deleted
// behind its back.
func WantBreak(t testing.TB, s audit.Store, seq int64, kind audit.BreakKind) {
	t.Helper()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Break.Seq != seq || rep.Break.Kind != kind {
		t.Fatalf("break %v, want %s at %d", rep.Break, kind, seq)
	}
	t.Log(rep.Break)
}

// AppendN appends n records made by Sample, each edited by edit first
// when it is not nil, and returns them as Append sealed them.
func AppendN(t testing.TB, s audit.Store, n int, edit func(int, *audit.Record)) []*audit.Record {
	t.Helper()
	var rs []*audit.Record
	for i := range n {
		r := Sample(i)
		if edit != nil {
			edit(i, r)
		}
		if err := s.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// Collect returns the records of s that f selects.
func Collect(t testing.TB, s audit.Store, f audit.Filter) []*audit.Record {
	t.Helper()
	var rs []*audit.Record
	for r, err := range s.Query(context.Background(), f) {
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// Seqs returns the Seq of each record of rs.
func Seqs(rs []*audit.Record) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r.Seq)
	}
	return out
}

// waitQueued waits until n Appends wait in c's queue.
func waitQueued(t *testing.T, c *audit.GroupCommit, n int) {
	t.Helper()
	testwait.WaitFor(t, fmt.Sprintf("%d appends queued", n), func() bool { return c.Queued() == n })
}

// gate is a test hook that holds the first batch until open is closed and
// records every batch's size.
type gate struct {
	entered chan struct{} // closed when the first batch reaches the hook
	open    chan struct{}
	mu      sync.Mutex
	sizes   []int
}

func newGate() *gate { return &gate{entered: make(chan struct{}), open: make(chan struct{})} }

func (g *gate) hook(_ context.Context, batch []*audit.Record) error {
	g.mu.Lock()
	g.sizes = append(g.sizes, len(batch))
	first := len(g.sizes) == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.open
	}
	return nil
}

// holdFirst makes gc hold its first batch: it sets a gate as gc's hook,
// followed on every batch by then when it is not nil, and starts an Append
// of Sample(i) to s whose error goes to errs. It returns the gate once that
// Append's batch is held; the Appends made after it queue until the gate's
// open is closed.
func holdFirst(s audit.Store, gc *audit.GroupCommit, i int, errs chan<- error, then func(context.Context, []*audit.Record) error) *gate {
	g := newGate()
	gc.SetHook(func(ctx context.Context, batch []*audit.Record) error {
		g.hook(ctx, batch)
		if then == nil {
			return nil
		}
		return then(ctx, batch)
	})
	go func() { errs <- s.Append(context.Background(), Sample(i)) }()
	<-g.entered
	return g
}

func (g *gate) batchSizes() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sizes)
}

func testAppendSetsChain(t *testing.T, k Kind) {
	s := k.Open(t)
	rs := AppendN(t, s, 3, nil)
	for i, r := range rs {
		if r.Seq != int64(i+1) {
			t.Errorf("record %d: seq %d", i, r.Seq)
		}
		if r.Hash != r.ComputeHash() {
			t.Errorf("record %d: hash is not its own", i)
		}
	}
	if rs[0].PrevHash != (audit.Digest{}) || rs[1].PrevHash != rs[0].Hash || rs[2].PrevHash != rs[1].Hash {
		t.Error("records are not linked")
	}
	got := Collect(t, s, audit.Filter{})
	if len(got) != 3 {
		t.Fatalf("%d records", len(got))
	}
	for i := range got {
		a, _ := json.Marshal(rs[i])
		b, _ := json.Marshal(got[i])
		if string(a) != string(b) {
			t.Errorf("stored record differs:\n%s\n%s", a, b)
		}
	}
	rep := MustVerify(t, s)
	if rep.Checked != 3 || rep.Head.Seq != 3 || rep.Head.Hash != rs[2].Hash {
		t.Errorf("report %+v", rep)
	}
	bad := &audit.Record{Outcome: "nope"}
	if err := s.Append(context.Background(), bad); !errors.Is(err, audit.ErrInvalidOutcome) || bad.Seq != 0 {
		t.Errorf("invalid outcome: %v, seq %d", err, bad.Seq)
	}
}

// testConcurrentAppends: 1,000 appends from 50 goroutines, with Verify
// running meanwhile, form one chain: Seq gapless, and every record an
// Append acknowledged is stored as the caller saw it.
func testConcurrentAppends(t *testing.T, k Kind) {
	s := k.Open(t)
	const workers, each = 50, 20
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = map[int64]*audit.Record{}
	)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := Sample(w*each + i)
				r.Identity = fmt.Sprintf("user%d", w)
				if err := s.Append(context.Background(), r); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if got[r.Seq] != nil {
					t.Errorf("seq %d acknowledged twice", r.Seq)
				}
				got[r.Seq] = r
				mu.Unlock()
			}
		})
	}
	// Verify while appending: each sees a consistent snapshot.
	for range 3 {
		MustVerify(t, s)
	}
	wg.Wait()
	stored := Collect(t, s, audit.Filter{})
	if len(stored) != workers*each || len(got) != workers*each {
		t.Fatalf("%d stored, %d acknowledged, want %d", len(stored), len(got), workers*each)
	}
	for i, r := range stored {
		if r.Seq != int64(i+1) {
			t.Fatalf("seq %d at position %d", r.Seq, i)
		}
		if ack := got[r.Seq]; ack == nil || ack.Hash != r.Hash || ack.Identity != r.Identity || ack.Time != r.Time {
			t.Fatalf("seq %d: stored record is not the one acknowledged", r.Seq)
		}
	}
	rep := MustVerify(t, s)
	if rep.Checked != workers*each || rep.Last != workers*each {
		t.Errorf("report %+v", rep)
	}
}

// testGroupCommitBatches: appends that arrive while a commit is under way
// are committed together in the next transaction, at most the batch size
// at a time, in arrival order.
func testGroupCommitBatches(t *testing.T, k Kind) {
	for _, c := range []struct {
		maxBatch, waiting int
		want              []int
	}{
		{0, 20, []int{1, 20}},
		{8, 20, []int{1, 8, 8, 4}},
	} {
		s := k.Open(t, audit.WithLimits(audit.Limits{MaxBatch: c.maxBatch}))
		gc := k.Group(s)
		errs := make(chan error, 1+c.waiting)
		g := holdFirst(s, gc, 0, errs, nil)
		// Queued one at a time, so that the arrival order is known.
		for i := 1; i <= c.waiting; i++ {
			go func() {
				r := Sample(i)
				r.RequestID = fmt.Sprint(i)
				errs <- s.Append(context.Background(), r)
			}()
			waitQueued(t, gc, i)
		}
		close(g.open)
		for range 1 + c.waiting {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if got := g.batchSizes(); !slices.Equal(got, c.want) {
			t.Errorf("max batch %d: batches of %v, want %v", c.maxBatch, got, c.want)
		}
		rs := Collect(t, s, audit.Filter{})
		for i, r := range rs[1:] {
			if r.RequestID != fmt.Sprint(i+1) {
				t.Fatalf("seq %d holds request %s, want %d: not in arrival order", r.Seq, r.RequestID, i+1)
			}
		}
		if rep := MustVerify(t, s); rep.Checked != int64(1+c.waiting) {
			t.Errorf("checked %d", rep.Checked)
		}
	}
}

// testFailingBatch: a batch that fails before it commits fails every one of
// its Appends, stores none of its records and leaves the chain valid; the
// next batch continues the chain where it was.
func testFailingBatch(t *testing.T, k Kind) {
	s := k.Open(t)
	AppendN(t, s, 2, nil)
	gc := k.Group(s)
	disk := errors.New("disk on fire")
	errs := make(chan error, 6)
	g := holdFirst(s, gc, 2, errs, func(_ context.Context, batch []*audit.Record) error {
		if batch[0].Identity == "doomed" {
			return disk
		}
		return nil
	})
	recs := make([]*audit.Record, 5)
	for i := range recs {
		recs[i] = Sample(10 + i)
		recs[i].Identity = "doomed"
		go func() { errs <- s.Append(context.Background(), recs[i]) }()
		waitQueued(t, gc, i+1)
	}
	close(g.open)
	var ok, bad int
	for range 6 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, disk):
			bad++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 || bad != 5 {
		t.Fatalf("%d appends succeeded, %d failed; want 1 and 5", ok, bad)
	}
	for _, r := range recs {
		if r.Seq != 0 {
			t.Errorf("failed append left seq %d on the caller's record", r.Seq)
		}
	}
	if rs := Collect(t, s, audit.Filter{Identity: "doomed"}); len(rs) != 0 {
		t.Errorf("failed batch stored seq %v", Seqs(rs))
	}
	rep := MustVerify(t, s)
	if rep.Checked != 3 || rep.Head.Seq != 3 {
		t.Errorf("report %+v", rep)
	}
	gc.SetHook(nil)
	if rs := AppendN(t, s, 1, nil); rs[0].Seq != 4 || rs[0].PrevHash != rep.Head.Hash {
		t.Errorf("after the failed batch: seq %d", rs[0].Seq)
	}
	MustVerify(t, s)
}

// testCancelledAppends: an Append whose context is done while it waits
// returns the context's error and its record is not stored, whether it was
// still queued or in a batch under way; the chain stays valid.
func testCancelledAppends(t *testing.T, k Kind) {
	s := k.Open(t)
	gc := k.Group(s)
	inflight, cancelInflight := context.WithCancel(context.Background())
	entered := make(chan struct{})
	gc.SetHook(func(ctx context.Context, batch []*audit.Record) error {
		if batch[0].Identity != "inflight" {
			return nil
		}
		close(entered)
		<-ctx.Done() // the batch's context is done once its only record's is
		return ctx.Err()
	})
	errs := make(chan error, 6)
	go func() {
		r := Sample(0)
		r.Identity = "inflight"
		errs <- s.Append(inflight, r)
	}()
	<-entered
	queued, cancelQueued := context.WithCancel(context.Background())
	for i := range 5 {
		go func() {
			r := Sample(i + 1)
			r.Identity = "queued"
			errs <- s.Append(queued, r)
		}()
	}
	waitQueued(t, gc, 5)
	cancelQueued()
	for range 5 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("queued append: %v, want context.Canceled", err)
		}
	}
	if n := gc.Queued(); n != 0 {
		t.Errorf("%d cancelled appends still queued", n)
	}
	cancelInflight()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("append in a cancelled batch: %v", err)
	}
	if rs := Collect(t, s, audit.Filter{}); len(rs) != 0 {
		t.Errorf("cancelled appends stored seq %v", Seqs(rs))
	}
	MustVerify(t, s)
	rs := AppendN(t, s, 2, nil)
	if rs[0].Seq != 1 || rs[1].Seq != 2 {
		t.Errorf("after cancellations: seq %d, %d", rs[0].Seq, rs[1].Seq)
	}
	MustVerify(t, s)
}

// testCancelledBatchMember: one Append giving up while its batch is under
// way does not fail the batch: both its record and the other's are
// committed, and both Appends say so.
func testCancelledBatchMember(t *testing.T, k Kind) {
	s := k.Open(t)
	gc := k.Group(s)
	second := make(chan struct{})
	release := make(chan struct{})
	errs := make(chan error, 3)
	g := holdFirst(s, gc, 0, errs, func(ctx context.Context, batch []*audit.Record) error {
		if len(batch) == 2 {
			close(second)
			<-release
			return ctx.Err()
		}
		return nil
	})
	quitter, quit := context.WithCancel(context.Background())
	defer quit()
	a, b := Sample(1), Sample(2)
	go func() { errs <- s.Append(quitter, a) }()
	waitQueued(t, gc, 1)
	go func() { errs <- s.Append(context.Background(), b) }()
	waitQueued(t, gc, 2)
	close(g.open)
	<-second
	quit()
	close(release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("append: %v", err)
		}
	}
	if a.Seq != 2 || b.Seq != 3 {
		t.Errorf("seq %d and %d, want 2 and 3", a.Seq, b.Seq)
	}
	if rep := MustVerify(t, s); rep.Checked != 3 {
		t.Errorf("checked %d", rep.Checked)
	}
}

// testCloseWithQueuedAppends: Close lets the batch under way commit and
// fails the Appends still queued with audit.ErrClosed; every method fails with
// audit.ErrClosed afterwards, and the database holds a valid chain of exactly
// the acknowledged records.
func testCloseWithQueuedAppends(t *testing.T, k Kind) {
	s := k.Open(t)
	AppendN(t, s, 2, nil)
	gc := k.Group(s)
	first := make(chan error, 1)
	g := holdFirst(s, gc, 2, first, nil)
	queued := make(chan error, 4)
	for i := range 4 {
		go func() { queued <- s.Append(context.Background(), Sample(3+i)) }()
	}
	waitQueued(t, gc, 4)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	testwait.WaitFor(t, "the group commit closed", gc.Closed)
	close(g.open)
	if err := <-first; err != nil {
		t.Errorf("the batch under way: %v", err)
	}
	for range 4 {
		if err := <-queued; !errors.Is(err, audit.ErrClosed) {
			t.Errorf("queued append: %v, want ErrClosed", err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Append(ctx, Sample(9)); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
	if _, err := s.Verify(ctx); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("verify after close: %v", err)
	}
	if _, err := s.Sweep(ctx, time.Now()); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("sweep after close: %v", err)
	}
	for _, err := range s.Query(ctx, audit.Filter{}) {
		if !errors.Is(err, audit.ErrClosed) {
			t.Errorf("query after close: %v", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	s2 := k.Reopen(t, s)
	if rep := MustVerify(t, s2); rep.Checked != 3 {
		t.Errorf("after close: %d records, want 3", rep.Checked)
	}
}

func testSweepKeepsChainVerifiable(t *testing.T, k Kind) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := k.Open(t)
	// Records 1-10 on days 0-9; record 4 arrives late (day 8), so the sweep
	// of "older than day 6" stops before it.
	AppendN(t, s, 10, func(i int, r *audit.Record) {
		r.Time = t0.Add(time.Duration(i) * 24 * time.Hour)
		if i == 3 {
			r.Time = t0.Add(8 * 24 * time.Hour)
		}
	})
	n, err := s.Sweep(context.Background(), t0.Add(6*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("swept %d, want 3 (seq 1-3; seq 4 is newer)", n)
	}
	rep := MustVerify(t, s)
	if rep.Anchor.Seq != 3 || rep.First != 4 || rep.Checked != 7 {
		t.Errorf("report %+v", rep)
	}
	if n, _ := s.Sweep(context.Background(), t0); n != 0 {
		t.Errorf("second sweep deleted %d", n)
	}
	// Appends go on after a sweep, and a full sweep leaves an empty,
	// verifiable chain that still continues.
	AppendN(t, s, 2, nil)
	n, err = s.Sweep(context.Background(), t0.Add(365*24*time.Hour))
	if err != nil || n != 9 {
		t.Fatalf("full sweep: %d, %v", n, err)
	}
	rep = MustVerify(t, s)
	if rep.Checked != 0 || rep.Anchor != rep.Head || rep.Head.Seq != 12 {
		t.Errorf("after full sweep: %+v", rep)
	}
	rs := AppendN(t, s, 1, nil)
	if rs[0].Seq != 13 || rs[0].PrevHash != rep.Head.Hash {
		t.Errorf("append after full sweep: seq %d", rs[0].Seq)
	}
	MustVerify(t, s)
}

func testReopenContinuesChain(t *testing.T, k Kind) {
	s := k.Open(t)
	first := AppendN(t, s, 5, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := k.Reopen(t, s)
	more := AppendN(t, s2, 3, nil)
	if more[0].Seq != 6 || more[0].PrevHash != first[4].Hash {
		t.Fatalf("reopened chain: seq %d", more[0].Seq)
	}
	if rep := MustVerify(t, s2); rep.Checked != 8 {
		t.Errorf("checked %d", rep.Checked)
	}
}

func testQuery(t *testing.T, k Kind) {
	s := k.Open(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tools := []string{"query_table", "query_view", "list_tables", "file:///etc/a", "file:///etc/b/c", "50%_off", "50x_off"}
	AppendN(t, s, 21, func(i int, r *audit.Record) {
		r.Time = t0.Add(time.Duration(i) * time.Minute)
		r.Identity = []string{"alice", "bob"}[i%2]
		r.Tool = tools[i%len(tools)]
		r.Outcome = audit.Outcomes()[i%3]
	})
	cases := []struct {
		name string
		f    audit.Filter
		want []int64
	}{
		{"all", audit.Filter{Limit: 3}, []int64{1, 2, 3}},
		{"paging", audit.Filter{AfterSeq: 18}, []int64{19, 20, 21}},
		{"time", audit.Filter{Since: t0.Add(5 * time.Minute), Until: t0.Add(8 * time.Minute)}, []int64{6, 7, 8}},
		{"identity", audit.Filter{Identity: "bob", Limit: 4}, []int64{2, 4, 6, 8}},
		{"tool exact", audit.Filter{Tool: "query_table"}, []int64{1, 8, 15}},
		{"tool glob", audit.Filter{Tool: "query_*", Limit: 4}, []int64{1, 2, 8, 9}},
		{"glob spans slash", audit.Filter{Tool: "file:///etc/*", Limit: 2}, []int64{4, 5}},
		{"glob one char inside", audit.Filter{Tool: "query_v?ew"}, []int64{2, 9, 16}},
		{"a name with reserved characters is a name", audit.Filter{Tool: "query_[v]iew"}, nil},
		{"glob one char", audit.Filter{Tool: "?ist_tables"}, []int64{3, 10, 17}},
		{"like wildcards are literal", audit.Filter{Tool: "50%_*"}, []int64{6, 13, 20}},
		{"exact is not a prefix", audit.Filter{Tool: "query"}, nil},
		{"outcome", audit.Filter{Outcome: audit.OutcomeProtocolError, Limit: 3}, []int64{3, 6, 9}},
		{"combined", audit.Filter{Identity: "alice", Outcome: audit.OutcomeOK, Tool: "query_*"}, []int64{1}},
		{"combined 2", audit.Filter{Identity: "bob", Outcome: audit.OutcomeToolError, Tool: "*_*"}, []int64{2, 8, 14, 20}},
		{"none", audit.Filter{Identity: "carol"}, nil},
	}
	for _, c := range cases {
		if got := Seqs(Collect(t, s, c.f)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A glob with a character the personas' globs reserve fails the query.
	for _, err := range s.Query(context.Background(), audit.Filter{Tool: "query_[^v]*"}) {
		if err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("glob with a set: %v, want a refusal", err)
		}
		break
	}
	// Breaking out of the loop early releases the connection.
	for range 20 {
		for range s.Query(context.Background(), audit.Filter{}) {
			break
		}
	}
	AppendN(t, s, 1, nil)
	// A cancelled context yields an error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var gotErr error
	for _, err := range s.Query(ctx, audit.Filter{}) {
		gotErr = err
	}
	if gotErr == nil {
		t.Error("cancelled query: no error")
	}
}

// testAnyBytes: text fields hold any bytes (NUL, invalid UTF-8), stored and
// read back exactly, so the chain verifies and filters match them.
func testAnyBytes(t *testing.T, k Kind) {
	s := k.Open(t)
	odd := "a\x00b\xff\xfe" + strings.Repeat("é", 3)
	rs := AppendN(t, s, 2, func(i int, r *audit.Record) {
		r.Identity, r.Tool, r.Error, r.Method = odd, "t\xff\xfe"+fmt.Sprint(i), odd, "m\x00"
	})
	got := Collect(t, s, audit.Filter{Identity: odd})
	if len(got) != 2 || got[0].Identity != odd || got[1].Tool != "t\xff\xfe1" || got[0].Error != odd || got[0].Hash != rs[0].Hash {
		t.Fatalf("records read back differ: %+v", got)
	}
	if got := Collect(t, s, audit.Filter{Tool: "t*1"}); len(got) != 1 || got[0].Seq != 2 {
		t.Errorf("glob over odd bytes: %v", Seqs(got))
	}
	MustVerify(t, s)
}

func testLimits(t *testing.T, k Kind) {
	s := k.Open(t, audit.WithLimits(audit.Limits{MaxArgumentsBytes: 64, MaxErrorBytes: 16}))
	rs := AppendN(t, s, 1, func(_ int, r *audit.Record) {
		r.Arguments = json.RawMessage(`{"q":"` + strings.Repeat("0123456789", 6) + `"}`) // 68 bytes
		r.Error = "a very long error text indeed"
	})
	got := Collect(t, s, audit.Filter{})[0]
	if string(got.Arguments) != `"[arguments truncated: 68 bytes]"` || len(got.Error) > 16 {
		t.Errorf("stored %s / %q", got.Arguments, got.Error)
	}
	if got.Hash != rs[0].Hash {
		t.Error("caller's record and stored record differ")
	}
	MustVerify(t, s)
}

func testClock(t *testing.T, k Kind) {
	at := time.Date(2030, 5, 6, 7, 8, 9, 10, time.UTC)
	s := k.Open(t, nil, audit.WithClock(func() time.Time { return at }))
	rs := AppendN(t, s, 1, func(_ int, r *audit.Record) { r.Time = time.Time{} })
	if !rs[0].Time.Equal(at) {
		t.Errorf("time %v", rs[0].Time)
	}
	if got := Collect(t, s, audit.Filter{}); !got[0].Time.Equal(at) {
		t.Errorf("stored time %v", got[0].Time)
	}
}

// Key returns a key of audit.KeySize bytes, all b: two calls with one b
// make the same key, as two replicas sharing a key file would hold.
func Key(t testing.TB, b byte) *audit.Key {
	t.Helper()
	k, err := audit.NewKey(bytes.Repeat([]byte{b}, audit.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// BenchAppend measures a synchronous Append to the stores open makes: by
// one caller at a time (each append its own commit) and by many at once
// (group commit; recs/commit says how many records a transaction carried
// on average, counted through group's hook).
func BenchAppend(b *testing.B, group func(audit.Store) *audit.GroupCommit, open func(*testing.B) audit.Store) {
	run := func(b *testing.B, parallel bool) {
		s := open(b)
		var commits atomic.Int64
		group(s).SetHook(func(context.Context, []*audit.Record) error { commits.Add(1); return nil })
		ctx := context.Background()
		var seq atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		if parallel {
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Append(ctx, Sample(int(seq.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		} else {
			for i := 0; i < b.N; i++ {
				if err := s.Append(ctx, Sample(i)); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StopTimer()
		if n := commits.Load(); n > 0 {
			b.ReportMetric(float64(b.N)/float64(n), "recs/commit")
		}
	}
	b.Run("serial", func(b *testing.B) { run(b, false) })
	b.Run("parallel", func(b *testing.B) { run(b, true) })
}
