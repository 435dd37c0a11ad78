package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolwire/toolwire/transport/streamable"
)

// SessionStore is streamable.SessionStore on Redis: one hash per session
// (owner, prime, state) under the client's prefix, expiring after the
// session's idle timeout, so that every replica of an endpoint serves every
// 2025-era session. Every operation is one round trip.
type SessionStore struct{ c *Client }

var _ streamable.SessionStore = (*SessionStore)(nil)

// MaxSessionState bounds a session's stored state. A server's snapshot is
// far smaller (its subscriptions are bounded); a larger one is refused
// rather than stored.
const MaxSessionState = 4 << 20

// SessionStore returns the client's session store.
func (c *Client) SessionStore() *SessionStore { return &SessionStore{c: c} }

func (s *SessionStore) key(id string) string { return s.c.prefix + "session:" + id }

// The scripts: each checks and changes a session's hash at once.
var (
	// KEYS[1] session; ARGV owner, prime, state, ttl ms. 0: the id exists.
	createSession = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'p', ARGV[2], 's', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`)
	// KEYS[1] session; ARGV ttl ms. The hash's owner, prime and state, or
	// nil when there is none.
	touchSession = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'o', 'p', 's')
if v[1] == false then return nil end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return v`)
	// KEYS[1] session; ARGV state, ttl ms. 0: no such session.
	updateSession = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 's', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)
)

// errSessionExists is Create of an id already stored.
var errSessionExists = errors.New("redisstore: a session with this id already exists")

// Create implements streamable.SessionStore.
func (s *SessionStore) Create(ctx context.Context, rec *streamable.SessionRecord, ttl time.Duration) error {
	if err := s.check(rec.ID, rec.State); err != nil {
		return err
	}
	prime := "0"
	if rec.Prime {
		prime = "1"
	}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	n, err := createSession.Run(octx, s.c.rdb, []string{s.key(rec.ID)}, rec.Owner, prime, rec.State, ttlMillis(ttl)).Int()
	if err = s.c.observe(ctx, err); err != nil {
		return fmt.Errorf("redisstore: storing a session: %w", err)
	}
	if n == 0 {
		return errSessionExists
	}
	return nil
}

// Touch implements streamable.SessionStore.
func (s *SessionStore) Touch(ctx context.Context, id string, ttl time.Duration) (*streamable.SessionRecord, error) {
	if err := s.check(id, nil); err != nil {
		return nil, streamable.ErrSessionNotFound // no such id was ever stored
	}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	v, err := touchSession.Run(octx, s.c.rdb, []string{s.key(id)}, ttlMillis(ttl)).StringSlice()
	if errors.Is(err, redis.Nil) {
		s.c.observe(ctx, err)
		return nil, streamable.ErrSessionNotFound
	}
	if err = s.c.observe(ctx, err); err != nil {
		return nil, fmt.Errorf("redisstore: reading a session: %w", err)
	}
	if len(v) != 3 || (v[1] != "0" && v[1] != "1") {
		return nil, fmt.Errorf("redisstore: session %q is stored damaged", id)
	}
	return &streamable.SessionRecord{ID: id, Owner: v[0], Prime: v[1] == "1", State: []byte(v[2])}, nil
}

// Update implements streamable.SessionStore.
func (s *SessionStore) Update(ctx context.Context, id string, state []byte, ttl time.Duration) error {
	if err := s.check(id, state); err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	n, err := updateSession.Run(octx, s.c.rdb, []string{s.key(id)}, state, ttlMillis(ttl)).Int()
	if err = s.c.observe(ctx, err); err != nil {
		return fmt.Errorf("redisstore: updating a session: %w", err)
	}
	if n == 0 {
		return streamable.ErrSessionNotFound
	}
	return nil
}

// Delete implements streamable.SessionStore.
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	if s.check(id, nil) != nil {
		return nil // never stored
	}
	octx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	if err := s.c.observe(ctx, s.c.rdb.Del(octx, s.key(id)).Err()); err != nil {
		return fmt.Errorf("redisstore: deleting a session: %w", err)
	}
	return nil
}

// check refuses ids and states past the store's bounds.
func (s *SessionStore) check(id string, state []byte) error {
	if id == "" {
		return errors.New("redisstore: empty session id")
	}
	if err := checkName("session", id); err != nil {
		return err
	}
	if len(state) > MaxSessionState {
		return fmt.Errorf("redisstore: session state of %d bytes, more than %d", len(state), MaxSessionState)
	}
	return nil
}

// ttlMillis is a TTL in whole milliseconds, at least one.
func ttlMillis(ttl time.Duration) int64 { return max(ttl.Milliseconds(), 1) }
