package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/redisstore"
	"github.com/toolwire/toolwire/transport/streamable"
)

// sharedStore is a replica's connection to the state every replica of one
// endpoint shares in Redis (the gateway's store.redis, serve's --redis):
// 2025-era sessions, stream events and the messages between replicas,
// tasks, and the gateway's rate limits.
type sharedStore struct {
	rc     *redisstore.Client
	logger *slog.Logger
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
// replica and resume any replica's streams.
func (s *sharedStore) handlerOptions() []streamable.HandlerOption {
	if s == nil {
		return nil
	}
	return []streamable.HandlerOption{
		streamable.WithSessionStore(s.rc.SessionStore()),
		streamable.WithEventStore(s.rc.EventStore()),
		streamable.WithSessionBus(s.rc.SessionBus()),
	}
}

// shareLimits replaces the in-process rate limiter of cfg (when the file
// sets rate_limits) with one whose buckets every replica shares.
func (s *sharedStore) shareLimits(cfg *ratelimit.Config, g *gateway.Config) error {
	if s == nil || cfg == nil {
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

// close disconnects.
func (s *sharedStore) close() {
	if s == nil {
		return
	}
	if err := s.rc.Close(); err != nil {
		s.logger.Warn("closing the shared store", "error", err)
	}
}
