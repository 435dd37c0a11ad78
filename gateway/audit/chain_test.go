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
	prev := Start
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
	if rep := verify(Start, head, rs); !rep.OK || rep.Checked != 5 || rep.First != 1 || rep.Last != 5 {
		t.Fatalf("intact chain: %+v %v", rep, rep.Break)
	}
	if rep := verify(Start, Start, nil); !rep.OK {
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
	check("edited", Start, head, edited, 3, BreakEdited)

	gap := append(chainOf(5)[:1:1], chainOf(5)[2:]...)
	check("gap", Start, head, gap, 2, BreakMissing)

	check("tail deleted", Start, head, chainOf(5)[:3], 4, BreakMissing)
	check("all deleted", Start, head, nil, 1, BreakMissing)
	check("appended past head", Start, Anchor{4, rs[3].Hash}, chainOf(5), 5, BreakInserted)

	// A record replaced by one with a recomputed hash: the next one names it.
	replaced := chainOf(5)
	replaced[2].Identity = "mallory"
	replaced[2].Hash = replaced[2].ComputeHash()
	check("replaced", Start, head, replaced, 4, BreakRelinked)

	// Same, at the end: the head names it.
	last := chainOf(5)
	last[4].Identity = "mallory"
	last[4].Hash = last[4].ComputeHash()
	check("replaced last", Start, head, last, 5, BreakHead)

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
	if Genesis.String() != strings.Repeat("0", 64) {
		t.Errorf("genesis %s", Genesis)
	}
}
