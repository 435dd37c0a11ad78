package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
)

// damagedJournal is a trail as a killed gateway leaves it: stored records
// in the database and a journal holding them, then records acknowledged
// but not stored yet, then a torn last entry (a write the process died in).
type damagedJournal struct {
	path    string
	journal []byte
	starts  []int           // where each entry starts; the torn one last
	recs    []*audit.Record // every acknowledged record, in Seq order
	stored  int64           // the database's head
}

// buildJournal makes a trail in dir with stored records in the database
// and a journal of them and journaled more, all sealed with k (keyless
// when nil).
func buildJournal(t *testing.T, dir string, k *audit.Key, stored, journaled int) *damagedJournal {
	t.Helper()
	d := &damagedJournal{path: filepath.Join(dir, "audit.db"), stored: int64(stored)}
	s, err := Open(d.path, audit.WithKey(k))
	if err != nil {
		t.Fatal(err)
	}
	d.recs = storetest.AppendN(t, s, stored, nil)
	s.Close()
	head := audit.Anchor{}
	add := func(r *audit.Record) {
		d.starts = append(d.starts, len(d.journal))
		d.journal = audit.AppendJournalEntry(d.journal, r, head, k)
		head = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
	}
	for _, r := range d.recs {
		add(r)
	}
	for i := range journaled {
		r := storetest.Sample(stored + i)
		r.Identity = fmt.Sprintf("journaled-%d", i)
		if err := (audit.Limits{}).Prepare(r, time.Now()); err != nil {
			t.Fatal(err)
		}
		add(r)
		d.recs = append(d.recs, r)
	}
	torn := audit.AppendJournalEntry(nil, storetest.Sample(999), head, k)
	d.starts = append(d.starts, len(d.journal))
	d.journal = append(d.journal, torn[:len(torn)*2/3]...)
	return d
}

// tagLen is the length of the tag every record encoding starts with
// (Record.Encode).
const tagLen = len("toolwire/audit/v1\x00")

// entryAtOffset is the index of the entry holding byte off.
func (d *damagedJournal) entryAtOffset(off int) int {
	i, found := slices.BinarySearch(d.starts, off)
	if !found {
		i--
	}
	return i
}

// TestJournalDamage: a byte flipped anywhere in a journal a killed process
// left never drops a record silently. The intact entries after the damage
// are recovered; the records the damage took are a gap record in the
// chain, which Verify reports by their Seq, and the damaged file is kept
// beside the journal; a torn last entry (never acknowledged) is dropped
// without a word. Keyless and keyed alike.
func TestJournalDamage(t *testing.T) {
	const stored, journaled = 5, 30
	// Inside an entry's encoding: its Identity.
	encAt := 4 + tagLen + 3*8 + (8 + 1) + (8 + 4) + 8 + 2
	type damage func(d *damagedJournal) (b []byte, lost []int64)
	// flip flips one byte of entry i at offset within it: the entry's
	// record is lost unless it was stored.
	flip := func(i, within int) damage {
		return func(d *damagedJournal) ([]byte, []int64) {
			b := bytes.Clone(d.journal)
			b[d.starts[i]+within] ^= 0x20
			if seq := int64(i + 1); i < len(d.recs) && seq > d.stored {
				return b, []int64{seq}
			}
			return b, nil
		}
	}
	at := func(frac float64) damage {
		return func(d *damagedJournal) ([]byte, []int64) {
			off := int(float64(d.starts[len(d.starts)-1]) * frac)
			i := d.entryAtOffset(off)
			if off-d.starts[i] < 4+tagLen {
				off = d.starts[i] + encAt // a text field, not the length word
			}
			return flip(i, off-d.starts[i])(d)
		}
	}
	cases := []struct {
		name   string
		damage damage
	}{
		{"the start: the first entry's length word", flip(0, 1)},
		{"the start: the first entry's record, already stored", flip(0, encAt)},
		{"the first entry not stored", flip(stored, encAt)},
		{"a fifth in", at(0.2)},
		{"the middle", at(0.5)},
		{"the middle: a length word", func(d *damagedJournal) ([]byte, []int64) { b, _ := flip(17, 2)(d); return b, nil }},
		{"the middle: a hash", func(d *damagedJournal) ([]byte, []int64) { return flip(18, d.starts[19]-d.starts[18]-1)(d) }},
		{"the last complete entry", flip(stored+journaled-1, encAt)},
		{"inside the torn tail", flip(stored+journaled, encAt)},
		{"three entries overwritten", func(d *damagedJournal) ([]byte, []int64) {
			b := bytes.Clone(d.journal)
			clear(b[d.starts[20]+8 : d.starts[23]-8])
			return b, []int64{21, 22, 23}
		}},
		{"two runs of damage", func(d *damagedJournal) ([]byte, []int64) {
			b, lost := flip(9, encAt)(d)
			b2, lost2 := flip(25, encAt)(d)
			b[d.starts[25]+encAt] = b2[d.starts[25]+encAt]
			return b, append(lost, lost2...)
		}},
	}
	for _, keyed := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("keyed=%v/%s", keyed, c.name), func(t *testing.T) {
				var k *audit.Key
				if keyed {
					k = storetest.Key(t, 3)
				}
				dir := t.TempDir()
				d := buildJournal(t, dir, k, stored, journaled)
				damaged, lost := c.damage(d)
				if err := os.WriteFile(d.path+audit.JournalSuffix, damaged, 0o600); err != nil {
					t.Fatal(err)
				}
				s := openAt(t, d.path, audit.WithFsync(false), audit.WithKey(k))
				checkRecovered(t, s, d, damaged, lost)

				// The chain goes on after the gap, and keeps reporting it.
				r := storetest.Sample(100)
				if err := s.Append(context.Background(), r); err != nil || r.Seq != int64(stored+journaled+1) {
					t.Fatalf("append after recovery: seq %d, %v", r.Seq, err)
				}
				rep, err := s.Verify(context.Background())
				if err != nil || len(rep.Gaps) != len(gapsOf(lost)) || rep.Head.Seq != r.Seq || rep.Break != nil && rep.Break.Kind != audit.BreakLost {
					t.Errorf("verify after an append: %+v %v", rep, err)
				}
				s.Close()
				// Reopened, nothing is recovered twice.
				s2 := openAt(t, d.path, audit.WithFsync(false), audit.WithKey(k))
				if rep2, _ := s2.Verify(context.Background()); len(rep2.Gaps) != len(rep.Gaps) || rep2.Head != rep.Head || len(s2.JournalGaps()) != 0 {
					t.Errorf("reopened: %+v, gaps found again %v", rep2, s2.JournalGaps())
				}
			})
		}
	}
}

