package audit

import (
	"bytes"
	"strings"
	"testing"
)

// TestEncodeDistinct shows that moving bytes between adjacent fields, or
// changing any one field, changes the encoding (fields are length-prefixed).
func TestEncodeDistinct(t *testing.T) {
	a, b := sample(1), sample(1)
	a.Identity, a.Persona = "ab", "c"
	b.Identity, b.Persona = "a", "bc"
	if bytes.Equal(a.Encode(), b.Encode()) {
		t.Fatal("shifted field boundary encodes alike")
	}
	base := sample(1)
	edits := []func(*Record){
		func(r *Record) { r.Seq++ },
		func(r *Record) { r.Time = r.Time.Add(1) },
		func(r *Record) { r.Duration++ },
		func(r *Record) { r.RequestID += "x" },
		func(r *Record) { r.SessionID += "x" },
		func(r *Record) { r.Identity += "x" },
		func(r *Record) { r.Persona += "x" },
		func(r *Record) { r.Upstream += "x" },
		func(r *Record) { r.Tool += "x" },
		func(r *Record) { r.Method += "x" },
		func(r *Record) { r.Arguments = append(r.Arguments[:len(r.Arguments):len(r.Arguments)], ' ') },
		func(r *Record) { r.Outcome = OutcomeDenied },
		func(r *Record) { r.Error += "x" },
		func(r *Record) { r.RequestBytes++ },
		func(r *Record) { r.ResponseBytes++ },
		func(r *Record) { r.ContentBlocks++ },
		func(r *Record) { r.Era += "x" },
		func(r *Record) { r.Transport += "x" },
		func(r *Record) { r.PrevHash[31] ^= 1 },
	}
	seen := map[Digest]int{base.ComputeHash(): -1}
	for i, edit := range edits {
		r := sample(1)
		edit(r)
		h := r.ComputeHash()
		if j, dup := seen[h]; dup {
			t.Errorf("edit %d hashes like %d", i, j)
		}
		seen[h] = i
	}
	if !strings.HasPrefix(string(base.Encode()), "toolwire/audit/v1\x00") {
		t.Error("encoding does not start with its version tag")
	}
}

func chainOf(n int) []*Record {
	var rs []*Record
	prev := Anchor{}
	for i := range n {
		r := sample(i)
		Seal(r, prev)
		prev = Anchor{r.Seq, r.Hash}
		rs = append(rs, r)
	}
	return rs
}

func verify(anchor, head Anchor, rs []*Record) *VerifyReport {
	v := NewVerifier(anchor, head)
	for _, r := range rs {
		if !v.Add(r) {
			break
		}
	}
	return v.Report()
}

func TestVerifier(t *testing.T) {
	rs := chainOf(5)
	head := Anchor{5, rs[4].Hash}
	if rep := verify(Anchor{}, head, rs); !rep.OK || rep.Checked != 5 || rep.First != 1 || rep.Last != 5 {
		t.Fatalf("intact chain: %+v %v", rep, rep.Break)
	}
	if rep := verify(Anchor{}, Anchor{}, nil); !rep.OK {
		t.Fatalf("empty chain: %v", rep.Break)
	}
	check := func(name string, anchor, head Anchor, rs []*Record, seq int64, kind BreakKind) {
		t.Helper()
		rep := verify(anchor, head, rs)
		if rep.OK || rep.Break == nil || rep.Break.Seq != seq || rep.Break.Kind != kind {
			t.Errorf("%s: report %+v, break %v; want seq %d %s", name, rep, rep.Break, seq, kind)
		}
	}
	edited := chainOf(5)
	edited[2].Identity = "mallory"
	check("edited", Anchor{}, head, edited, 3, BreakEdited)

	gap := append(chainOf(5)[:1:1], chainOf(5)[2:]...)
	check("gap", Anchor{}, head, gap, 2, BreakMissing)

	check("tail deleted", Anchor{}, head, chainOf(5)[:3], 4, BreakMissing)
	check("all deleted", Anchor{}, head, nil, 1, BreakMissing)
	check("appended past head", Anchor{}, Anchor{4, rs[3].Hash}, chainOf(5), 5, BreakInserted)

	// A record replaced by one with a recomputed hash: the next one names it.
	replaced := chainOf(5)
	replaced[2].Identity = "mallory"
	replaced[2].Hash = replaced[2].ComputeHash()
	check("replaced", Anchor{}, head, replaced, 4, BreakRelinked)

	// Same, at the end: the head names it.
	last := chainOf(5)
	last[4].Identity = "mallory"
	last[4].Hash = last[4].ComputeHash()
	check("replaced last", Anchor{}, head, last, 5, BreakHead)

	// After a sweep, verification starts from the anchor.
	if rep := verify(Anchor{2, rs[1].Hash}, head, chainOf(5)[2:]); !rep.OK {
		t.Errorf("from anchor: %v", rep.Break)
	}
	check("wrong anchor", Anchor{2, rs[0].Hash}, head, chainOf(5)[2:], 3, BreakRelinked)
	check("before anchor", Anchor{2, rs[1].Hash}, head, chainOf(5)[1:], 2, BreakInserted)
}

