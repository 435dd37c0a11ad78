package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
	"github.com/toolwire/toolwire/taskstore/storetest"
)

const helperEnv = "TASKSTORE_HELPER_DB"

// TestHelperProcess is not a test: run as a child by TestSQLiteCrash, it
// creates a task and kills itself with SIGKILL the moment Create returns,
// without closing anything.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		return // run as a child process by the tests above, with helperEnv set
	}
	s, err := Open(path)
	if err != nil {
		os.Exit(2)
	}
	r := task("crash-task", "alice")
	r.Result = json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`)
	if err := s.Create(context.Background(), r); err != nil {
		os.Exit(3)
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // never reached
}

func TestSQLiteCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	err := cmd.Run()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper did not die by SIGKILL: %v", err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no WAL left behind by the killed process: %v", err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(context.Background(), "alice", "crash-task")
	if err != nil {
		t.Fatalf("task created before the crash: %v", err)
	}
	if got.Status != mcp.TaskWorking || string(got.Result) != `{"content":[{"type":"text","text":"done"}]}` {
		t.Errorf("recovered %+v", got)
	}
	if n, err := s.Recover(context.Background(), "server restarted"); n != 1 || err != nil {
		t.Errorf("Recover = %d, %v", n, err)
	}
}

// TestSQLiteReopenWithoutClose drops a handle without Close (its
// connections stay open, as after a crash) and reads through a second.
func TestSQLiteReopenWithoutClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	ctx := context.Background()
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.Create(ctx, task("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Get(ctx, "alice", "t1"); err != nil {
		t.Fatal(err)
	}
	// Two handles write the same file: SQLite serialises them.
	if _, err := b.Update(ctx, "t1", func(r *taskstore.Record) error { r.StatusMessage = "b"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Get(ctx, "alice", "t1"); err != nil || got.StatusMessage != "b" {
		t.Errorf("a sees %+v, %v", got, err)
	}
}

func TestSQLiteReopenMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	ctx := context.Background()
	for i := range 3 {
		s, err := Open(path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := s.Create(ctx, task(string(rune('a'+i)), "alice")); err != nil {
			t.Fatal(err)
		}
		p, err := s.List(ctx, "alice", "", 10)
		if err != nil || len(p.Records) != i+1 {
			t.Fatalf("open %d: %d tasks, %v", i, len(p.Records), err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v, rows, count int
	if err := db.QueryRow(`SELECT version, (SELECT count(*) FROM schema_version), (SELECT n FROM task_count) FROM schema_version`).Scan(&v, &rows, &count); err != nil {
		t.Fatal(err)
	}
	if v != len(migrations) || rows != 1 || count != 3 {
		t.Errorf("version %d in %d rows, task_count %d; want %d, 1, 3", v, rows, count, len(migrations))
	}
	// A database from a newer program is refused, not damaged.
	if _, err := db.Exec(`UPDATE schema_version SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(path); err == nil || !strings.Contains(err.Error(), "newer") {
		if s != nil {
			s.Close()
		}
		t.Errorf("opening a newer schema: %v", err)
	}
}

func TestSQLitePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "tasks")
	path := filepath.Join(dir, "tasks.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(context.Background(), task("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", filepath.Base(name), fi.Mode().Perm())
		}
	}
}

func TestSQLitePragmas(t *testing.T) {
	s := sqliteMaker(t).(*Store)
	var mode string
	var sync, busy int
	if err := s.w.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := s.w.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := s.w.QueryRow(`PRAGMA busy_timeout`).Scan(&busy); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || sync != 2 || busy != int(busyTimeout.Milliseconds()) {
		t.Errorf("journal_mode %s, synchronous %d, busy_timeout %d; want wal, 2 (FULL), %d", mode, sync, busy, busyTimeout.Milliseconds())
	}
	// The read pool cannot write.
	if _, err := s.r.Exec(`DELETE FROM tasks`); err == nil {
		t.Error("the read-only pool wrote")
	}
}

func TestSQLiteBadPath(t *testing.T) {
	for _, p := range []string{"", "file:x.db", "a?mode=memory"} {
		if s, err := Open(p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts ...taskstore.Option) taskstore.Store {
		return sqliteMaker(t, opts...)
	})
}

func sqliteMaker(t *testing.T, opts ...taskstore.Option) taskstore.Store {
	s, err := Open(filepath.Join(t.TempDir(), "tasks.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func task(id, owner string) *taskstore.Record {
	return &taskstore.Record{
		ID: id, Owner: owner, Status: mcp.TaskWorking,
		ProtocolVersion: "2026-07-28", Method: "tools/call",
		Params: json.RawMessage(`{"name":"slow","arguments":{"n":1}}`),
	}
}
