package postgres

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/internal/testenv"
)

// BenchmarkAppend measures a synchronous Append to PostgreSQL: by one
// caller at a time (each append its own commit) and by many at once (group
// commit; recs/commit says how many records a transaction carried on
// average).
func BenchmarkAppend(b *testing.B) {
	b.Run("postgres", func(b *testing.B) {
		srv := testenv.Postgres(b)
		benchAppend(b, func(b *testing.B) audit.Store { return openPG(b, pgDatabase(b, srv)) })
	})
}

func benchAppend(b *testing.B, open func(*testing.B) audit.Store) {
	run := func(b *testing.B, parallel bool) {
		s := open(b)
		var commits atomic.Int64
		s.(*Store).gc.SetHook(func(context.Context, []*audit.Record) error { commits.Add(1); return nil })
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
