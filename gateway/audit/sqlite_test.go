package audit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTest(t testing.TB, opts ...Option) (*SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit", "audit.db")
	s, err := OpenSQLite(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// rawDB opens the file behind the store's back, as someone editing it by
// hand would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustVerify(t *testing.T, s Store) *VerifyReport {
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

func appendN(t *testing.T, s Store, n int, edit func(int, *Record)) []*Record {
	t.Helper()
	var rs []*Record
	for i := range n {
		r := sample(i)
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

func collect(t *testing.T, s Store, f Filter) []*Record {
	t.Helper()
	var rs []*Record
	for r, err := range s.Query(context.Background(), f) {
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

func TestSQLiteFileModes(t *testing.T) {
	s, path := openTest(t)
	appendN(t, s, 1, nil)
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	if _, err := OpenSQLite("file:x.db"); err == nil {
		t.Error("file: URI accepted")
	}
}

func TestSQLiteAppendSetsChain(t *testing.T) {
	s, _ := openTest(t)
	rs := appendN(t, s, 3, nil)
	for i, r := range rs {
		if r.Seq != int64(i+1) {
			t.Errorf("record %d: seq %d", i, r.Seq)
		}
		if r.Hash != r.ComputeHash() {
			t.Errorf("record %d: hash is not its own", i)
		}
	}
	if rs[0].PrevHash != Genesis || rs[1].PrevHash != rs[0].Hash || rs[2].PrevHash != rs[1].Hash {
		t.Error("records are not linked")
	}
	got := collect(t, s, Filter{})
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
	rep := mustVerify(t, s)
	if rep.Checked != 3 || rep.Head.Seq != 3 {
		t.Errorf("report %+v", rep)
	}
	if err := s.Append(context.Background(), &Record{Outcome: "nope"}); err == nil {
		t.Error("invalid outcome appended")
	}
}

// TestSQLiteConcurrentAppends: 1,000 appends from 50 goroutines form one
// chain with no gaps and no duplicate seq, and it verifies.
func TestSQLiteConcurrentAppends(t *testing.T) {
	s, _ := openTest(t)
	const workers, each = 50, 20
	var wg sync.WaitGroup
	seqs := make(chan int64, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := sample(w*each + i)
				r.Identity = fmt.Sprintf("user%d", w)
				if err := s.Append(context.Background(), r); err != nil {
					t.Error(err)
					return
				}
				seqs <- r.Seq
			}
		})
	}
	// Verify while appending: each sees a consistent snapshot.
	for range 3 {
		mustVerify(t, s)
	}
	wg.Wait()
	close(seqs)
	var got []int64
	for q := range seqs {
		got = append(got, q)
	}
	slices.Sort(got)
	for i, q := range got {
		if q != int64(i+1) {
			t.Fatalf("seq %d at position %d", q, i)
		}
	}
	rep := mustVerify(t, s)
	if rep.Checked != workers*each || rep.Last != workers*each {
		t.Errorf("report %+v", rep)
	}
}

func TestSQLiteVerifyNamesEditedRow(t *testing.T) {
	s, path := openTest(t)
	appendN(t, s, 10, nil)
	db := rawDB(t, path)
	if _, err := db.Exec(`UPDATE audit SET identity = 'mallory' WHERE seq = 6`); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Break.Seq != 6 || rep.Break.Kind != BreakEdited {
		t.Fatalf("report %+v, break %v", rep, rep.Break)
	}
	t.Log(rep.Break)

	// Editing any column is caught, the arguments and the outcome too.
	for _, set := range []string{`arguments = '{"table":"salaries"}'`, `outcome = 'denied'`, `time_ns = time_ns + 1`, `hash = zeroblob(32)`} {
		s2, path2 := openTest(t)
		appendN(t, s2, 3, nil)
		if _, err := rawDB(t, path2).Exec(`UPDATE audit SET ` + set + ` WHERE seq = 2`); err != nil {
			t.Fatal(err)
		}
		rep, err := s2.Verify(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK || rep.Break.Seq != 2 || rep.Break.Kind != BreakEdited {
			t.Errorf("%s: break %v", set, rep.Break)
		}
	}
	// A hash of the wrong size is reported, not an error.
	s3, path3 := openTest(t)
	appendN(t, s3, 3, nil)
	rawDB(t, path3).Exec(`UPDATE audit SET prev_hash = x'00' WHERE seq = 3`)
	if rep, err := s3.Verify(context.Background()); err != nil || rep.OK || rep.Break.Seq != 3 || rep.Break.Kind != BreakInvalid {
		t.Errorf("short hash: %v %+v", err, rep)
	}
}

func TestSQLiteVerifyNamesDeletedRows(t *testing.T) {
	s, path := openTest(t)
	appendN(t, s, 10, nil)
	db := rawDB(t, path)
	if _, err := db.Exec(`DELETE FROM audit WHERE seq IN (4, 5)`); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Break.Seq != 4 || rep.Break.Kind != BreakMissing {
		t.Fatalf("break %v", rep.Break)
	}
	t.Log(rep.Break)

	// Deleting the newest record leaves no gap; the head catches it.
	s2, path2 := openTest(t)
	appendN(t, s2, 5, nil)
	rawDB(t, path2).Exec(`DELETE FROM audit WHERE seq = 5`)
	rep, err = s2.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Break.Seq != 5 || rep.Break.Kind != BreakMissing {
		t.Fatalf("tail delete: break %v", rep.Break)
	}
}

func TestSQLiteSweepKeepsChainVerifiable(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, _ := openTest(t)
	// Records 1-10 on days 0-9; record 4 arrives late (day 8), so the sweep
	// of "older than day 6" stops before it.
	appendN(t, s, 10, func(i int, r *Record) {
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
	rep := mustVerify(t, s)
	if rep.Anchor.Seq != 3 || rep.First != 4 || rep.Checked != 7 {
		t.Errorf("report %+v", rep)
	}
	if n, _ := s.Sweep(context.Background(), t0); n != 0 {
		t.Errorf("second sweep deleted %d", n)
	}
	// Appends go on after a sweep, and a full sweep leaves an empty,
	// verifiable chain that still continues.
	appendN(t, s, 2, nil)
	n, err = s.Sweep(context.Background(), t0.Add(365*24*time.Hour))
	if err != nil || n != 9 {
		t.Fatalf("full sweep: %d, %v", n, err)
	}
	rep = mustVerify(t, s)
	if rep.Checked != 0 || rep.Anchor != rep.Head || rep.Head.Seq != 12 {
		t.Errorf("after full sweep: %+v", rep)
	}
	rs := appendN(t, s, 1, nil)
	if rs[0].Seq != 13 || rs[0].PrevHash != rep.Head.Hash {
		t.Errorf("append after full sweep: seq %d", rs[0].Seq)
	}
	mustVerify(t, s)
}

func TestSQLiteSweepThenTamper(t *testing.T) {
	s, path := openTest(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	appendN(t, s, 6, func(i int, r *Record) { r.Time = t0.Add(time.Duration(i) * time.Hour) })
	if _, err := s.Sweep(context.Background(), t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Deleting the oldest remaining record is still caught.
	rawDB(t, path).Exec(`DELETE FROM audit WHERE seq = 4`)
	rep, _ := s.Verify(context.Background())
	if rep.OK || rep.Break.Seq != 4 || rep.Break.Kind != BreakMissing {
		t.Fatalf("break %v", rep.Break)
	}
}

func TestSQLiteReopenContinuesChain(t *testing.T) {
	s, path := openTest(t)
	first := appendN(t, s, 5, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s.Append(context.Background(), sample(0)); !errors.Is(err, ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
	if _, err := s.Verify(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("verify after close: %v", err)
	}
	more := appendN(t, s2, 3, nil)
	if more[0].Seq != 6 || more[0].PrevHash != first[4].Hash {
		t.Fatalf("reopened chain: seq %d", more[0].Seq)
	}
	rep := mustVerify(t, s2)
	if rep.Checked != 8 {
		t.Errorf("checked %d", rep.Checked)
	}
}

func TestSQLiteQuery(t *testing.T) {
	s, _ := openTest(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tools := []string{"query_table", "query_view", "list_tables", "file:///etc/a", "file:///etc/b/c"}
	appendN(t, s, 20, func(i int, r *Record) {
		r.Time = t0.Add(time.Duration(i) * time.Minute)
		r.Identity = []string{"alice", "bob"}[i%2]
		r.Tool = tools[i%len(tools)]
		r.Outcome = Outcomes[i%3]
	})
	seqs := func(rs []*Record) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, r.Seq)
		}
		return out
	}
	cases := []struct {
		name string
		f    Filter
		want []int64
	}{
		{"all", Filter{Limit: 3}, []int64{1, 2, 3}},
		{"paging", Filter{AfterSeq: 17}, []int64{18, 19, 20}},
		{"time", Filter{Since: t0.Add(5 * time.Minute), Until: t0.Add(8 * time.Minute)}, []int64{6, 7, 8}},
		{"identity", Filter{Identity: "bob", Limit: 4}, []int64{2, 4, 6, 8}},
		{"tool exact", Filter{Tool: "query_table"}, []int64{1, 6, 11, 16}},
		{"tool glob", Filter{Tool: "query_*", Limit: 4}, []int64{1, 2, 6, 7}},
		{"glob spans slash", Filter{Tool: "file:///etc/*", Limit: 2}, []int64{4, 5}},
		{"glob class", Filter{Tool: "query_[v]iew"}, []int64{2, 7, 12, 17}},
		{"exact is not a prefix", Filter{Tool: "query"}, nil},
		{"outcome", Filter{Outcome: OutcomeProtocolError, Limit: 3}, []int64{3, 6, 9}},
		{"combined", Filter{Identity: "alice", Outcome: OutcomeOK, Tool: "query_*"}, []int64{1, 7}},
		{"none", Filter{Identity: "carol"}, nil},
	}
	for _, c := range cases {
		if got := seqs(collect(t, s, c.f)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Breaking out of the loop early releases the connection.
	for range 20 {
		for range s.Query(context.Background(), Filter{}) {
			break
		}
	}
	// A cancelled context yields an error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var gotErr error
	for _, err := range s.Query(ctx, Filter{}) {
		gotErr = err
	}
	if gotErr == nil {
		t.Error("cancelled query: no error")
	}
}

func TestSQLiteLimits(t *testing.T) {
	s, _ := openTest(t, WithLimits(Limits{MaxArgumentsBytes: 64, MaxErrorBytes: 16}))
	rs := appendN(t, s, 1, func(_ int, r *Record) {
		r.Arguments = json.RawMessage(`{"q":"` + strings.Repeat("0123456789", 6) + `"}`) // 68 bytes
		r.Error = "a very long error text indeed"
	})
	got := collect(t, s, Filter{})[0]
	if string(got.Arguments) != `"[arguments truncated: 68 bytes]"` || len(got.Error) > 16 {
		t.Errorf("stored %s / %q", got.Arguments, got.Error)
	}
	if got.Hash != rs[0].Hash {
		t.Error("caller's record and stored record differ")
	}
	mustVerify(t, s)
}

func TestSQLiteClock(t *testing.T) {
	at := time.Date(2030, 5, 6, 7, 8, 9, 10, time.UTC)
	s, _ := openTest(t, WithClock(func() time.Time { return at }))
	rs := appendN(t, s, 1, func(_ int, r *Record) { r.Time = time.Time{} })
	if !rs[0].Time.Equal(at) {
		t.Errorf("time %v", rs[0].Time)
	}
}

// BenchmarkSQLiteAppend measures one synchronous append: a BEGIN IMMEDIATE
// transaction and a synced WAL commit (synchronous=FULL).
func BenchmarkSQLiteAppend(b *testing.B) {
	s, _ := openTest(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := sample(i)
		i++
		if err := s.Append(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}
