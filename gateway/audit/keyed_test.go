package audit

import (
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"testing"
)

// keyedTrail makes a trail that was keyless (records 1 to 3, as written
// before keys) and is keyed from record 4 to 8.
func keyedTrail(t *testing.T, k *Key) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.db")
	old, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, old, 3, nil)
	old.Close()
	s, err := OpenSQLite(path, WithKey(k))
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 5, nil)
	s.Close()
	return path
}

// openKeyed opens the trail at path with opts, closed when the test ends.
func openKeyed(t *testing.T, path string, opts ...Option) *SQLite {
	t.Helper()
	s, err := OpenSQLite(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// forge rewrites the trail at path from record from on, as someone with
// write access to the database but not the key would: edit changes record
// from, reseal seals every record from there to the end again (up to to,
// when more than 0), and the stored head is moved to the last.
func forge(t *testing.T, path string, from, to int64, edit func(*Record), reseal func(*Record, Anchor)) {
	t.Helper()
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := collect(t, s, Filter{})
	s.Close()
	db := rawDB(t, path)
	prev := Anchor{}
	for _, r := range recs {
		if to > 0 && r.Seq > to {
			return
		}
		if r.Seq < from {
			prev = Anchor{r.Seq, r.Hash}
			continue
		}
		if r.Seq == from {
			edit(r)
		}
		reseal(r, prev)
		prev = Anchor{r.Seq, r.Hash}
		if _, err := db.Exec(`UPDATE audit SET v = ?, identity = ?, prev_hash = ?, hash = ? WHERE seq = ?`,
			int64(r.Scheme), r.Identity, r.PrevHash[:], r.Hash[:], r.Seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`UPDATE audit_chain SET head_seq = ?, head_hash = ?`, prev.Seq, prev.Hash[:]); err != nil {
		t.Fatal(err)
	}
}

func verifyAnchored(t *testing.T, s *SQLite, heads ...Anchor) *VerifyReport {
	t.Helper()
	rep, err := s.VerifyAnchored(context.Background(), heads...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func wantBreak(t *testing.T, rep *VerifyReport, seq int64, kind BreakKind) {
	t.Helper()
	if rep.OK || rep.Break == nil || rep.Break.Seq != seq || rep.Break.Kind != kind {
		t.Errorf("report %+v, break %v; want seq %d %s", rep, rep.Break, seq, kind)
	}
}

// TestKeyedTrail: a trail keyed from some record on verifies with the key
// (its older, keyless records too); without the key it reads but cannot
// be appended to or verified past the switch; and records edited with
// every later hash recomputed without the key (plain SHA-256, the record
// made keyless, or another key) fail verification at the edited record.
func TestKeyedTrail(t *testing.T) {
	k := testKey(t, 5)
	mallory := func(r *Record) { r.Identity = "mallory" }

	t.Run("verifies", func(t *testing.T) {
		s := openKeyed(t, keyedTrail(t, k), WithKey(k))
		rep := mustVerify(t, s)
		if rep.Checked != 8 || rep.KeyedFrom != 4 || rep.Key != k.ID() {
			t.Errorf("report %+v", rep)
		}
		for _, r := range collect(t, s, Filter{}) {
			if want := map[bool]Scheme{true: SchemeSHA256, false: SchemeHMAC}[r.Seq < 4]; r.Scheme != want {
				t.Errorf("record %d: scheme %v", r.Seq, r.Scheme)
			}
		}
	})
	t.Run("without the key", func(t *testing.T) {
		s := openKeyed(t, keyedTrail(t, k))
		wantBreak(t, verifyAnchored(t, s), 4, BreakKey)
		if err := s.Append(context.Background(), sample(1)); !errors.Is(err, ErrKeyRequired) || !s.NeedsKey() {
			t.Errorf("append without the key: %v", err)
		}
		if n := countRecords(t, s); n != 8 {
			t.Errorf("query without the key: %d records", n)
		}
	})
	t.Run("with another key", func(t *testing.T) {
		s := openKeyed(t, keyedTrail(t, k), WithKey(testKey(t, 6)))
		wantBreak(t, verifyAnchored(t, s), 4, BreakEdited)
		if err := s.Append(context.Background(), sample(1)); !errors.Is(err, ErrKeyRequired) || !s.NeedsKey() {
			t.Errorf("append with another key: %v", err)
		}
	})
	forgeries := []struct {
		name   string
		reseal func(*Record, Anchor)
		kind   BreakKind
	}{
		{"rehashed with SHA-256", func(r *Record, prev Anchor) {
			r.PrevHash = prev.Hash
			r.Hash = sha256.Sum256(r.Encode())
		}, BreakEdited},
		{"made keyless", Seal, BreakKeyless},
		{"sealed with another key", testKey(t, 6).Seal, BreakEdited},
	}
	for _, f := range forgeries {
		t.Run("edited, "+f.name, func(t *testing.T) {
			path := keyedTrail(t, k)
			forge(t, path, 6, 0, mallory, f.reseal)
			wantBreak(t, verifyAnchored(t, openKeyed(t, path, WithKey(k))), 6, f.kind)
		})
	}
	t.Run("an old record edited", func(t *testing.T) {
		path := keyedTrail(t, k)
		forge(t, path, 2, 3, mallory, Seal)
		// Record 4, keyed, links to the old record 3's hash.
		wantBreak(t, verifyAnchored(t, openKeyed(t, path, WithKey(k))), 4, BreakRelinked)
	})
	// The whole keyed part rewritten keyless looks like a keyless trail:
	// only a head anchored elsewhere finds it.
	t.Run("the keyed part made keyless", func(t *testing.T) {
		path := keyedTrail(t, k)
		s := openKeyed(t, path, WithKey(k))
		anchored, err := s.Head(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		forge(t, path, 4, 0, mallory, Seal)
		s = openKeyed(t, path, WithKey(k))
		mustVerify(t, s)
		wantBreak(t, verifyAnchored(t, s, anchored), 8, BreakAnchored)
	})
}

// TestKeyedTrailNewestDeleted: the newest records deleted and the stored
// head moved back to the last one left verify alone, but not against a
// head anchored before the deletion; an older anchored head still
// matches.
func TestKeyedTrailNewestDeleted(t *testing.T) {
	k := testKey(t, 7)
	path := keyedTrail(t, k)
	s := openKeyed(t, path, WithKey(k), WithFsync(false))
	ctx := context.Background()
	early, err := s.Head(ctx)
	if err != nil || early.Seq != 8 {
		t.Fatalf("head %+v %v", early, err)
	}
	appendN(t, s, 3, nil)
	later, err := s.Head(ctx)
	if err != nil || later.Seq != 11 {
		t.Fatalf("head %+v %v", later, err)
	}
	if rep := verifyAnchored(t, s, early, later); !rep.OK || rep.Anchored[0].Result != "matches" || rep.Anchored[1].Result != "matches" {
		t.Fatalf("before the deletion: %+v", rep)
	}
	s.Close()

	db := rawDB(t, path)
	var h9 []byte
	if err := db.QueryRow(`SELECT hash FROM audit WHERE seq = 9`).Scan(&h9); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM audit WHERE seq > 9`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE audit_chain SET head_seq = 9, head_hash = ?`, h9); err != nil {
		t.Fatal(err)
	}
	s = openKeyed(t, path, WithKey(k))
	if rep := mustVerify(t, s); rep.Head.Seq != 9 {
		t.Errorf("verify alone: %+v", rep)
	}
	rep := verifyAnchored(t, s, later)
	wantBreak(t, rep, 10, BreakAnchored)
	t.Logf("against the anchored head %d: %v", later.Seq, rep.Break)
	if rep := verifyAnchored(t, s, early); !rep.OK || rep.Anchored[0].Result != "matches" {
		t.Errorf("against the earlier anchored head: %+v", rep)
	}
	wrong := early
	wrong.Hash[0] ^= 1
	wantBreak(t, verifyAnchored(t, s, wrong), 8, BreakAnchored)
}

// TestUnkeyedTrailStillVerifies: a trail written before keys verifies with
// or without a key; appended to with a key, it is keyed from that record
// on.
func TestUnkeyedTrailStillVerifies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	s := openKeyed(t, path)
	appendN(t, s, 4, nil)
	s.Close()
	k := testKey(t, 8)
	for _, opts := range [][]Option{nil, {WithKey(k)}} {
		s := openKeyed(t, path, opts...)
		if rep := mustVerify(t, s); rep.Checked != 4 || rep.KeyedFrom != 0 {
			t.Errorf("%d options: %+v", len(opts), rep)
		}
		s.Close()
	}
	s = openKeyed(t, path, WithKey(k), WithFsync(false))
	appendN(t, s, 2, nil)
	if rep := mustVerify(t, s); rep.Checked != 6 || rep.KeyedFrom != 5 {
		t.Errorf("after the switch: %+v", rep)
	}
}