// gapsOf groups lost Seq into runs.
func gapsOf(lost []int64) [][2]int64 {
	var runs [][2]int64
	for _, seq := range lost {
		if n := len(runs); n > 0 && runs[n-1][1]+1 == seq {
			runs[n-1][1] = seq
			continue
		}
		runs = append(runs, [2]int64{seq, seq})
	}
	return runs
}

// checkRecovered checks a store just opened on d's trail with the journal
// damaged: every acknowledged record is there with its hash, or in a gap
// Verify reports; nothing else is lost, and the damaged file is kept.
func checkRecovered(t *testing.T, s *Store, d *damagedJournal, damaged []byte, lost []int64) {
	t.Helper()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := gapsOf(lost)
	var got [][2]int64
	for _, g := range rep.Gaps {
		got = append(got, [2]int64{g.From, g.To})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("gaps %v, want %v (report %+v)", got, want, rep)
	}
	if len(want) == 0 {
		if !rep.OK {
			t.Fatalf("verify: %v", rep.Break)
		}
	} else {
		if rep.OK || rep.Break == nil || rep.Break.Kind != audit.BreakLost || rep.Break.Seq != want[0][0] {
			t.Fatalf("verify of a trail with gaps: %+v", rep)
		}
		g := rep.Gaps[0]
		span := fmt.Sprintf("records %d to %d", g.From, g.To)
		if g.From == g.To {
			span = fmt.Sprintf("record %d", g.From)
		}
		if !strings.Contains(g.Reason, span+" lost to a damaged journal entry (kept at "+g.Kept+")") {
			t.Errorf("gap reason %q", g.Reason)
		}
		if kept, err := os.ReadFile(g.Kept); err != nil || !bytes.Equal(kept, damaged) || filepath.Dir(g.Kept) != filepath.Dir(d.path) {
			t.Errorf("the damaged journal kept at %s: %v", g.Kept, err)
		}
	}
	t.Logf("%d of %d records recovered intact, gaps %v: %+v", rep.Checked-int64(len(want)), len(d.recs), got, rep.Break)
	if gaps := s.JournalGaps(); len(gaps) != len(want) {
		t.Errorf("JournalGaps %v", gaps)
	}
	// Every acknowledged record is in the trail, exactly, or lost in a gap.
	byseq := collectBySeq(t, s)
	for _, r := range d.recs {
		got := byseq[r.Seq]
		switch {
		case slices.Contains(lost, r.Seq) && slices.ContainsFunc(want, func(g [2]int64) bool { return g[0] == r.Seq }):
			if got == nil || got.Method != audit.MethodGap || got.Outcome != audit.OutcomeLost {
				t.Errorf("record %d: %+v, want the gap record", r.Seq, got)
			}
		case slices.Contains(lost, r.Seq):
			if got != nil {
				t.Errorf("lost record %d is there: %+v", r.Seq, got)
			}
		case got == nil:
			t.Errorf("record %d lost silently", r.Seq)
		case got.Hash != r.Hash || got.Identity != r.Identity:
			t.Errorf("record %d came back as %+v", r.Seq, got)
		}
	}
	if st, err := os.Stat(d.path + audit.JournalSuffix); err != nil || st.Size() != 0 {
		t.Errorf("the journal after recovery: %v %v", st, err)
	}
	if ents, _ := filepath.Glob(d.path + audit.JournalSuffix + ".damaged-*"); len(ents) != min(len(want), 1) {
		t.Errorf("damaged journals kept: %v", ents)
	}
}

