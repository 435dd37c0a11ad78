package audit

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

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
			buf := AppendJournalEntry(nil, r, Anchor{}, c.key)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			cpu := threadCPU(b)
			for b.Loop() {
				rec := *r
				buf = AppendJournalEntry(buf[:0], &rec, Anchor{}, c.key)
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
