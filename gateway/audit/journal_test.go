package audit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func countRecords(t *testing.T, s Store) int {
	t.Helper()
	n := 0
	for _, err := range s.Query(context.Background(), Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// TestJournalReadsItsOwnAppends: without fsync, what Append acknowledged is
// what Query and Verify see at once, the journal empties once its records
// are stored, and a reopened store continues the chain.
func TestJournalReadsItsOwnAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	s, err := OpenSQLite(path, WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := s.Append(context.Background(), sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := countRecords(t, s); n != 100 {
		t.Fatalf("Query after 100 appends saw %d", n)
	}
	if rep := mustVerify(t, s); rep.Checked != 100 || rep.Head.Seq != 100 {
		t.Errorf("verify: %+v", rep)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + "-journal.jsonl"); err != nil || st.Size() != 0 {
		t.Fatalf("the journal after a clean close: %v %v", st, err)
	}
	s, err = OpenSQLite(path, WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := sample(100)
	if err := s.Append(context.Background(), r); err != nil || r.Seq != 101 {
		t.Fatalf("append after reopening: seq %d, %v", r.Seq, err)
	}
	mustVerify(t, s)
}

// TestJournalOwnerIsTheOnlyWriter: a second process (here, store) opening
// the same trail while the first appends is read-only: it reads and
// verifies, and its appends fail instead of forking the chain.
func TestJournalOwnerIsTheOnlyWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	owner, err := OpenSQLite(path, WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	for i := range 3 {
		if err := owner.Append(context.Background(), sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	mustVerify(t, owner) // stored
	for _, fsync := range []bool{false, true} {
		other, err := OpenSQLite(path, WithFsync(fsync))
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Append(context.Background(), sample(9)); !errors.Is(err, ErrReadOnly) {
			t.Errorf("fsync %v: append beside the journal's owner: %v", fsync, err)
		}
		if _, err := other.Sweep(context.Background(), time.Now()); !errors.Is(err, ErrReadOnly) {
			t.Errorf("fsync %v: sweep beside the journal's owner: %v", fsync, err)
		}
		if n := countRecords(t, other); n != 3 {
			t.Errorf("fsync %v: the reader sees %d records", fsync, n)
		}
		mustVerify(t, other)
		other.Close()
	}
}

// TestJournalRecoversAfterATornWrite: records journaled but not stored
// when the process died are stored by the next open, up to a torn last
// line (a write the process died in, never acknowledged), which is dropped.
func TestJournalRecoversAfterATornWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.db")
	s, err := OpenSQLite(path, WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := s.Append(context.Background(), sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	mustVerify(t, s)
	s.Close()

	// A journal as a killed process leaves it: the last stored record
	// (which must be skipped), two records after it, then half a line.
	var lines []byte
	var head Anchor
	{
		s, _ := OpenSQLite(path)
		for r, err := range s.Query(context.Background(), Filter{AfterSeq: 4}) {
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, jline(t, r)...)
			head = Anchor{Seq: r.Seq, Hash: r.Hash}
		}
		s.Close()
	}
	for i := range 2 {
		r := sample(10 + i)
		if err := (Limits{}).Prepare(r, time.Now()); err != nil {
			t.Fatal(err)
		}
		Seal(r, head)
		head = Anchor{Seq: r.Seq, Hash: r.Hash}
		lines = append(lines, jline(t, r)...)
	}
	torn := sample(20)
	Seal(torn, head)
	tl := jline(t, torn)
	lines = append(lines, tl[:len(tl)/2]...)
	if err := os.WriteFile(path+"-journal.jsonl", lines, 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = OpenSQLite(path) // with fsync: the journal is emptied all the same
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep := mustVerify(t, s)
	if rep.Head.Seq != 7 || rep.Checked != 7 {
		t.Errorf("after recovery: %+v, want 7 records", rep)
	}
	if st, err := os.Stat(path + "-journal.jsonl"); err != nil || st.Size() != 0 {
		t.Errorf("the journal after recovery: %v %v", st, err)
	}
}

// jline is r as the journal holds it.
func jline(t *testing.T, r *Record) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
