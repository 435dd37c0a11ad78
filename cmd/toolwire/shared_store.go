package main

import (
	"context"
	"log/slog"

	"github.com/toolwire/toolwire/internal/datadir"
	"github.com/toolwire/toolwire/transport/streamable"
)

// sharedStore is where `toolwire serve` keeps the state that outlives it
// beside its tasks (datadir.Shared): with --redis, what every replica of
// one endpoint shares; without it, its 2025-era sessions in the data
// directory. A nil *sharedStore keeps them in memory.
type sharedStore struct{ s *datadir.Shared }

// openDataDirSessions keeps 2025-era sessions in the data directory the
// task store holds locked; nil when it holds none.
func openDataDirSessions(tasks *taskStore, logger *slog.Logger) (*sharedStore, error) {
	s, err := datadir.OpenSessions(tasks.dir, logger)
	if s == nil || err != nil {
		return nil, err
	}
	return &sharedStore{s}, nil
}

// openSharedStore connects to Redis at rawURL; the replica does not start
// without it.
func openSharedStore(ctx context.Context, rawURL, prefix string, logger *slog.Logger) (*sharedStore, error) {
	s, err := datadir.OpenRedis(ctx, rawURL, prefix, logger)
	if err != nil {
		return nil, err
	}
	return &sharedStore{s}, nil
}

// handlerOptions make the MCP endpoint serve the sessions kept (see
// datadir.Shared.HandlerOptions).
func (s *sharedStore) handlerOptions(events ...streamable.MemoryEventStoreOption) []streamable.HandlerOption {
	if s == nil {
		return nil
	}
	return s.s.HandlerOptions(events...)
}

// taskStore is the task store every replica shares (with --redis only).
func (s *sharedStore) taskStore() (*taskStore, error) {
	t, err := s.s.Tasks()
	if err != nil {
		return nil, err
	}
	return &taskStore{store: t.Store, unlock: t.Unlock}, nil
}

// close disconnects, or closes the session database.
func (s *sharedStore) close() {
	if s != nil {
		s.s.Close()
	}
}
