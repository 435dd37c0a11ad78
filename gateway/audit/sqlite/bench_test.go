package sqlite

import (
	"context"
	"sync/atomic"
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
		benchAppend(b, func(b *testing.B) audit.Store { s, _ := openTest(b); return s })
	})
	b.Run("sqlite/fsync=off", func(b *testing.B) {
		benchAppend(b, func(b *testing.B) audit.Store { s, _ := openTest(b, audit.WithFsync(false)); return s })
	})
	b.Run("sqlite/fsync=off/hmac", func(b *testing.B) {
		benchAppend(b, func(b *testing.B) audit.Store {
			s, _ := openTest(b, audit.WithFsync(false), audit.WithKey(storetest.Key(b, 1)))
			return s
		})
	})
}

func benchAppend(b *testing.B, open func(*testing.B) audit.Store) {
	run := func(b *testing.B, parallel bool) {
		s := open(b)
		var commits atomic.Int64
		groupOf(s).SetHook(func(context.Context, []*audit.Record) error { commits.Add(1); return nil })
		ctx := context.Background()
		var seq atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		if parallel {
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Append(ctx, storetest.Sample(int(seq.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		} else {
			for i := 0; i < b.N; i++ {
				if err := s.Append(ctx, storetest.Sample(i)); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StopTimer()
		if n := commits.Load(); n > 0 {
			b.ReportMetric(float64(b.N)/float64(n), "recs/commit")
		}
	}
	b.Run("serial", func(b *testing.B) { run(b, false) })
	b.Run("parallel", func(b *testing.B) { run(b, true) })
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

// groupOf is the group commit s appends through.
func groupOf(s audit.Store) *audit.GroupCommit { return s.(*Store).gc }
