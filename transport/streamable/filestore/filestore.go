// Package filestore keeps a streamable.SessionStore in an append-only
// file, so that the 2025-era sessions of one process survive its restart:
// a client holding a session goes on with it, on the same id, once the
// process is back (toolwire serve --data-dir, a gateway's data_dir).
// Replicas that serve one endpoint together share sessions through Redis
// instead (package redisstore). Stream events stay in memory: EventStore
// wraps their store so that a client's GET stream resumes after a restart.
//
// The store holds every session in memory and writes each change as one
// record at the file's end (journal.go): a new session, a new state, an
// expiry moved later, an end. A request on an established session writes
// nothing most of the time: a session's expiry is written only once it has
// moved past what the file says, a quarter of the ttl ahead each time, so
// a session may outlive its ttl by up to a quarter of it when the process
// restarted meanwhile. Records reach the kernel with one write(2) each, so
// a stored session survives the process's crash or SIGKILL; a power loss
// may lose the newest ones, whose clients then open new sessions. Open
// rewrites the file with the live sessions only, and so does a write that
// finds the file twice the size it had then (and at least CompactBytes
// larger), so the file stays within about twice what the live sessions
// take.
package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/transport/streamable"
)

// DefaultMaxSessions is how many sessions a store holds unless
// Limits.MaxSessions says otherwise.
const DefaultMaxSessions = 100_000

// MaxSessionState bounds a session's stored state, as redisstore's does.
const MaxSessionState = 4 << 20

// MaxIDLen bounds a session id; a longer one was never stored.
const MaxIDLen = 256

// CompactBytes is how much the file must have grown since it was last
// rewritten, at least, before a write rewrites it again.
const CompactBytes = 4 << 20

// Option configures Open.
type Option interface{ applyFileStore(*config) }

type config struct {
	maxSessions int
	now         func() time.Time
	logger      *slog.Logger
}

type option func(*config)

func (f option) applyFileStore(c *config) { f(c) }

// Limits are the numbers of a store. A zero field means the default named
// beside it (or, after an earlier WithLimits, leaves what that one set); a
// negative one means the default. Names follow one rule: MaxX is an upper
// bound on X.
type Limits struct {
	// MaxSessions bounds the sessions the store holds (DefaultMaxSessions,
	// 100,000): past it, storing a new session drops those unused longest
	// (expired ones first), a sixty-fourth of the bound beyond what makes
	// room so that the next ones need not; their clients get 404 and open
	// new sessions.
	MaxSessions int
}

// WithLimits sets the store's limits. Its zero fields leave the value an
// earlier WithLimits set, or the default, so limits may be given in
// several options.
func WithLimits(l Limits) Option {
	return option(func(c *config) { limits.Set(&c.maxSessions, l.MaxSessions) })
}

// WithClock sets the clock expiry is judged by (default time.Now).
func WithClock(now func() time.Time) Option {
	return option(func(c *config) { c.now = now })
}

// WithLogger sets where the store reports a damaged file it read past and
// a rewrite that failed (default: discarded).
func WithLogger(l *slog.Logger) Option {
	return option(func(c *config) { c.logger = l })
}

// Store is streamable.SessionStore in a file, for one process at a time
// (the data directory's lock says which): what another process writes to
// the same file is not seen.
type Store struct {
	path string
	cfg  config

	// wmu orders the file's writes, and the changes to which sessions
	// exist or to their state that go with them.
	wmu       sync.Mutex
	f         *os.File
	size      int64 // bytes of the file the store wrote and stands by
	compactAt int64 // size past which a write rewrites the file
	nextSweep int   // Create sweeps expired sessions once it holds this many
	buf       []byte

	mu    sync.Mutex
	cache map[string]*entry

	ops atomic.Int64 // records written
}

var _ streamable.SessionStore = (*Store)(nil)

// entry is a session the store holds. Its record's State is never changed
// in place.
type entry struct {
	rec  streamable.SessionRecord
	exp  int64 // unix ms: when the session expires
	disk int64 // unix ms: the expiry the file holds, never before exp
}

