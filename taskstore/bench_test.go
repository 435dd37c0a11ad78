package taskstore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// typicalResult is a tool result of about 1 KiB.
var typicalResult = func() json.RawMessage {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 36)[:960]
	return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":%q}],"isError":false}`, text))
}()

func benchOpenSQLite(b *testing.B) *SQLite {
	s, err := OpenSQLite(filepath.Join(b.TempDir(), "tasks.db"), WithMaxTasks(1<<30))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func benchCreate(b *testing.B, s Store) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := s.Create(ctx, task(fmt.Sprintf("task-%09d", i), "alice")); err != nil {
			b.Fatal(err)
		}
	}
}

func fill(b *testing.B, s Store, n int) {
	ctx := context.Background()
	for i := range n {
		if err := s.Create(ctx, task(fmt.Sprintf("task-%09d", i), fmt.Sprint("owner", i%10))); err != nil {
			b.Fatal(err)
		}
	}
}

func benchGet(b *testing.B, s Store) {
	ctx := context.Background()
	const n = 1000
	fill(b, s, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := i % n
		if _, err := s.Get(ctx, fmt.Sprint("owner", j%10), fmt.Sprintf("task-%09d", j)); err != nil {
			b.Fatal(err)
		}
	}
}

func benchUpdate(b *testing.B, s Store) {
	ctx := context.Background()
	const n = 1000
	fill(b, s, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Update(ctx, fmt.Sprintf("task-%09d", i%n), func(r *Record) error {
			r.StatusMessage = fmt.Sprint("step ", i)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchList(b *testing.B, s Store) {
	ctx := context.Background()
	fill(b, s, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if p, err := s.List(ctx, "owner3", "", 20); err != nil || len(p.Records) != 20 {
			b.Fatal(len(p.Records), err)
		}
	}
}

func BenchmarkSQLiteCreate(b *testing.B) { benchCreate(b, benchOpenSQLite(b)) }
func BenchmarkSQLiteGet(b *testing.B)    { benchGet(b, benchOpenSQLite(b)) }
func BenchmarkSQLiteUpdate(b *testing.B) { benchUpdate(b, benchOpenSQLite(b)) }
func BenchmarkSQLiteList(b *testing.B)   { benchList(b, benchOpenSQLite(b)) }

func BenchmarkMemoryCreate(b *testing.B) { benchCreate(b, NewMemory(WithMaxTasks(1<<30))) }
func BenchmarkMemoryGet(b *testing.B)    { benchGet(b, NewMemory()) }
func BenchmarkMemoryUpdate(b *testing.B) { benchUpdate(b, NewMemory()) }
func BenchmarkMemoryList(b *testing.B)   { benchList(b, NewMemory()) }

// diskPerTask measures, once per test binary, the bytes on disk per
// completed task with a typical 1 KiB result: n tasks created, the WAL
// checkpointed (by Close), then the database and WAL files measured.
var diskPerTask = sync.OnceValues(func() (float64, error) {
	const n = 10_000
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "taskstore-bench")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tasks.db")
	s, err := OpenSQLite(path)
	if err != nil {
		return 0, err
	}
	for i := range n {
		id := fmt.Sprintf("%032x", i) // like a 128-bit random id
		r := task(id, "principal:"+fmt.Sprint(i%50))
		r.Status, r.Result = mcp.TaskCompleted, typicalResult
		if err := s.Create(ctx, r); err != nil {
			s.Close()
			return 0, err
		}
	}
	if err := s.Close(); err != nil { // checkpoints, truncating the WAL
		return 0, err
	}
	var size int64
	for _, name := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(name); err == nil {
			size += fi.Size()
		}
	}
	return float64(size) / n, nil
})

// BenchmarkSQLiteDiskPerTask reports diskPerTask as B/task; its ns/op is
// meaningless (the measurement is made once, outside the timer).
func BenchmarkSQLiteDiskPerTask(b *testing.B) {
	b.StopTimer()
	perTask, err := diskPerTask()
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	for range b.N {
	}
	b.ReportMetric(perTask, "B/task")
	b.ReportMetric(float64(len(typicalResult)), "result-B")
}
