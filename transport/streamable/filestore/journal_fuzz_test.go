package filestore

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolwire/toolwire/transport/streamable"
	"github.com/toolwire/toolwire/transport/streamable/sessionstoretest"
)

// FuzzOpen: whatever follows the header, Open reads what it can without
// a panic, holds only sessions within the bounds, and rewrites the file so
// that the next Open finds the same sessions, undamaged.
func FuzzOpen(f *testing.F) {
	var good []byte
	good = appendRecord(good, &record{op: opCreate, id: "a", owner: "iss\x00alice", prime: true, expires: 1 << 50, state: []byte(`{"v":1}`)})
	good = appendRecord(good, &record{op: opCreate, id: "b", expires: 1 << 50})
	good = appendRecord(good, &record{op: opUpdate, id: "a", expires: 1 << 51, state: []byte(`{"v":2}`)})
	good = appendRecord(good, &record{op: opExpiry, id: "b", expires: 1 << 52})
	good = appendRecord(good, &record{op: opDelete, id: "b"})
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append(bytes.Clone(good), 0, 0, 0, 0))
	f.Add(appendRecord(nil, &record{op: opCreate, id: "expired", expires: 1}))
	f.Add([]byte{})
	clk := sessionstoretest.NewClock()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "sessions.log")
		if err := os.WriteFile(path, append([]byte(magic), data...), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, WithClock(clk.Now), WithLimits(Limits{MaxSessions: 16}))
		if err != nil {
			t.Fatalf("Open of a file with the header: %v", err)
		}
		got := snapshot(t, s)
		if len(got) > 16 {
			t.Errorf("%d sessions held past a bound of 16", len(got))
		}
		for id, rec := range got {
			if check(id, rec.Owner, rec.State) != nil {
				t.Errorf("session %q held past the bounds", id)
			}
		}
		s.Close()
		var logs bytes.Buffer
		s, err = Open(path, WithClock(clk.Now), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if again := snapshot(t, s); len(again) != len(got) || !equalRecords(again, got) {
			t.Errorf("reopened: %d sessions, want the %d before", len(again), len(got))
		}
		if logs.Len() != 0 {
			t.Errorf("the rewritten file is damaged: %s", logs.String())
		}
	})
}

// snapshot is every session s holds, read through Touch.
func snapshot(t *testing.T, s *Store) map[string]*streamable.SessionRecord {
	out := map[string]*streamable.SessionRecord{}
	for _, id := range held(s) {
		rec, err := s.Touch(context.Background(), id, time.Millisecond)
		if err != nil {
			t.Fatalf("Touch of held session %q: %v", id, err)
		}
		out[id] = rec
	}
	return out
}

func equalRecords(a, b map[string]*streamable.SessionRecord) bool {
	for id, ra := range a {
		rb := b[id]
		if rb == nil || ra.Owner != rb.Owner || ra.Prime != rb.Prime || !bytes.Equal(ra.State, rb.State) {
			return false
		}
	}
	return slices.Equal(slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b)))
}
