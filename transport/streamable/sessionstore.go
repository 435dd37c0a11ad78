package streamable

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// A SessionStore shares 2025-era sessions between replicas of one endpoint:
// a session opened on any replica is served by any other, which rebuilds it
// from the stored record (the session's jsonrpc.StatefulSession snapshot)
// when a request for it first arrives there. Without one (the default) a
// session lives in the process that opened it. The 2026-07-28 era has no
// sessions and never uses it.

// ErrSessionNotFound is a SessionStore's answer for a session it does not
// hold: it ended, expired, or never existed.
var ErrSessionNotFound = errors.New("streamable: session not found in the session store")

// SessionRecord is what a SessionStore keeps of a session.
type SessionRecord struct {
	ID    string
	Owner string // the auth.Principal key of whoever opened it; "" anonymous
	Prime bool   // the revision knows SSE priming events (2025-11-25+)
	State []byte // the session's snapshot (jsonrpc.StatefulSession)
}

// SessionStore keeps session records for every replica. Every method has
// a deadline from ctx; implementations must be safe for concurrent use.
type SessionStore interface {
	// Create stores a new session, which expires once unused for ttl.
	Create(ctx context.Context, rec *SessionRecord, ttl time.Duration) error
	// Touch returns a session's record and restarts its expiry: the one
	// store operation a request on an established session costs.
	// ErrSessionNotFound when there is none.
	Touch(ctx context.Context, id string, ttl time.Duration) (*SessionRecord, error)
	// Update replaces a session's state (its client changed something);
	// ErrSessionNotFound when the session is gone.
	Update(ctx context.Context, id string, state []byte, ttl time.Duration) error
	// Delete ends a session for every replica.
	Delete(ctx context.Context, id string) error
}

// MemorySessionStore is a SessionStore in this process's memory: for
// several handlers in one process (and for tests); replicas in separate
// processes need a shared one (package redisstore).
type MemorySessionStore struct {
	mu        sync.Mutex
	recs      map[string]memorySession
	nextSweep int // Create sweeps expired records once the map reaches it
	now       func() time.Time
}

type memorySession struct {
	rec     SessionRecord
	expires time.Time
}

// NewMemorySessionStore returns an empty store.
func NewMemorySessionStore() *MemorySessionStore {
	return &MemorySessionStore{recs: map[string]memorySession{}, now: time.Now}
}

// Create implements SessionStore.
func (m *MemorySessionStore) Create(_ context.Context, rec *SessionRecord, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.recs) >= m.nextSweep {
		m.sweepLocked()
	}
	r := *rec
	r.State = slices.Clone(rec.State)
	m.recs[rec.ID] = memorySession{rec: r, expires: m.now().Add(ttl)}
	return nil
}

// Touch implements SessionStore.
func (m *MemorySessionStore) Touch(_ context.Context, id string, ttl time.Duration) (*SessionRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.recs[id]
	if !ok || !m.now().Before(s.expires) {
		delete(m.recs, id)
		return nil, ErrSessionNotFound
	}
	s.expires = m.now().Add(ttl)
	m.recs[id] = s
	r := s.rec
	r.State = slices.Clone(s.rec.State)
	return &r, nil
}

// Update implements SessionStore.
func (m *MemorySessionStore) Update(_ context.Context, id string, state []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.recs[id]
	if !ok || !m.now().Before(s.expires) {
		delete(m.recs, id)
		return ErrSessionNotFound
	}
	s.rec.State = slices.Clone(state)
	s.expires = m.now().Add(ttl)
	m.recs[id] = s
	return nil
}

// Delete implements SessionStore.
func (m *MemorySessionStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	delete(m.recs, id)
	m.mu.Unlock()
	return nil
}

// Len is how many unexpired sessions the store holds.
func (m *MemorySessionStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	return len(m.recs)
}

// sweepLocked forgets expired sessions, and sets the size at which Create
// sweeps next: twice what is left, so a sweep costs O(1) per Create.
func (m *MemorySessionStore) sweepLocked() {
	now := m.now()
	for id, s := range m.recs {
		if !now.Before(s.expires) {
			delete(m.recs, id)
		}
	}
	m.nextSweep = max(64, 2*len(m.recs))
}
