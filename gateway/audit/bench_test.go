package audit

import (
	"context"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
)

// BenchmarkAppend measures a synchronous Append: by one caller at a time
// (each append its own commit) and by many at once (group commit; recs/commit
// says how many records a transaction carried on average).
func BenchmarkAppend(b *testing.B) {
	b.Run("sqlite/fsync=on", func(b *testing.B) {
		benchAppend(b, func(b *testing.B) Store { s, _ := openTest(b); return s })
	})
	b.Run("sqlite/fsync=off", func(b *testing.B) {
		benchAppend(b, func(b *testing.B) Store { s, _ := openTest(b, WithFsync(false)); return s })
	})
	b.Run("sqlite/fsync=off/hmac", func(b *testing.B) {
		benchAppend(b, func(b *testing.B) Store { s, _ := openTest(b, WithFsync(false), WithKey(testKey(b, 1))); return s })
	})
	b.Run("postgres", func(b *testing.B) {
		srv := testenv.Postgres(b)
		benchAppend(b, func(b *testing.B) Store { return openPG(b, pgDatabase(b, srv)) })
	})
}

func benchAppend(b *testing.B, open func(*testing.B) Store) {
	run := func(b *testing.B, parallel bool) {
		s := open(b)
		var commits atomic.Int64
		groupOf(b, s).hook = func(context.Context, []*Record) error { commits.Add(1); return nil }
		ctx := context.Background()
		var seq atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		if parallel {
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Append(ctx, sample(int(seq.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		} else {
			for i := 0; i < b.N; i++ {
				if err := s.Append(ctx, sample(i)); err != nil {
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
	s, _ := openTest(b, WithFsync(false))
	ctx := context.Background()
	head := Anchor{}
	const batch = 64
	recs := make([]*Record, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		for k := range recs {
			r := sample(i + k)
			_ = (Limits{}).Prepare(r, time.Now())
			appendJournalEntry(nil, r, head, nil)
			head = Anchor{Seq: r.Seq, Hash: r.Hash}
			recs[k] = r
		}
		if err := s.store(ctx, recs, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJournalEntry is what the chain costs a record on the answer's
// path: its journal entry (the encoding and its hash), keyless (SHA-256)
// or keyed (HMAC-SHA-256), for a record of the gateway's usual size.
func BenchmarkJournalEntry(b *testing.B) {
	for _, c := range []struct {
		name string
		key  *Key
	}{{"sha256", nil}, {"hmac-sha256", testKey(b, 1)}} {
		b.Run(c.name, func(b *testing.B) {
			r := sample(1)
			if err := (Limits{}).Prepare(r, time.Now()); err != nil {
				b.Fatal(err)
			}
			buf := appendJournalEntry(nil, r, Anchor{}, c.key)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			cpu := threadCPU(b)
			for b.Loop() {
				rec := *r
				buf = appendJournalEntry(buf[:0], &rec, Anchor{}, c.key)
			}
			cpu()
		})
	}
}

// threadCPU starts measuring the CPU time of the benchmark's thread, which
// a busy machine does not inflate as it does the wall time; the function
// it returns reports it per operation (cpu-ns/op), where the system
// measures it (Linux).
func threadCPU(b *testing.B) func() {
	runtime.LockOSThread()
	const rusageThread = 1 // RUSAGE_THREAD
	var start syscall.Rusage
	if syscall.Getrusage(rusageThread, &start) != nil {
		return runtime.UnlockOSThread
	}
	return func() {
		defer runtime.UnlockOSThread()
		var end syscall.Rusage
		if syscall.Getrusage(rusageThread, &end) == nil && b.N > 0 {
			ns := end.Utime.Nano() + end.Stime.Nano() - start.Utime.Nano() - start.Stime.Nano()
			b.ReportMetric(float64(ns)/float64(b.N), "cpu-ns/op")
		}
	}
}
