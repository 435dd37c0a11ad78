package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/taskstore"
	tasksqlite "github.com/toolwire/toolwire/taskstore/sqlite"
)

// BenchmarkTasks measures the task protocol through a session on each
// store, from decoded request to encoded response: a tools/call answered
// with a CreateTaskResult (the task stored durably first; its handler then
// completes it in the background), and tasks/get of a completed task with
// its result inlined (2026-07-28). For SQLite it also reports the disk the
// store uses per task. `go test -run XXX -bench Tasks -benchmem ./server`.
func BenchmarkTasks(b *testing.B) {
	stores := map[string]func(b *testing.B) (taskstore.Store, string){
		"memory": func(*testing.B) (taskstore.Store, string) {
			return taskstore.NewMemory(taskstore.WithLimits(taskstore.Limits{MaxTasks: 1 << 24})), ""
		},
		"sqlite": func(b *testing.B) (taskstore.Store, string) {
			dir := b.TempDir()
			st, err := tasksqlite.Open(filepath.Join(dir, "tasks.db"), taskstore.WithLimits(taskstore.Limits{MaxTasks: 1 << 24}))
			if err != nil {
				b.Fatal(err)
			}
			return st, dir
		},
	}
	for _, name := range []string{"memory", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			st, dir := stores[name](b)
			defer st.Close()
			s := server.New(mcp.Implementation{Name: "bench", Version: "1"}, server.WithTaskStore(st), server.WithLimits(server.Limits{MaxRunningTasks: 1 << 20}))
			testtools.AddEcho(b, s, "", server.WithTaskSupport(mcp.TaskOptional))
			defer s.Shutdown(context.Background())
			ss := s.NewSession(nil)
			defer ss.Close()
			ctx := context.Background()
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
			do := func(line []byte) json.RawMessage {
				m, _, derr := jsonrpc.Decode(line)
				if derr != nil {
					b.Fatal(derr)
				}
				resp := ss.HandleRequest(ctx, m.(*jsonrpc.Request), discard{})
				if resp == nil || resp.Error != nil {
					b.Fatalf("%s failed: %+v", line, resp)
				}
				if _, err := jsonrpc.Encode(resp); err != nil {
					b.Fatal(err)
				}
				return resp.Result
			}
			call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},` + meta + `}}`)
			var last mcp.CreateTaskResult
			created := 0
			b.Run("create", func(b *testing.B) {
				b.ReportAllocs()
				start := time.Now()
				for b.Loop() {
					if err := json.Unmarshal(do(call), &last); err != nil {
						b.Fatal(err)
					}
					created++
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
			})
			// Let the handlers finish so that the task read is a completed one.
			get := []byte(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"` + last.Task.TaskID + `",` + meta + `}}`)
			testwait.WaitFor(b, "the last task to complete", func() bool {
				var d mcp.DetailedTask
				if err := json.Unmarshal(do(get), &d); err != nil {
					b.Fatal(err)
				}
				return d.Status == mcp.TaskCompleted
			})
			b.Run("get", func(b *testing.B) {
				b.ReportAllocs()
				start := time.Now()
				for b.Loop() {
					do(get)
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
			})
			if dir != "" && created > 0 {
				var size int64
				for _, f := range []string{"tasks.db", "tasks.db-wal"} {
					if fi, err := os.Stat(filepath.Join(dir, f)); err == nil {
						size += fi.Size()
					}
				}
				b.Logf("%d tasks, %d bytes on disk (db + wal): %d bytes per task", created, size, size/int64(created))
			}
		})
	}
}
