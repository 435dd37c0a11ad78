// Package datadir opens the state a serving process keeps beyond its own
// life: its tasks and 2025-era sessions in a data directory it holds
// locked, or, with Redis, what it shares with the other replicas of one
// endpoint. `toolwire serve` and the gateway daemon keep their state alike
// through it.
package datadir

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/redisstore"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/taskstore"
	tasksqlite "github.com/toolwire/toolwire/taskstore/sqlite"
	"github.com/toolwire/toolwire/transport/streamable"
	"github.com/toolwire/toolwire/transport/streamable/filestore"
)

// Files in a data directory.
const (
	// TasksFile is the task database.
	TasksFile = "tasks.db"
	// LockFile is the file a serving process holds locked: one process
	// per task database, since a server starting on a store marks every
	// task still running in it failed.
	LockFile = "tasks.lock"
	// SessionsFile is the 2025-era sessions' file.
	SessionsFile = "sessions.log"
)

// ErrBusy is Lock's answer for a file another process holds.
var ErrBusy = errors.New("the data directory is in use by another process")

// Tasks is a process's task store and the data directory it holds.
type Tasks struct {
	// Store is the task store; nil: the server's default, in memory.
	Store taskstore.Store
	// Dir is the data directory held; "" when the tasks are not in one.
	Dir string
	// Unlock releases Dir (a no-op when none is held).
	Unlock func()
}

// Memory is the Tasks of a process keeping its tasks in memory.
func Memory() *Tasks { return &Tasks{Unlock: func() {}} }

// OpenTasks opens the SQLite task store in dir (created 0700), which it
// locks for this process; a directory another process holds falls back to
// memory with a warning.
func OpenTasks(dir string, logger *slog.Logger) (*Tasks, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	unlock, err := Lock(filepath.Join(dir, LockFile))
	switch {
	case errors.Is(err, ErrBusy):
		logger.Warn("the data directory is in use by another toolwire process; keeping tasks in memory", "dir", dir)
		return Memory(), nil
	case err != nil:
		return nil, err
	}
	st, err := tasksqlite.Open(filepath.Join(dir, TasksFile))
	if err != nil {
		unlock()
		return nil, err
	}
	logger.Info("keeping tasks on disk", "db", filepath.Join(dir, TasksFile))
	return &Tasks{Store: st, Dir: dir, Unlock: unlock}, nil
}

// ServerOptions are the server options the store needs.
func (t *Tasks) ServerOptions() []server.Option {
	if t.Store == nil {
		return nil
	}
	return []server.Option{server.WithTaskStore(t.Store)}
}

// Close closes the store and unlocks the data directory; the server using
// it has stopped its tasks.
func (t *Tasks) Close(logger *slog.Logger) {
	if t.Store != nil {
		if err := t.Store.Close(); err != nil {
			logger.Error("cannot close the task store", "error", err)
		}
	}
	t.Unlock()
}

// Shared is where a process keeps the state that outlives it beside its
// tasks: with Redis, what every replica of one endpoint shares (2025-era
// sessions, stream events and the messages between replicas, tasks, and
// the gateway's rate limits); without it, its 2025-era sessions in the
// data directory, so that their clients go on with them after a restart.
// A nil *Shared keeps them in memory.
type Shared struct {
	rc       *redisstore.Client // nil without Redis
	sessions *filestore.Store   // the data directory's sessions, without Redis
	logger   *slog.Logger
}

// OpenSessions keeps 2025-era sessions in dir, the data directory the
// process's Tasks hold locked (one process per directory); nil for ""
// (tasks in memory, or a directory another process is using), and
// sessions then stay in memory.
func OpenSessions(dir string, logger *slog.Logger) (*Shared, error) {
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, SessionsFile)
	st, err := filestore.Open(path, filestore.WithLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	logger.Info("keeping 2025-era sessions on disk: their clients go on with them after a restart", "file", path)
	return &Shared{sessions: st, logger: logger}, nil
}

// redisTimeout bounds connecting to Redis at start.
const redisTimeout = 10 * time.Second

// OpenRedis connects to Redis at rawURL, its keys under prefix; a replica
// does not start without it (it would serve sessions no other replica can
// see).
func OpenRedis(ctx context.Context, rawURL, prefix string, logger *slog.Logger) (*Shared, error) {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
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
	return &Shared{rc: rc, logger: logger}, nil
}

// HandlerOptions make an MCP endpoint serve sessions opened on any replica
// and resume any replica's streams; without Redis, serve the sessions
// opened before a restart, whose stream events (in memory, bounded by
// events) are not kept through it.
func (s *Shared) HandlerOptions(events ...streamable.MemoryEventStoreOption) []streamable.HandlerOption {
	if s == nil {
		return nil
	}
	if s.rc == nil {
		return []streamable.HandlerOption{streamable.WithSessionStore(s.sessions),
			streamable.WithEventStore(filestore.NewEventStore(streamable.NewMemoryEventStore(events...)))}
	}
	return []streamable.HandlerOption{
		streamable.WithSessionStore(s.rc.SessionStore()),
		streamable.WithEventStore(s.rc.EventStore()),
		streamable.WithSessionBus(s.rc.SessionBus()),
	}
}

// Limiter is the rate limiter of cfg whose buckets every replica shares;
// nil (keep the in-process one) without Redis or without cfg.
func (s *Shared) Limiter(cfg *ratelimit.Config) (*redisstore.Limiter, error) {
	if s == nil || s.rc == nil || cfg == nil {
		return nil, nil
	}
	l, err := s.rc.Limiter(*cfg)
	if err != nil {
		return nil, fmt.Errorf("rate_limits: %w", err)
	}
	return l, nil
}

// Tasks is the task store every replica shares: a task created on one is
// read, listed and cancelled on any; the tasks of a replica that died are
// failed once its lease lapses. Only with Redis.
func (s *Shared) Tasks() (*Tasks, error) {
	ts, err := s.rc.TaskStore()
	if err != nil {
		return nil, fmt.Errorf("shared store: tasks: %w", err)
	}
	s.logger.Info("keeping tasks in the shared store", "replica", ts.ReplicaID())
	return &Tasks{Store: ts, Unlock: func() {}}, nil
}

// Close disconnects from Redis, or closes the sessions' file.
func (s *Shared) Close() {
	if s == nil {
		return
	}
	if s.sessions != nil {
		if err := s.sessions.Close(); err != nil {
			s.logger.Warn("closing the sessions' file", "error", err)
		}
	}
	if s.rc != nil {
		if err := s.rc.Close(); err != nil {
			s.logger.Warn("closing the shared store", "error", err)
		}
	}
}
