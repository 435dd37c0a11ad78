package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/datadir"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/taskstore"
)

// dataDirHelp documents --data-dir.
const dataDirHelp = "directory where tasks (tools run as MCP tasks) are kept, in an SQLite database tasks.db, so that they " +
	"survive a restart (tasks still running then are marked failed), and, without --redis, 2025-11-25 HTTP sessions " +
	"(sessions.log), so that clients go on with theirs; created with mode 0700. Default: toolwire under " +
	"the user's state directory, $XDG_STATE_HOME if set to an absolute path, else ~/.local/state " +
	"(macOS: ~/Library/Application Support; Windows: %LocalAppData%). --data-dir \"\" keeps tasks and sessions in memory, lost with the process; " +
	"so does a data directory another toolwire serve is using (a warning says so)"

// defaultDataDir is where `toolwire serve` keeps its tasks by default: the
// toolwire directory under the user's state directory. XDG_STATE_HOME is
// honoured on every system when it is an absolute path (the XDG spec says
// a relative one is to be ignored); otherwise ~/.local/state on Linux and
// other Unix systems, ~/Library/Application Support on macOS and
// %LocalAppData% on Windows.
func defaultDataDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "toolwire"), nil
	}
	if runtime.GOOS == "windows" {
		d := os.Getenv("LocalAppData")
		if d == "" || !filepath.IsAbs(d) {
			return "", errors.New("%LocalAppData% is not set")
		}
		return filepath.Join(d, "toolwire"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("the home directory %q is not an absolute path", home)
	}
	switch runtime.GOOS {
	case "darwin", "ios":
		return filepath.Join(home, "Library", "Application Support", "toolwire"), nil
	case "plan9":
		return filepath.Join(home, "lib", "toolwire"), nil
	}
	return filepath.Join(home, ".local", "state", "toolwire"), nil
}

// taskStore is the task store `toolwire serve` uses.
type taskStore struct {
	store  taskstore.Store // nil: the server's default, in memory
	dir    string          // the data directory in use; "" in memory
	unlock func()

	stopOnce sync.Once
}

// openTaskStore opens the task store the flags ask for: the SQLite
// database in the data directory, or none (memory) for --data-dir "". The
// default directory falls back to memory, with a warning, when it cannot be
// found; an explicit one that cannot be used is an error. A data directory
// another process holds falls back to memory with a warning.
func (f *serveFlags) openTaskStore(explicit bool, logger *slog.Logger) (*taskStore, error) {
	dir := f.dataDir
	if !explicit {
		d, err := defaultDataDir()
		if err != nil {
			logger.Warn("no state directory for tasks; keeping them in memory (pass --data-dir DIR)", "error", err)
			return &taskStore{unlock: func() {}}, nil
		}
		dir = d
	}
	if dir == "" {
		logger.Info("keeping tasks in memory (--data-dir \"\")")
		return &taskStore{unlock: func() {}}, nil
	}
	ts, err := openTaskStoreIn(dir, logger)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	return ts, nil
}

// openTaskStoreIn opens the SQLite task store in dir (created 0700), which
// it locks for this process; a directory another process holds falls back
// to memory with a warning (datadir.OpenTasks).
func openTaskStoreIn(dir string, logger *slog.Logger) (*taskStore, error) {
	t, err := datadir.OpenTasks(dir, logger)
	if err != nil {
		return nil, err
	}
	return &taskStore{store: t.Store, dir: t.Dir, unlock: t.Unlock}, nil
}

// serverOptions are the server options the store needs.
func (ts *taskStore) serverOptions() []server.Option {
	if ts.store == nil {
		return nil
	}
	return []server.Option{server.WithTaskStore(ts.store)}
}

// stopTasks shuts srv's tasks down (those still running are marked
// failed), waiting for them up to timeout. It runs once; a concurrent call
// returns when the first has finished.
func (ts *taskStore) stopTasks(srv *server.Server, timeout time.Duration, logger *slog.Logger) {
	ts.stopOnce.Do(func() {
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			logger.Warn("tasks still running at shutdown", "error", err)
		}
	})
}

// close stops srv's tasks (stopTasks; nil when the caller has stopped
// them), then closes the store and unlocks the data directory.
func (ts *taskStore) close(srv *server.Server, timeout time.Duration, logger *slog.Logger) {
	if srv != nil {
		ts.stopTasks(srv, timeout, logger)
	}
	if ts.store != nil {
		if err := ts.store.Close(); err != nil {
			logger.Error("cannot close the task store", "error", err)
		}
	}
	ts.unlock()
}
