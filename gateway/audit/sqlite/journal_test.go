package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
)

func countRecords(t *testing.T, s audit.Store) int {
	t.Helper()
	return len(storetest.Collect(t, s, audit.Filter{}))
}

// TestJournalReadsItsOwnAppends: without fsync, what Append acknowledged is
// what Query and Verify see at once, the journal empties once its records
// are stored, and a reopened store continues the chain.
func TestJournalReadsItsOwnAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	s := openAt(t, path, audit.WithFsync(false))
	storetest.AppendN(t, s, 100, nil)
	if n := countRecords(t, s); n != 100 {
		t.Fatalf("Query after 100 appends saw %d", n)
	}
	if rep := storetest.MustVerify(t, s); rep.Checked != 100 || rep.Head.Seq != 100 {
		t.Errorf("verify: %+v", rep)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + audit.JournalSuffix); err != nil || st.Size() != 0 {
		t.Fatalf("the journal after a clean close: %v %v", st, err)
	}
	s = openAt(t, path, audit.WithFsync(false))
	r := storetest.Sample(100)
	if err := s.Append(context.Background(), r); err != nil || r.Seq != 101 {
		t.Fatalf("append after reopening: seq %d, %v", r.Seq, err)
	}
	storetest.MustVerify(t, s)
}

// TestJournalOwnerIsTheOnlyWriter: a second process (here, store) opening
// the same trail while the first appends is read-only: it reads and
// verifies, and its appends fail instead of forking the chain.
func TestJournalOwnerIsTheOnlyWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	owner := openAt(t, path, audit.WithFsync(false))
	for i := range 3 {
		if err := owner.Append(context.Background(), storetest.Sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	storetest.MustVerify(t, owner) // stored
	for _, fsync := range []bool{false, true} {
		other, err := Open(path, audit.WithFsync(fsync))
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Append(context.Background(), storetest.Sample(9)); !errors.Is(err, ErrReadOnly) {
			t.Errorf("fsync %v: append beside the journal's owner: %v", fsync, err)
		}
		if _, err := other.Sweep(context.Background(), time.Now()); !errors.Is(err, ErrReadOnly) {
			t.Errorf("fsync %v: sweep beside the journal's owner: %v", fsync, err)
		}
		if n := countRecords(t, other); n != 3 {
			t.Errorf("fsync %v: the reader sees %d records", fsync, n)
		}
		storetest.MustVerify(t, other)
		other.Close()
	}
}

// TestJournalRecoversAfterATornWrite: records journaled but not stored
// when the process died are stored by the next open, up to a torn last
// line (a write the process died in, never acknowledged), which is dropped.
func TestJournalRecoversAfterATornWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.db")
	s := openAt(t, path, audit.WithFsync(false))
	storetest.AppendN(t, s, 5, nil)
	storetest.MustVerify(t, s)
	s.Close()

	// A journal as a killed process leaves it: the last stored record
	// (which must be skipped), two records after it, then half a line.
	var lines []byte
	var head audit.Anchor
	{
		s, _ := Open(path)
		for _, r := range storetest.Collect(t, s, audit.Filter{AfterSeq: 4}) {
			lines = audit.AppendJournalEntry(lines, r, audit.Anchor{Seq: r.Seq - 1, Hash: r.PrevHash}, nil)
			head = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
		}
		s.Close()
	}
	for i := range 2 {
		r := storetest.Sample(10 + i)
		if err := (audit.Limits{}).Prepare(r, time.Now()); err != nil {
			t.Fatal(err)
		}
		lines = audit.AppendJournalEntry(lines, r, head, nil)
		head = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
	}
	tl := audit.AppendJournalEntry(nil, storetest.Sample(20), head, nil)
	lines = append(lines, tl[:len(tl)/2]...)
	if err := os.WriteFile(path+audit.JournalSuffix, lines, 0o600); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, path) // with fsync: the journal is emptied all the same
	rep := storetest.MustVerify(t, s)
	if rep.Head.Seq != 7 || rep.Checked != 7 {
		t.Errorf("after recovery: %+v, want 7 records", rep)
	}
	if st, err := os.Stat(path + audit.JournalSuffix); err != nil || st.Size() != 0 {
		t.Errorf("the journal after recovery: %v %v", st, err)
	}
}

// TestJournalKeepsAnyBytes: a record whose text is not UTF-8 and whose
// arguments are not compact comes back from a killed process's journal
// exactly as it was hashed, and the records after it too.
func TestJournalKeepsAnyBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	var entries []byte
	head := audit.Anchor{}
	var want []*audit.Record
	for i := range 3 {
		r := storetest.Sample(i)
		if i == 1 {
			r.Identity, r.Tool, r.Error = "a\x00b\xff\xfe", "t\xc3", "cut \xe2\x82"
			r.Arguments = json.RawMessage("{\n  \"sql\" : \"select 1\"\n}")
		}
		if err := (audit.Limits{}).Prepare(r, time.Now()); err != nil {
			t.Fatal(err)
		}
		entries = audit.AppendJournalEntry(entries, r, head, nil)
		head = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
		want = append(want, r)
	}
	if err := os.WriteFile(path+audit.JournalSuffix, entries, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path, audit.WithFsync(false))
	if rep := storetest.MustVerify(t, s); rep.Checked != 3 {
		t.Fatalf("recovered %d records, want 3", rep.Checked)
	}
	got := storetest.Collect(t, s, audit.Filter{})
	for i := range want {
		if got[i].Hash != want[i].Hash || got[i].Identity != want[i].Identity || string(got[i].Arguments) != string(want[i].Arguments) {
			t.Errorf("record %d came back as %+v, want %+v", i+1, got[i], want[i])
		}
	}
}
