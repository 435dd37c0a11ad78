package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestJournalEntryDamage: entryAt tells a whole entry, a torn one and
// damage apart, never reads a damaged entry as a record, and reads an
// entry whose length word alone is damaged whole (the encoding delimits
// itself, and the hash holds).
func TestJournalEntryDamage(t *testing.T) {
	r := sample(1)
	if err := (Limits{}).Prepare(r, time.Now()); err != nil {
		t.Fatal(err)
	}
	entry := AppendJournalEntry(nil, r, Anchor{}, nil)
	flip := func(i int) []byte { b := bytes.Clone(entry); b[i] ^= 1; return b }
	huge := bytes.Clone(entry)
	binary.BigEndian.PutUint32(huge, MaxJournalEntry+1)
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
	keyed := AppendJournalEntry(nil, sample(2), Anchor{}, k)
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
// (a keyed entry, which a scanner without the key cannot check, is noted as
// keyed instead, so that its store refuses to append) and damaged runs; and
// a record with any text comes back from its entry exactly.
func FuzzJournalEntry(f *testing.F) {
	r := sample(3)
	_ = (Limits{}).Prepare(r, time.Now())
	f.Add(AppendJournalEntry(nil, r, Anchor{}, nil), "alice", `{"a":1}`)
	f.Add([]byte{0, 0, 0, 1, 't'}, "a\x00\xff", "[1,\n 2]")
	f.Add([]byte(`{"seq":1}`+"\n"), "", "")
	f.Fuzz(func(t *testing.T, in []byte, text, args string) {
		sc := journalScanner{}
		for _, p := range sc.scan(in) {
			if p.Record != nil && p.Record.Scheme == SchemeHMAC {
				if !sc.keyed {
					t.Fatalf("a keyed entry read without the key and not noted: %+v", p.Record)
				}
				continue
			}
			if p.Record != nil && p.Record.ComputeHash() != p.Record.Hash {
				t.Fatalf("an entry read with a hash that does not hold: %+v", p.Record)
			}
			if p.Record == nil && p.Entries < 1 {
				t.Fatalf("a damaged run of %d entries", p.Entries)
			}
		}
		r := &Record{Identity: text, Tool: text, Error: text, Method: text, Arguments: json.RawMessage(args),
			Outcome: OutcomeOK, Time: time.Unix(0, int64(len(in))).UTC(), Duration: time.Duration(len(text))}
		entry := AppendJournalEntry(nil, r, Anchor{Seq: 6, Hash: Digest{9}}, nil)
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
