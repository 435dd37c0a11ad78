package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
)

func openTest(t testing.TB, opts ...audit.Option) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit", "audit.db")
	return openAt(t, path, opts...), path
}

// openAt opens the store at path with opts, closed at the test's end.
func openAt(t testing.TB, path string, opts ...audit.Option) *Store {
	t.Helper()
	s, err := Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawDB opens the file behind the store's back, as someone editing it by
// hand would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rawExec runs query on the file behind the store's back (rawDB).
func rawExec(t *testing.T, path, query string) {
	t.Helper()
	if _, err := rawDB(t, path).Exec(query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// sqliteKind makes SQLite stores in temporary files for storetest.Run.
var sqliteKind = storetest.Kind{
	Open: func(t *testing.T, opts ...audit.Option) audit.Store {
		s, _ := openTest(t, opts...)
		return s
	},
	Reopen: func(t *testing.T, s audit.Store, opts ...audit.Option) audit.Store {
		s2, err := Open(s.(*Store).Path(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s2.Close() })
		return s2
	},
	Group: func(s audit.Store) *audit.GroupCommit { return s.(*Store).gc },
}

func TestSQLiteStore(t *testing.T) { storetest.Run(t, sqliteKind) }

// TestSQLiteFsync: the writer syncs every commit (synchronous=FULL) unless
// WithFsync(false) asks for NORMAL.
func TestSQLiteFsync(t *testing.T) {
	for _, c := range []struct {
		opts []audit.Option
		want int
	}{{nil, 2}, {[]audit.Option{audit.WithFsync(true)}, 2}, {[]audit.Option{audit.WithFsync(false)}, 1}} {
		s, _ := openTest(t, c.opts...)
		var level int
		if err := s.w.QueryRow(`PRAGMA synchronous`).Scan(&level); err != nil {
			t.Fatal(err)
		}
		if level != c.want {
			t.Errorf("%d options: synchronous %d, want %d", len(c.opts), level, c.want)
		}
	}
}

// TestSQLiteNoFsyncSurvivesKill: without fsync, records acknowledged by a
// process that is then SIGKILLed are all in the file, and verify.
func TestSQLiteNoFsyncSurvivesKill(t *testing.T) {
	const n = 50
	if path := os.Getenv("AUDIT_TEST_KILL_PATH"); path != "" {
		s, err := Open(path, audit.WithFsync(false))
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := s.Append(context.Background(), storetest.Sample(i)); err != nil {
					fmt.Println(err)
					os.Exit(2)
				}
			})
		}
		wg.Wait()
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	path := filepath.Join(t.TempDir(), "audit.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteNoFsyncSurvivesKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AUDIT_TEST_KILL_PATH="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v\n%s", err, out)
	}
	s := openAt(t, path)
	if rep := storetest.MustVerify(t, s); rep.Checked != int64(n) {
		t.Errorf("%d records survived, want %d", rep.Checked, n)
	}
}

func TestSQLiteFileModes(t *testing.T) {
	s, path := openTest(t)
	storetest.AppendN(t, s, 1, nil)
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	if _, err := Open("file:x.db"); err == nil {
		t.Error("file: URI accepted")
	}
}

func TestSQLiteVerifyNamesEditedRow(t *testing.T) {
	s, path := openTest(t)
	storetest.AppendN(t, s, 10, nil)
	rawExec(t, path, `UPDATE audit SET identity = 'mallory' WHERE seq = 6`)
	storetest.WantBreak(t, s, 6, audit.BreakEdited)

	// Editing any column is caught, the arguments and the outcome too.
	for _, set := range []string{`arguments = '{"table":"salaries"}'`, `outcome = 'denied'`, `time_ns = time_ns + 1`, `hash = zeroblob(32)`} {
		t.Run(set, func(t *testing.T) {
			s2, path2 := openTest(t)
			storetest.AppendN(t, s2, 3, nil)
			rawExec(t, path2, `UPDATE audit SET `+set+` WHERE seq = 2`)
			storetest.WantBreak(t, s2, 2, audit.BreakEdited)
		})
	}
	// A hash of the wrong size is reported, not an error.
	s3, path3 := openTest(t)
	storetest.AppendN(t, s3, 3, nil)
	rawExec(t, path3, `UPDATE audit SET prev_hash = x'00' WHERE seq = 3`)
	storetest.WantBreak(t, s3, 3, audit.BreakInvalid)
}

func TestSQLiteVerifyNamesDeletedRows(t *testing.T) {
	s, path := openTest(t)
	storetest.AppendN(t, s, 10, nil)
	rawExec(t, path, `DELETE FROM audit WHERE seq IN (4, 5)`)
	storetest.WantBreak(t, s, 4, audit.BreakMissing)

	// Deleting the newest record leaves no gap; the head catches it.
	s2, path2 := openTest(t)
	storetest.AppendN(t, s2, 5, nil)
	rawExec(t, path2, `DELETE FROM audit WHERE seq = 5`)
	storetest.WantBreak(t, s2, 5, audit.BreakMissing)
}

func TestSQLiteSweepThenTamper(t *testing.T) {
	s, path := openTest(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	storetest.AppendN(t, s, 6, func(i int, r *audit.Record) { r.Time = t0.Add(time.Duration(i) * time.Hour) })
	if _, err := s.Sweep(context.Background(), t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Deleting the oldest remaining record is still caught.
	rawExec(t, path, `DELETE FROM audit WHERE seq = 4`)
	storetest.WantBreak(t, s, 4, audit.BreakMissing)
}

// TestStoreManyRows: a batch longer than one multi-row insert is stored
// whole, in order, and verifies (two executions of insertRowsN rows, then
// single rows).
func TestStoreManyRows(t *testing.T) {
	s, _ := openTest(t, audit.WithFsync(false))
	n := 2*insertRowsN + 5
	batch := make([]*audit.Record, n)
	for i := range batch {
		batch[i] = storetest.Sample(i)
		if err := (audit.Limits{}).Prepare(batch[i], time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.store(context.Background(), batch, false); err != nil {
		t.Fatal(err)
	}
	if rep := storetest.MustVerify(t, s); rep.Checked != int64(n) {
		t.Fatalf("verified %d records, want %d", rep.Checked, n)
	}
	got := storetest.Collect(t, s, audit.Filter{})
	for i, r := range got {
		if r.Seq != int64(i+1) || r.Hash != batch[i].Hash || r.Duration != batch[i].Duration {
			t.Fatalf("row %d: seq %d, want the record appended %d-th", i, r.Seq, i+1)
		}
	}
}

// TestAsyncSQLite: concurrent appenders through the queue into a real store
// form one verifiable chain with every record in it.
func TestAsyncSQLite(t *testing.T) {
	s, _ := openTest(t)
	a := audit.NewAsync(s, audit.WithLimits(audit.Limits{MaxQueue: 1000}))
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Go(func() {
			for i := range 50 {
				if err := a.Append(context.Background(), storetest.Sample(w*50+i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep := storetest.MustVerify(t, s)
	if rep.Checked != 500 || a.Written() != 500 || a.Dropped() != 0 {
		t.Errorf("checked %d, written %d, dropped %d", rep.Checked, a.Written(), a.Dropped())
	}
}
