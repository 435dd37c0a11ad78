package sqlite

import (
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
)

// keyedTrail makes a trail that was keyless (records 1 to 3, as written
// before keys) and is keyed from record 4 to 8.
func keyedTrail(t *testing.T, k *audit.Key) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.db")
	old, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	storetest.AppendN(t, old, 3, nil)
	old.Close()
	s, err := Open(path, audit.WithKey(k))
	if err != nil {
		t.Fatal(err)
	}
	storetest.AppendN(t, s, 5, nil)
	s.Close()
	return path
}

// forge rewrites the trail at path from record from on, as someone with
// write access to the database but not the key would: edit changes record
// from, reseal seals every record from there to the end again (up to to,
// when more than 0), and the stored head is moved to the last.
func forge(t *testing.T, path string, from, to int64, edit func(*audit.Record), reseal func(*audit.Record, audit.Anchor)) {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := storetest.Collect(t, s, audit.Filter{})
	s.Close()
	db := rawDB(t, path)
	prev := audit.Anchor{}
	for _, r := range recs {
		if to > 0 && r.Seq > to {
			return
		}
		if r.Seq < from {
			prev = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
			continue
		}
		if r.Seq == from {
			edit(r)
		}
		reseal(r, prev)
		prev = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
		if _, err := db.Exec(`UPDATE audit SET v = ?, identity = ?, prev_hash = ?, hash = ? WHERE seq = ?`,
			int64(r.Scheme), r.Identity, r.PrevHash[:], r.Hash[:], r.Seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`UPDATE audit_chain SET head_seq = ?, head_hash = ?`, prev.Seq, prev.Hash[:]); err != nil {
		t.Fatal(err)
	}
}

func verifyAnchored(t *testing.T, s *Store, heads ...audit.Anchor) *audit.VerifyReport {
	t.Helper()
	rep, err := s.VerifyAnchored(context.Background(), heads...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func wantBreak(t *testing.T, rep *audit.VerifyReport, seq int64, kind audit.BreakKind) {
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
	k := storetest.Key(t, 5)
	mallory := func(r *audit.Record) { r.Identity = "mallory" }

	t.Run("verifies", func(t *testing.T) {
		s := openAt(t, keyedTrail(t, k), audit.WithKey(k))
		rep := storetest.MustVerify(t, s)
		if rep.Checked != 8 || rep.KeyedFrom != 4 || rep.Key != k.ID() {
			t.Errorf("report %+v", rep)
		}
		for _, r := range storetest.Collect(t, s, audit.Filter{}) {
			if want := map[bool]audit.Scheme{true: audit.SchemeSHA256, false: audit.SchemeHMAC}[r.Seq < 4]; r.Scheme != want {
				t.Errorf("record %d: scheme %v", r.Seq, r.Scheme)
			}
		}
	})
	t.Run("without the key", func(t *testing.T) {
		s := openAt(t, keyedTrail(t, k))
		wantBreak(t, verifyAnchored(t, s), 4, audit.BreakKey)
		if err := s.Append(context.Background(), storetest.Sample(1)); !errors.Is(err, audit.ErrKeyRequired) || !s.NeedsKey() {
			t.Errorf("append without the key: %v", err)
		}
		if n := countRecords(t, s); n != 8 {
			t.Errorf("query without the key: %d records", n)
		}
	})
	t.Run("with another key", func(t *testing.T) {
		s := openAt(t, keyedTrail(t, k), audit.WithKey(storetest.Key(t, 6)))
		wantBreak(t, verifyAnchored(t, s), 4, audit.BreakEdited)
		if err := s.Append(context.Background(), storetest.Sample(1)); !errors.Is(err, audit.ErrKeyRequired) || !s.NeedsKey() {
			t.Errorf("append with another key: %v", err)
		}
	})
	forgeries := []struct {
		name   string
		reseal func(*audit.Record, audit.Anchor)
		kind   audit.BreakKind
	}{
		{"rehashed with SHA-256", func(r *audit.Record, prev audit.Anchor) {
			r.PrevHash = prev.Hash
			r.Hash = sha256.Sum256(r.Encode())
		}, audit.BreakEdited},
		{"made keyless", audit.Seal, audit.BreakKeyless},
		{"sealed with another key", storetest.Key(t, 6).Seal, audit.BreakEdited},
	}
	for _, f := range forgeries {
		t.Run("edited, "+f.name, func(t *testing.T) {
			path := keyedTrail(t, k)
			forge(t, path, 6, 0, mallory, f.reseal)
			wantBreak(t, verifyAnchored(t, openAt(t, path, audit.WithKey(k))), 6, f.kind)
		})
	}
	t.Run("an old record edited", func(t *testing.T) {
		path := keyedTrail(t, k)
		forge(t, path, 2, 3, mallory, audit.Seal)
		// Record 4, keyed, links to the old record 3's hash.
		wantBreak(t, verifyAnchored(t, openAt(t, path, audit.WithKey(k))), 4, audit.BreakRelinked)
	})
	// The whole keyed part rewritten keyless looks like a keyless trail:
	// only a head anchored elsewhere finds it.
	t.Run("the keyed part made keyless", func(t *testing.T) {
		path := keyedTrail(t, k)
		s := openAt(t, path, audit.WithKey(k))
		anchored, err := s.Head(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		forge(t, path, 4, 0, mallory, audit.Seal)
		s = openAt(t, path, audit.WithKey(k))
		storetest.MustVerify(t, s)
		wantBreak(t, verifyAnchored(t, s, anchored), 8, audit.BreakAnchored)
	})
}

// TestKeyedTrailNewestDeleted: the newest records deleted and the stored
// head moved back to the last one left verify alone, but not against a
// head anchored before the deletion; an older anchored head still
// matches.
func TestKeyedTrailNewestDeleted(t *testing.T) {
	k := storetest.Key(t, 7)
	path := keyedTrail(t, k)
	s := openAt(t, path, audit.WithKey(k), audit.WithFsync(false))
	ctx := context.Background()
	early, err := s.Head(ctx)
	if err != nil || early.Seq != 8 {
		t.Fatalf("head %+v %v", early, err)
	}
	storetest.AppendN(t, s, 3, nil)
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
	s = openAt(t, path, audit.WithKey(k))
	if rep := storetest.MustVerify(t, s); rep.Head.Seq != 9 {
		t.Errorf("verify alone: %+v", rep)
	}
	rep := verifyAnchored(t, s, later)
	wantBreak(t, rep, 10, audit.BreakAnchored)
	t.Logf("against the anchored head %d: %v", later.Seq, rep.Break)
	if rep := verifyAnchored(t, s, early); !rep.OK || rep.Anchored[0].Result != "matches" {
		t.Errorf("against the earlier anchored head: %+v", rep)
	}
	wrong := early
	wrong.Hash[0] ^= 1
	wantBreak(t, verifyAnchored(t, s, wrong), 8, audit.BreakAnchored)
}

// TestUnkeyedTrailStillVerifies: a trail written before keys verifies with
// or without a key; appended to with a key, it is keyed from that record
// on.
func TestUnkeyedTrailStillVerifies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	s := openAt(t, path)
	storetest.AppendN(t, s, 4, nil)
	s.Close()
	k := storetest.Key(t, 8)
	for _, opts := range [][]audit.Option{nil, {audit.WithKey(k)}} {
		s := openAt(t, path, opts...)
		if rep := storetest.MustVerify(t, s); rep.Checked != 4 || rep.KeyedFrom != 0 {
			t.Errorf("%d options: %+v", len(opts), rep)
		}
		s.Close()
	}
	s = openAt(t, path, audit.WithKey(k), audit.WithFsync(false))
	storetest.AppendN(t, s, 2, nil)
	if rep := storetest.MustVerify(t, s); rep.Checked != 6 || rep.KeyedFrom != 5 {
		t.Errorf("after the switch: %+v", rep)
	}
}
