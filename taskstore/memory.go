package taskstore

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/toolwire/toolwire/mcp"
)

// Memory is a Store held in memory: fast, bounded, and gone with the
// process. Records are copied in and out, so callers never share stored
// state. It suits a single server process that need not survive a restart.
type Memory struct {
	cfg Settings

	mu      sync.Mutex
	tasks   map[string]*Record
	byOwner map[string][]key // ascending by (created, id)
	// nextExpiry is at most the earliest expiry (unix nanos) of a held
	// task, so that Create when full scans for expired tasks only when
	// there may be some.
	nextExpiry int64
	closed     bool
}

type key struct {
	created int64
	id      string
}

func compareKeys(a, b key) int {
	if c := cmp.Compare(a.created, b.created); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store holding at most
// DefaultMaxTasks tasks unless Limits.MaxTasks says otherwise.
func NewMemory(opts ...Option) *Memory {
	return &Memory{
		cfg:        Resolve(opts...),
		tasks:      make(map[string]*Record),
		byOwner:    make(map[string][]key),
		nextExpiry: math.MaxInt64,
	}
}

func (m *Memory) check(ctx context.Context) error {
	if m.closed {
		return ErrClosed
	}
	return ctx.Err()
}

// Create implements Store. It sets r.CreatedAt and r.UpdatedAt.
func (m *Memory) Create(ctx context.Context, r *Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return err
	}
	now := m.cfg.Clock()
	if r != nil {
		if _, ok := m.tasks[r.ID]; ok {
			return ErrExists
		}
	}
	if len(m.tasks) >= m.cfg.Limits.MaxTasks {
		if now.UnixNano() >= m.nextExpiry {
			m.sweep(now)
		}
		if len(m.tasks) >= m.cfg.Limits.MaxTasks {
			return ErrFull
		}
	}
	c, err := PrepareCreate(r, now)
	if err != nil {
		return err
	}
	m.tasks[c.ID] = c
	m.nextExpiry = min(m.nextExpiry, c.ExpiryNanos())
	k := key{c.CreatedAt.UnixNano(), c.ID}
	keys := m.byOwner[c.Owner]
	i, _ := slices.BinarySearchFunc(keys, k, compareKeys)
	m.byOwner[c.Owner] = slices.Insert(keys, i, k)
	return nil
}

// Get implements Store.
func (m *Memory) Get(ctx context.Context, owner, id string) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	r, ok := m.tasks[id]
	if !ok || r.Owner != owner || r.Expired(m.cfg.Clock()) {
		return nil, ErrNotFound
	}
	return r.Clone(), nil
}

// Update implements Store. fn runs with the store locked: it must not call
// the store.
func (m *Memory) Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	now := m.cfg.Clock()
	old, ok := m.tasks[id]
	if !ok || old.Expired(now) {
		return nil, ErrNotFound
	}
	n, err := ApplyUpdate(old, fn, now)
	if err != nil {
		return nil, err
	}
	m.tasks[id] = n
	m.nextExpiry = min(m.nextExpiry, n.ExpiryNanos())
	return n.Clone(), nil
}

// List implements Store.
func (m *Memory) List(ctx context.Context, owner, cursor string, limit int) (Page, error) {
	cc, cid, err := DecodeCursor(cursor)
	if err != nil {
		return Page{}, err
	}
	limit = ClampLimit(limit)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return Page{}, err
	}
	now := m.cfg.Clock()
	keys := m.byOwner[owner]
	i, _ := slices.BinarySearchFunc(keys, key{cc, cid}, compareKeys)
	var p Page
	for i--; i >= 0; i-- {
		r := m.tasks[keys[i].id]
		if r.Expired(now) {
			continue
		}
		if len(p.Records) == limit {
			last := p.Records[limit-1]
			p.Next = EncodeCursor(last.CreatedAt.UnixNano(), last.ID)
			break
		}
		p.Records = append(p.Records, r.Clone())
	}
	return p, nil
}

// Sweep implements Store.
func (m *Memory) Sweep(ctx context.Context, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return 0, err
	}
	return m.sweep(now), nil
}

func (m *Memory) sweep(now time.Time) int {
	n := 0
	next := int64(math.MaxInt64)
	for owner, keys := range m.byOwner {
		kept := keys[:0]
		for _, k := range keys {
			r := m.tasks[k.id]
			if r.Expired(now) {
				delete(m.tasks, k.id)
				n++
				continue
			}
			next = min(next, r.ExpiryNanos())
			kept = append(kept, k)
		}
		clear(keys[len(kept):])
		if len(kept) == 0 {
			delete(m.byOwner, owner)
		} else {
			m.byOwner[owner] = kept
		}
	}
	m.nextExpiry = next
	return n
}

// Recover implements Store.
func (m *Memory) Recover(ctx context.Context, message string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return 0, err
	}
	now := m.cfg.Clock()
	n := 0
	for id, r := range m.tasks {
		if r.Status != mcp.TaskWorking && r.Status != mcp.TaskInputRequired {
			continue
		}
		c := r.Clone()
		c.Status, c.StatusMessage = mcp.TaskFailed, message
		c.UpdatedAt = now
		if now.Before(r.UpdatedAt) {
			c.UpdatedAt = r.UpdatedAt
		}
		m.tasks[id] = c
		n++
	}
	return n, nil
}

// Close implements Store: the tasks are dropped and later calls fail with
// ErrClosed.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.tasks, m.byOwner = nil, nil
	return nil
}