func TestDigestText(t *testing.T) {
	d := chainOf(1)[0].Hash
	b, _ := d.MarshalText()
	var back Digest
	if err := back.UnmarshalText(b); err != nil || back != d {
		t.Fatalf("round trip: %v", err)
	}
	if err := back.UnmarshalText([]byte("abcd")); err == nil {
		t.Error("short digest accepted")
	}
	if (Digest{}).String() != strings.Repeat("0", 64) {
		t.Errorf("genesis %s", (Digest{}))
	}
}

// TestVerifierGaps: a gap record stands for the records it names, the walk
// goes on after them from the hash the next record links to (or from the
// gap record's own, when none survived), and the gap is reported; an
// anchored head among the lost records is "lost", except the last one,
// which the next record's link checks.
func TestVerifierGaps(t *testing.T) {
	rs := chainOf(8)
	now := rs[0].Time
	g := NewGapRecord(4, 6, &rs[6].PrevHash, "kept", now)
	Seal(g, Anchor{3, rs[2].Hash})
	walk := []*Record{rs[0], rs[1], rs[2], g, rs[6], rs[7]}
	head := Anchor{8, rs[7].Hash}
	rep := verify(Anchor{}, head, walk)
	if rep.OK || rep.Break.Kind != BreakLost || rep.Break.Seq != 4 || len(rep.Gaps) != 1 || rep.Gaps[0] != (Gap{From: 4, To: 6, Kept: "kept", Reason: g.Error}) {
		t.Fatalf("a gap in the middle: %+v", rep)
	}
	if g.Error != "records 4 to 6 lost to a damaged journal entry (kept at kept)" {
		t.Errorf("gap record text %q", g.Error)
	}
	anchored := func(heads ...Anchor) *VerifyReport {
		v := NewVerifier(Anchor{}, head)
		v.Expect(heads...)
		for _, r := range walk {
			v.Add(r)
		}
		return v.Report()
	}
	rep = anchored(Anchor{6, rs[5].Hash}, Anchor{5, rs[4].Hash}, Anchor{8, rs[7].Hash}, Anchor{2, rs[1].Hash})
	var results []string
	for _, c := range rep.Anchored {
		results = append(results, c.Result)
	}
	if strings.Join(results, " ") != "matches lost matches matches" || rep.Break.Kind != BreakLost {
		t.Errorf("anchored heads around a gap: %v, %v", results, rep.Break)
	}
	wrong := Anchor{6, rs[4].Hash}
	if rep := anchored(wrong); rep.Break == nil || rep.Break.Kind != BreakAnchored || rep.Break.Seq != 6 {
		t.Errorf("an anchored head the next record contradicts: %+v", rep.Break)
	}

	// Nothing survived the damage: the chain goes on from the gap record.
	end := NewGapRecord(4, 5, nil, "kept", now)
	Seal(end, Anchor{3, rs[2].Hash})
	next := sample(9)
	Seal(next, ChainAfter(end))
	if next.Seq != 6 {
		t.Fatalf("after a gap of 4 to 5, seq %d", next.Seq)
	}
	rep = verify(Anchor{}, Anchor{6, next.Hash}, []*Record{rs[0], rs[1], rs[2], end, next})
	if rep.Break == nil || rep.Break.Kind != BreakLost || len(rep.Gaps) != 1 || rep.Gaps[0].To != 5 {
		t.Errorf("a gap at the end: %+v", rep)
	}

	bad := NewGapRecord(4, 6, nil, "kept", now)
	bad.Arguments = []byte(`{"from":5,"to":6}`)
	Seal(bad, Anchor{3, rs[2].Hash})
	if rep := verify(Anchor{}, head, []*Record{rs[0], rs[1], rs[2], bad}); rep.Break == nil || rep.Break.Kind != BreakInvalid {
		t.Errorf("a gap record that does not name itself: %+v", rep.Break)
	}
}
