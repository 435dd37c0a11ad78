package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
)

// BenchmarkAppend measures a synchronous Append: by one caller at a time
// (each append its own commit) and by many at once (group commit; recs/commit
// says how many records a transaction carried on average).
func BenchmarkAppend(b *testing.B) {
	b.Run("sqlite/fsync=on", func(b *testing.B) {
		storetest.BenchAppend(b, sqliteKind.Group, func(b *testing.B) audit.Store { s, _ := openTest(b); return s })
	})
	b.Run("sqlite/fsync=off", func(b *testing.B) {
		storetest.BenchAppend(b, sqliteKind.Group, func(b *testing.B) audit.Store { s, _ := openTest(b, audit.WithFsync(false)); return s })
	})
	b.Run("sqlite/fsync=off/hmac", func(b *testing.B) {
		storetest.BenchAppend(b, sqliteKind.Group, func(b *testing.B) audit.Store {
			s, _ := openTest(b, audit.WithFsync(false), audit.WithKey(storetest.Key(b, 1)))
			return s
		})
	})
}

// BenchmarkStoreBatch is the journal's background work: storing a batch of
// records it sealed, per record (64 to a transaction).
func BenchmarkStoreBatch(b *testing.B) {
	s, _ := openTest(b, audit.WithFsync(false))
	ctx := context.Background()
	head := audit.Anchor{}
	const batch = 64
	recs := make([]*audit.Record, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		for k := range recs {
			r := storetest.Sample(i + k)
			_ = (audit.Limits{}).Prepare(r, time.Now())
			audit.AppendJournalEntry(nil, r, head, nil)
			head = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
			recs[k] = r
		}
		if err := s.store(ctx, recs, true); err != nil {
			b.Fatal(err)
		}
	}
}