// Open opens (creating if missing, with its directory, mode 0700) the
// session file at path, reads the sessions in it and rewrites it with
// those not yet expired. A file damaged past some point (a record torn by
// a power loss, bytes changed) is read up to it, and the loss logged; a
// file that is not a session file is refused.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := config{now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.applyFileStore(&cfg)
		}
	}
	limits.Default(&cfg.maxSessions, DefaultMaxSessions)
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	s := &Store{path: abs, cfg: cfg, cache: map[string]*entry{}}
	if err := s.load(); err != nil {
		return nil, fmt.Errorf("filestore: %s: %w", abs, err)
	}
	now := s.nowMS()
	for id, e := range s.cache {
		if e.exp <= now {
			delete(s.cache, id)
		}
	}
	if over := len(s.cache) - cfg.maxSessions; over > 0 { // the bound was lowered
		for _, e := range s.oldest(over) {
			delete(s.cache, e.rec.ID)
		}
	}
	s.nextSweep = max(64, 2*len(s.cache))
	if err := s.rewriteLocked(); err != nil {
		return nil, fmt.Errorf("filestore: %s: %w", abs, err)
	}
	return s, nil
}

// load reads the file's sessions into the cache, if there is a file.
func (s *Store) load() error {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() == 0 { // created, then the process died before the header
		return nil
	}
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != magic {
		return errors.New("not a toolwire session file (its first bytes are not the header)")
	}
	end, damage := replay(f, st.Size(), s.apply)
	if damage != nil {
		s.cfg.logger.Warn("the session file is damaged: the sessions recorded after the damage are lost (their clients open new ones)",
			"path", s.path, "damage", damage.Error(), "bytes_dropped", st.Size()-end)
	}
	return nil
}

// apply is what a record read from the file does to the cache.
func (s *Store) apply(r *record) {
	e := s.cache[r.id]
	switch r.op {
	case opCreate:
		s.cache[r.id] = &entry{
			rec: streamable.SessionRecord{ID: r.id, Owner: r.owner, Prime: r.prime, State: r.state},
			exp: r.expires, disk: r.expires,
		}
	case opUpdate:
		if e != nil {
			e.rec.State = r.state
			e.disk = max(e.disk, r.expires)
			e.exp = e.disk
		}
	case opExpiry:
		if e != nil {
			e.disk = max(e.disk, r.expires)
			e.exp = e.disk
		}
	case opDelete:
		delete(s.cache, r.id)
	}
}

