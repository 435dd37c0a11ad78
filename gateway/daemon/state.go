package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/redisstore"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/taskstore"
	tasksqlite "github.com/toolwire/toolwire/taskstore/sqlite"
	"github.com/toolwire/toolwire/transport/streamable"
	"github.com/toolwire/toolwire/transport/streamable/sqlitestore"
)

// Files in data_dir, the same as `toolwire serve --data-dir` keeps.
const (
	// tasksFileName is the task database.
	tasksFileName = "tasks.db"
	// lockFileName is the file a serving process holds locked: one
	// process per task database, since a server starting on a store marks
	// every task still running in it failed.
	lockFileName = "tasks.lock"
	// sessionsFileName is the session database.
	sessionsFileName = "sessions.db"
)

// errDataDirBusy is lockDataDir's answer for a directory another process
// holds.
var errDataDirBusy = errors.New("the data directory is in use by another process")

// taskStore is the store of the gateway's own tasks.
type taskStore struct {
	store  taskstore.Store // nil: the server's default, in memory
	dir    string          // the data directory in use; "" in memory
	unlock func()
}

// openTaskStoreIn opens the SQLite task store in dir (created 0700), which
// it locks for this process; a directory another process holds falls back
// to memory with a warning.
func openTaskStoreIn(dir string, logger *slog.Logger) (*taskStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	unlock, err := lockDataDir(filepath.Join(dir, lockFileName))
	switch {
	case errors.Is(err, errDataDirBusy):
		logger.Warn("the data directory is in use by another toolwire process; keeping tasks in memory", "dir", dir)
		return &taskStore{unlock: func() {}}, nil
	case err != nil:
		return nil, err
	}
	st, err := tasksqlite.Open(filepath.Join(dir, tasksFileName))
	if err != nil {
		unlock()
		return nil, err
	}
	logger.Info("keeping tasks on disk", "db", filepath.Join(dir, tasksFileName))
	return &taskStore{store: st, dir: dir, unlock: unlock}, nil
}

// serverOptions are the server options the store needs.
func (ts *taskStore) serverOptions() []server.Option {
	if ts.store == nil {
		return nil
	}
	return []server.Option{server.WithTaskStore(ts.store)}
}

// close closes the store and unlocks the data directory; the gateway's
// close has stopped the tasks.
func (ts *taskStore) close(logger *slog.Logger) {
	if ts.store != nil {
		if err := ts.store.Close(); err != nil {
			logger.Error("cannot close the task store", "error", err)
		}
	}
	ts.unlock()
}

// sharedStore is where the gateway keeps the state that outlives it: with
// Redis (store.redis), what every replica of one endpoint shares (2025-era
// sessions, stream events and the messages between replicas, tasks, and
// the rate limits); without it, its 2025-era sessions in data_dir, so that
// their clients go on with them after a restart.
type sharedStore struct {
	rc       *redisstore.Client // nil without Redis
	sessions *sqlitestore.Store // the data directory's sessions, without Redis
	logger   *slog.Logger
}

// openDataDirSessions keeps 2025-era sessions in the data directory the
// task store holds locked (one process per directory); nil when it holds
// none (a directory another process is using), and sessions then stay in
// memory.
func openDataDirSessions(tasks *taskStore, logger *slog.Logger) (*sharedStore, error) {
	if tasks.dir == "" {
		return nil, nil
	}
	path := filepath.Join(tasks.dir, sessionsFileName)
	st, err := sqlitestore.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	logger.Info("keeping 2025-era sessions on disk: their clients go on with them after a restart", "db", path)
	return &sharedStore{sessions: st, logger: logger}, nil
}

// sharedStoreTimeout bounds connecting to the shared store at start.
const sharedStoreTimeout = 10 * time.Second

// openSharedStore connects to Redis at rawURL; the replica does not start
// without it (it would serve sessions no other replica can see).
func openSharedStore(ctx context.Context, rawURL, prefix string, logger *slog.Logger) (*sharedStore, error) {
	ctx, cancel := context.WithTimeout(ctx, sharedStoreTimeout)
	defer cancel()
	rc, err := redisstore.Open(ctx, rawURL, redisstore.WithPrefix(prefix), redisstore.WithLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("shared store: %w", err)
	}
	host := ""
	if u, err := url.Parse(rawURL); err == nil {
		host = u.Host // never the userinfo: it may hold the password
	}
	logger.Info("state shared with the other replicas through Redis", "redis", host, "prefix", prefix)
	return &sharedStore{rc: rc, logger: logger}, nil
}

// handlerOptions make the MCP endpoint serve sessions opened on any
// replica and resume any replica's streams; without Redis, serve the
// sessions opened before a restart, whose stream events (in memory) are
// not kept through it.
func (s *sharedStore) handlerOptions() []streamable.HandlerOption {
	if s == nil {
		return nil
	}
	if s.rc == nil {
		return []streamable.HandlerOption{streamable.WithSessionStore(s.sessions),
			streamable.WithEventStore(sqlitestore.NewEventStore(streamable.NewMemoryEventStore()))}
	}
	return []streamable.HandlerOption{
		streamable.WithSessionStore(s.rc.SessionStore()),
		streamable.WithEventStore(s.rc.EventStore()),
		streamable.WithSessionBus(s.rc.SessionBus()),
	}
}

// shareLimits replaces the in-process rate limiter of g (when the file
// sets rate_limits, cfg) with one whose buckets every replica shares.
func (s *sharedStore) shareLimits(cfg *ratelimit.Config, g *gateway.Config) error {
	if s == nil || s.rc == nil || cfg == nil {
		return nil
	}
	l, err := s.rc.Limiter(*cfg)
	if err != nil {
		return fmt.Errorf("rate_limits: %w", err)
	}
	g.Limits = l
	return nil
}

// taskStore is the task store every replica shares: a task created on
// one is read, listed and cancelled on any; the tasks of a replica that
// died are failed once its lease lapses.
func (s *sharedStore) taskStore() (*taskStore, error) {
	ts, err := s.rc.TaskStore()
	if err != nil {
		return nil, fmt.Errorf("shared store: tasks: %w", err)
	}
	s.logger.Info("keeping tasks in the shared store", "replica", ts.ReplicaID())
	return &taskStore{store: ts, unlock: func() {}}, nil
}

// close disconnects, or closes the session database.
func (s *sharedStore) close() {
	if s == nil {
		return
	}
	if s.sessions != nil {
		if err := s.sessions.Close(); err != nil {
			s.logger.Warn("closing the session database", "error", err)
		}
	}
	if s.rc != nil {
		if err := s.rc.Close(); err != nil {
			s.logger.Warn("closing the shared store", "error", err)
		}
	}
}
