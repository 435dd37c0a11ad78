package sqlite

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
	"github.com/toolwire/toolwire/taskstore"
	"github.com/toolwire/toolwire/taskstore/storetest"
)

func BenchmarkSQLite(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) taskstore.Store {
		s, err := Open(filepath.Join(b.TempDir(), "tasks.db"), taskstore.WithLimits(taskstore.Limits{MaxTasks: 1 << 30}))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}

// typicalResult is a tool result of about 1 KiB.
var typicalResult = func() json.RawMessage {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 36)[:960]
	return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":%q}],"isError":false}`, text))
}()

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
	s, err := Open(path)
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