// rewriteLocked replaces the file with one that holds the sessions in
// the cache and nothing else.
func (s *Store) rewriteLocked() error {
	s.mu.Lock()
	recs := make([]record, 0, len(s.cache))
	for _, e := range s.cache {
		recs = append(recs, record{op: opCreate, id: e.rec.ID, owner: e.rec.Owner, prime: e.rec.Prime, expires: e.disk, state: e.rec.State})
	}
	s.mu.Unlock()
	f, size, err := writeFile(s.path, func(yield func(*record) bool) {
		for i := range recs {
			if !yield(&recs[i]) {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.size = f, size
	s.compactAt = max(2*size, size+CompactBytes)
	return nil
}

// Close closes the file; the store is not usable after.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// Len is how many sessions the store holds, expired ones included until
// they are swept.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cache)
}

func (s *Store) nowMS() int64 { return s.cfg.now().UnixMilli() }

// ttlMS is a ttl in whole milliseconds, at least one.
func ttlMS(ttl time.Duration) int64 { return max(ttl.Milliseconds(), 1) }

// ahead is the expiry to write for a session expiring at exp: a quarter
// of the ttl later, so that the next quarter's touches write nothing.
func ahead(exp int64, ttl time.Duration) int64 { return exp + ttlMS(ttl)/4 }

var (
	errSessionExists = errors.New("filestore: a session with this id already exists")
	errClosed        = errors.New("filestore: the store is closed")
)

// check refuses ids, owners and states past the store's bounds.
func check(id, owner string, state []byte) error {
	if id == "" || len(id) > MaxIDLen {
		return fmt.Errorf("filestore: a session id of %d bytes (1 to %d)", len(id), MaxIDLen)
	}
	if len(owner) > MaxOwnerLen {
		return fmt.Errorf("filestore: a session owner of %d bytes, more than %d", len(owner), MaxOwnerLen)
	}
	if len(state) > MaxSessionState {
		return fmt.Errorf("filestore: session state of %d bytes, more than %d", len(state), MaxSessionState)
	}
	return nil
}

// writeLocked appends recs to the file with one write. A write that fails
// is cut off again, so that the next one follows the last whole record.
func (s *Store) writeLocked(recs ...record) error {
	if s.f == nil {
		return errClosed
	}
	b := s.buf[:0]
	for i := range recs {
		b = appendRecord(b, &recs[i])
	}
	s.buf = b
	if cap(s.buf) > 64<<10 {
		s.buf = nil // a big state's buffer is not kept
	}
	s.ops.Add(int64(len(recs)))
	if _, err := s.f.WriteAt(b, s.size); err != nil {
		s.f.Truncate(s.size) // best effort: the next write goes at s.size anyway
		return err
	}
	s.size += int64(len(b))
	if s.size >= s.compactAt {
		if err := s.rewriteLocked(); err != nil {
			// The records are written; the file stays longer than it need be.
			s.compactAt = 2 * s.size
			s.cfg.logger.Warn("rewriting the session file failed; it keeps growing until a rewrite succeeds", "path", s.path, "error", err)
		}
	}
	return nil
}

// Create implements streamable.SessionStore: one record.
func (s *Store) Create(_ context.Context, rec *streamable.SessionRecord, ttl time.Duration) error {
	if err := check(rec.ID, rec.Owner, rec.State); err != nil {
		return err
	}
	now := s.nowMS()
	e := &entry{rec: *rec, exp: now + ttlMS(ttl)}
	e.rec.State = bytes.Clone(rec.State)
	e.disk = ahead(e.exp, ttl)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	old, n := s.cache[rec.ID], len(s.cache)
	s.mu.Unlock()
	if old != nil && old.exp > now {
		return errSessionExists
	}
	if n >= s.nextSweep || n >= s.cfg.maxSessions {
		if err := s.sweepLocked(now); err != nil {
			return err
		}
	}
	if err := s.evictLocked(now); err != nil {
		return err
	}
	// An expired session of the same id was dropped by the sweep, or is
	// replaced by this record.
	if err := s.writeLocked(record{op: opCreate, id: e.rec.ID, owner: e.rec.Owner, prime: e.rec.Prime, expires: e.disk, state: e.rec.State}); err != nil {
		return fmt.Errorf("filestore: storing a session: %w", err)
	}
	s.mu.Lock()
	s.cache[rec.ID] = e
	s.mu.Unlock()
	return nil
}

// Touch implements streamable.SessionStore: no record, or one of the
// session's expiry once a quarter of the ttl.
func (s *Store) Touch(_ context.Context, id string, ttl time.Duration) (*streamable.SessionRecord, error) {
	now := s.nowMS()
	exp := now + ttlMS(ttl)
	s.mu.Lock()
	e := s.cache[id]
	if e == nil {
		s.mu.Unlock()
		return nil, streamable.ErrSessionNotFound
	}
	if e.exp <= now {
		s.mu.Unlock()
		return nil, s.expired(id, e, now)
	}
	e.exp = exp
	rec := e.rec
	rec.State = bytes.Clone(e.rec.State)
	var write, was int64
	if e.disk < exp {
		was, write = e.disk, ahead(exp, ttl)
		e.disk = write // concurrent touches need not write it too
	}
	s.mu.Unlock()
	if write != 0 {
		s.wmu.Lock()
		err := s.writeLocked(record{op: opExpiry, id: id, expires: write})
		s.wmu.Unlock()
		if err != nil {
			s.mu.Lock()
			if e.disk == write {
				e.disk = was // the next Touch tries again
			}
			s.mu.Unlock()
			return nil, fmt.Errorf("filestore: refreshing a session: %w", err)
		}
	}
	return &rec, nil
}

// expired forgets a session found expired in memory: the file may hold a
// later expiry (written ahead), which must not bring it back.
func (s *Store) expired(id string, e *entry, now int64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	same := s.cache[id] == e
	s.mu.Unlock()
	if !same { // deleted or opened again meanwhile
		return streamable.ErrSessionNotFound
	}
	if err := s.forgetLocked([]*entry{e}, now); err != nil {
		return fmt.Errorf("filestore: dropping an expired session: %w", err)
	}
	return streamable.ErrSessionNotFound
}

// Update implements streamable.SessionStore: one record.
func (s *Store) Update(_ context.Context, id string, state []byte, ttl time.Duration) error {
	if err := check(id, "", state); err != nil {
		if len(state) > MaxSessionState {
			return err
		}
		return streamable.ErrSessionNotFound
	}
	now := s.nowMS()
	exp := now + ttlMS(ttl)
	state = bytes.Clone(state)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	e := s.cache[id]
	var disk int64
	live := e != nil && e.exp > now
	if live {
		disk = max(e.disk, ahead(exp, ttl))
	}
	s.mu.Unlock()
	if e == nil {
		return streamable.ErrSessionNotFound
	}
	if !live {
		if err := s.forgetLocked([]*entry{e}, now); err != nil {
			return fmt.Errorf("filestore: dropping an expired session: %w", err)
		}
		return streamable.ErrSessionNotFound
	}
	if err := s.writeLocked(record{op: opUpdate, id: id, expires: disk, state: state}); err != nil {
		return fmt.Errorf("filestore: updating a session: %w", err)
	}
	s.mu.Lock()
	e.rec.State, e.exp, e.disk = state, exp, disk
	s.mu.Unlock()
	return nil
}

// Delete implements streamable.SessionStore: one record, for a session
// the store holds.
func (s *Store) Delete(_ context.Context, id string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	e := s.cache[id]
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	if err := s.writeLocked(record{op: opDelete, id: id}); err != nil {
		return fmt.Errorf("filestore: deleting a session: %w", err)
	}
	s.mu.Lock()
	delete(s.cache, id)
	s.mu.Unlock()
	return nil
}

// forgetLocked drops sessions, writing the end of those the file would
// otherwise still hold live at now.
func (s *Store) forgetLocked(gone []*entry, now int64) error {
	var recs []record
	s.mu.Lock()
	for _, e := range gone {
		if e.disk > now {
			recs = append(recs, record{op: opDelete, id: e.rec.ID})
		}
	}
	s.mu.Unlock()
	if len(recs) > 0 {
		if err := s.writeLocked(recs...); err != nil {
			return err
		}
	}
	s.mu.Lock()
	for _, e := range gone {
		if s.cache[e.rec.ID] == e {
			delete(s.cache, e.rec.ID)
		}
	}
	s.mu.Unlock()
	return nil
}

// sweepLocked drops the expired sessions and sets the size at which
// Create sweeps next: twice what is left, so that a sweep costs O(1) per
// Create.
func (s *Store) sweepLocked(now int64) error {
	var gone []*entry
	s.mu.Lock()
	for _, e := range s.cache {
		if e.exp <= now {
			gone = append(gone, e)
		}
	}
	s.mu.Unlock()
	if err := s.forgetLocked(gone, now); err != nil {
		return fmt.Errorf("filestore: sweeping: %w", err)
	}
	s.mu.Lock()
	s.nextSweep = max(64, 2*len(s.cache))
	s.mu.Unlock()
	return nil
}

// evictLocked makes room for one more session under the bound: it drops
// those unused longest, a sixty-fourth of the bound more than that.
func (s *Store) evictLocked(now int64) error {
	s.mu.Lock()
	over := len(s.cache) - s.cfg.maxSessions + 1
	var gone []*entry
	if over > 0 {
		gone = s.oldest(over + s.cfg.maxSessions/64)
	}
	s.mu.Unlock()
	if err := s.forgetLocked(gone, now); err != nil {
		return fmt.Errorf("filestore: dropping sessions past the cap: %w", err)
	}
	return nil
}

// oldest is the n sessions that expire first (s.mu held, or the store
// not yet shared).
func (s *Store) oldest(n int) []*entry {
	all := make([]*entry, 0, len(s.cache))
	for _, e := range s.cache {
		all = append(all, e)
	}
	if n >= len(all) {
		return all
	}
	selectFirst(all, n)
	return all[:n]
}

// selectFirst reorders es so that its first n expire no later than any
// after them: a selection in expected linear time, where a sort would
// cost a log factor more on every eviction at the bound.
func selectFirst(es []*entry, n int) {
	k := n - 1
	lo, hi := 0, len(es)-1
	for lo < hi {
		p := es[lo+rand.IntN(hi-lo+1)].exp
		i, j := lo, hi
		for i <= j {
			for es[i].exp < p {
				i++
			}
			for es[j].exp > p {
				j--
			}
			if i <= j {
				es[i], es[j] = es[j], es[i]
				i++
				j--
			}
		}
		// es[lo..j] expire no later than p, es[i..hi] no earlier, and
		// those between at p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
