package audit

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	if st, err := os.Stat(path + journalSuffix); err != nil || st.Size() != 0 {
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
			lines = appendJournalEntry(lines, r, Anchor{Seq: r.Seq - 1, Hash: r.PrevHash}, nil)
			head = Anchor{Seq: r.Seq, Hash: r.Hash}
		}
		s.Close()
	}
	for i := range 2 {
		r := sample(10 + i)
		if err := (Limits{}).Prepare(r, time.Now()); err != nil {
			t.Fatal(err)
		}
		lines = appendJournalEntry(lines, r, head, nil)
		head = Anchor{Seq: r.Seq, Hash: r.Hash}
	}
	tl := appendJournalEntry(nil, sample(20), head, nil)
	lines = append(lines, tl[:len(tl)/2]...)
	if err := os.WriteFile(path+journalSuffix, lines, 0o600); err != nil {
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
	if st, err := os.Stat(path + journalSuffix); err != nil || st.Size() != 0 {
		t.Errorf("the journal after recovery: %v %v", st, err)
	}
}

// TestJournalKeepsAnyBytes: a record whose text is not UTF-8 and whose
// arguments are not compact comes back from a killed process's journal
// exactly as it was hashed, and the records after it too.
func TestJournalKeepsAnyBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	var entries []byte
	head := Anchor{}
	var want []*Record
	for i := range 3 {
		r := sample(i)
		if i == 1 {
			r.Identity, r.Tool, r.Error = "a\x00b\xff\xfe", "t\xc3", "cut \xe2\x82"
			r.Arguments = json.RawMessage("{\n  \"sql\" : \"select 1\"\n}")
		}
		if err := (Limits{}).Prepare(r, time.Now()); err != nil {
			t.Fatal(err)
		}
		entries = appendJournalEntry(entries, r, head, nil)
		head = Anchor{Seq: r.Seq, Hash: r.Hash}
		want = append(want, r)
	}
	if err := os.WriteFile(path+journalSuffix, entries, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSQLite(path, WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep := mustVerify(t, s); rep.Checked != 3 {
		t.Fatalf("recovered %d records, want 3", rep.Checked)
	}
	got := collect(t, s, Filter{})
	for i := range want {
		if got[i].Hash != want[i].Hash || got[i].Identity != want[i].Identity || string(got[i].Arguments) != string(want[i].Arguments) {
			t.Errorf("record %d came back as %+v, want %+v", i+1, got[i], want[i])
		}
	}
}

// TestJournalEntryDamage: entryAt tells a whole entry, a torn one and
// damage apart, never reads a damaged entry as a record, and reads an
// entry whose length word alone is damaged whole (the encoding delimits
// itself, and the hash holds).
func TestJournalEntryDamage(t *testing.T) {
	r := sample(1)
	if err := (Limits{}).Prepare(r, time.Now()); err != nil {
		t.Fatal(err)
	}
	entry := appendJournalEntry(nil, r, Anchor{}, nil)
	flip := func(i int) []byte { b := bytes.Clone(entry); b[i] ^= 1; return b }
	huge := bytes.Clone(entry)
	binary.BigEndian.PutUint32(huge, maxJournalEntry+1)
	cases := []struct {
		name string
		in   []byte
		want entryStatus
	}{
		{"half a length", entry[:2], entryTorn},
		{"torn", entry[:len(entry)-5], entryTorn},
		{"a field flipped", flip(40), entryDamaged},
		{"the hash flipped", flip(len(entry) - 1), entryDamaged},
		{"the version tag flipped", flip(5), entryDamaged},
		{"an unknown version", flip(4 + versionAt), entryDamaged},
		{"JSON", []byte(`{"seq":1}` + "\n" + strings.Repeat(" ", 64)), entryDamaged},
		{"a length past the limit", huge, entryIntact},
		{"a length too short", append([]byte{0, 0, 0, 3}, entry[4:]...), entryIntact},
		{"whole", entry, entryIntact},
	}
	for _, c := range cases {
		sc := journalScanner{}
		got, n, st := sc.entryAt(c.in)
		if st != c.want || (st == entryIntact) != (got != nil) {
			t.Errorf("%s: %v, %d; want status %d", c.name, got, st, c.want)
			continue
		}
		if st == entryIntact && (n != len(entry) || got.Hash != r.Hash || got.ComputeHash() != r.Hash) {
			t.Errorf("%s: read %d bytes as %+v", c.name, n, got)
		}
	}
	// Keyed: the hash is an HMAC, checked with the key, read unchecked
	// (and noted) without it.
	k := testKey(t, 1)
	keyed := appendJournalEntry(nil, sample(2), Anchor{}, k)
	if _, _, st := (&journalScanner{key: k}).entryAt(keyed); st != entryIntact {
		t.Errorf("a keyed entry with its key: %d", st)
	}
	if _, _, st := (&journalScanner{key: testKey(t, 2)}).entryAt(keyed); st != entryDamaged {
		t.Errorf("a keyed entry with another key: %d", st)
	}
	sc := journalScanner{}
	if _, _, st := sc.entryAt(keyed); st != entryIntact || !sc.keyed {
		t.Errorf("a keyed entry without the key: %d, noted %v", st, sc.keyed)
	}
}

// FuzzJournalEntry: any bytes scan into intact entries whose hashes hold
// and damaged runs; and a record with any text comes back from its entry
// exactly.
func FuzzJournalEntry(f *testing.F) {
	r := sample(3)
	_ = (Limits{}).Prepare(r, time.Now())
	f.Add(appendJournalEntry(nil, r, Anchor{}, nil), "alice", `{"a":1}`)
	f.Add([]byte{0, 0, 0, 1, 't'}, "a\x00\xff", "[1,\n 2]")
	f.Add([]byte(`{"seq":1}`+"\n"), "", "")
	f.Fuzz(func(t *testing.T, in []byte, text, args string) {
		sc := journalScanner{}
		for _, p := range sc.scan(in) {
			if p.r != nil && p.r.ComputeHash() != p.r.Hash {
				t.Fatalf("an entry read with a hash that does not hold: %+v", p.r)
			}
			if p.r == nil && p.entries < 1 {
				t.Fatalf("a damaged run of %d entries", p.entries)
			}
		}
		r := &Record{Identity: text, Tool: text, Error: text, Method: text, Arguments: json.RawMessage(args),
			Outcome: OutcomeOK, Time: time.Unix(0, int64(len(in))).UTC(), Duration: time.Duration(len(text))}
		entry := appendJournalEntry(nil, r, Anchor{Seq: 6, Hash: Digest{9}}, nil)
		got, _, st := sc.entryAt(entry)
		if st != entryIntact {
			t.Fatal(st)
		}
		if got.Hash != r.Hash || got.Identity != r.Identity || got.Error != r.Error || string(got.Arguments) != args ||
			!got.Time.Equal(r.Time) || got.Seq != 7 || got.PrevHash != r.PrevHash {
			t.Fatalf("round trip: %+v, want %+v", got, r)
		}
	})
}
