package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"time"

	"github.com/toolwire/toolwire/redisstore"
	"github.com/toolwire/toolwire/transport/streamable"
	"github.com/toolwire/toolwire/transport/streamable/sqlitestore"
)

// sharedStore is where `toolwire serve` keeps the state that outlives it:
// with Redis (--redis), what every replica of one endpoint shares
// (2025-era sessions, stream events and the messages between replicas,
// tasks);
// without it, its 2025-era sessions in the data directory, so that their
// clients go on with them after a restart.
type sharedStore struct {
	rc       *redisstore.Client // nil without Redis
	sessions *sqlitestore.Store // the data directory's sessions, without Redis
	logger   *slog.Logger
}

// sessionsFileName is the session database inside the data directory.
const sessionsFileName = "sessions.db"

// openDataDirSessions keeps 2025-era sessions in the data directory the
// task store holds locked (one process per directory); nil when it holds
// none (--data-dir "", or a directory another process is using), and
// sessions then stay in memory.
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
// sessions opened before a restart, whose stream events (in memory,
// bounded by events) are not kept through it.
func (s *sharedStore) handlerOptions(events ...streamable.MemoryEventStoreOption) []streamable.HandlerOption {
	if s == nil {
		return nil
	}
	if s.rc == nil {
		return []streamable.HandlerOption{streamable.WithSessionStore(s.sessions),
			streamable.WithEventStore(sqlitestore.NewEventStore(streamable.NewMemoryEventStore(events...)))}
	}
	return []streamable.HandlerOption{
		streamable.WithSessionStore(s.rc.SessionStore()),
		streamable.WithEventStore(s.rc.EventStore()),
		streamable.WithSessionBus(s.rc.SessionBus()),
	}
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