// TestJournalDamageNeedsTheKey: a keyed trail's damaged journal is left as
// it is by a store without the key, or with another (it could tell
// neither damage nor seal a gap record): that store is read-only; the
// next open with the key recovers it.
func TestJournalDamageNeedsTheKey(t *testing.T) {
	k := storetest.Key(t, 4)
	d := buildJournal(t, t.TempDir(), k, 3, 10)
	damaged := bytes.Clone(d.journal)
	damaged[d.starts[6]+40] ^= 1
	os.WriteFile(d.path+audit.JournalSuffix, damaged, 0o600)
	for _, o := range []struct {
		name string
		opts []audit.Option
	}{
		{"no key", []audit.Option{audit.WithFsync(true)}},
		{"no key, no fsync", []audit.Option{audit.WithFsync(false)}},
		{"another key", []audit.Option{audit.WithKey(storetest.Key(t, 5))}},
	} {
		s, err := Open(d.path, o.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if !s.ReadOnly() || !s.NeedsKey() || s.Append(context.Background(), storetest.Sample(1)) == nil {
			t.Errorf("%s: a store without the key took over the damaged journal", o.name)
		}
		s.Close()
		if b, _ := os.ReadFile(d.path + audit.JournalSuffix); !bytes.Equal(b, damaged) {
			t.Fatalf("%s: the journal was changed", o.name)
		}
	}
	s := openAt(t, d.path, audit.WithKey(k))
	checkRecovered(t, s, d, damaged, []int64{7})

	// Nothing stored yet, and no entry holds under the key given: another
	// key, whose every entry would be taken for damage.
	fresh := buildJournal(t, t.TempDir(), k, 0, 5)
	os.WriteFile(fresh.path+audit.JournalSuffix, fresh.journal, 0o600)
	other := openAt(t, fresh.path, audit.WithKey(storetest.Key(t, 5)))
	if !other.ReadOnly() || !other.NeedsKey() {
		t.Error("a journal of another key was recovered")
	}
}

// TestJournalDamageAnywhere: a byte changed at random places of the
// journal (a fixed seed, so that a failure replays): every acknowledged
// record is in the trail with its hash or in a gap Verify reports, and no
// gap names a record that is there.
func TestJournalDamageAnywhere(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	k := storetest.Key(t, 3)
	for i := range 40 {
		d := buildJournal(t, t.TempDir(), k, 4, 12)
		damaged := bytes.Clone(d.journal)
		off := rnd.IntN(len(damaged))
		damaged[off] ^= byte(1 + rnd.IntN(255))
		os.WriteFile(d.path+audit.JournalSuffix, damaged, 0o600)
		s, err := Open(d.path, audit.WithKey(k), audit.WithFsync(false))
		if err != nil {
			t.Fatalf("case %d, byte %d: %v", i, off, err)
		}
		rep, err := s.Verify(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Break != nil && rep.Break.Kind != audit.BreakLost {
			t.Errorf("case %d, byte %d: %v", i, off, rep.Break)
		}
		lost := func(seq int64) bool {
			return slices.ContainsFunc(rep.Gaps, func(g audit.Gap) bool { return g.From <= seq && seq <= g.To })
		}
		got := collectBySeq(t, s)
		for _, r := range d.recs {
			g := got[r.Seq]
			switch {
			case lost(r.Seq) && g != nil && g.Method != audit.MethodGap:
				t.Errorf("case %d, byte %d: record %d is there and in a gap", i, off, r.Seq)
			case lost(r.Seq):
			case g == nil || g.Hash != r.Hash:
				t.Errorf("case %d, byte %d (entry %d): record %d lost silently", i, off, d.entryAtOffset(off), r.Seq)
			}
		}
		s.Close()
	}
}

// collectBySeq returns every record of s by its seq.
func collectBySeq(t *testing.T, s audit.Store) map[int64]*audit.Record {
	t.Helper()
	out := map[int64]*audit.Record{}
	for _, r := range storetest.Collect(t, s, audit.Filter{}) {
		out[r.Seq] = r
	}
	return out
}
