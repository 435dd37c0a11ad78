package datadir_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/toolwire/toolwire/internal/datadir"
)

// One process holds a data directory: a second opening of it keeps its
// tasks in memory, and gets the directory once the first has closed.
func TestTasksHoldTheDirectory(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock here: two opens are not told apart")
	}
	quiet := slog.New(slog.DiscardHandler)
	dir := filepath.Join(t.TempDir(), "state")
	first, err := datadir.OpenTasks(dir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if first.Store == nil || first.Dir != dir || len(first.ServerOptions()) != 1 {
		t.Fatalf("first open: %+v", first)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the directory: %v %v", st.Mode(), err)
	}
	second, err := datadir.OpenTasks(dir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if second.Store != nil || second.Dir != "" || second.ServerOptions() != nil {
		t.Errorf("a second open of a held directory: %+v", second)
	}
	if s, err := datadir.OpenSessions(second.Dir, quiet); s != nil || err != nil {
		t.Errorf("sessions without a directory: %v %v", s, err)
	}
	second.Close(quiet)
	first.Close(quiet)
	again, err := datadir.OpenTasks(dir, quiet)
	if err != nil || again.Dir != dir {
		t.Fatalf("after the first closed: %+v %v", again, err)
	}
	sessions, err := datadir.OpenSessions(again.Dir, quiet)
	if err != nil || sessions == nil || len(sessions.HandlerOptions()) != 2 {
		t.Fatalf("sessions in the directory: %v %v", sessions, err)
	}
	if _, err := os.Stat(filepath.Join(dir, datadir.SessionsFile)); err != nil {
		t.Error(err)
	}
	sessions.Close()
	again.Close(quiet)
	var none *datadir.Shared
	if none.HandlerOptions() != nil {
		t.Error("a nil Shared has handler options")
	}
	none.Close()
}
