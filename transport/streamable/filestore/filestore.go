// Package sqlitestore keeps a streamable.SessionStore in an SQLite file, so
// that the 2025-era sessions of one process survive its restart: a client
// holding a session goes on with it, on the same id, once the process is
// back (toolwire serve --data-dir, a gateway's data_dir). Replicas that
// serve one endpoint together share sessions through Redis instead
// (package redisstore). Stream events stay in memory: EventStore wraps
// their store so that a client's GET stream resumes after a restart.
//
// A request on an established session costs no SQLite operation most of
// the time: the store keeps the records it holds in memory too, and writes
// a session's expiry only once it has moved past what the file says, a
// quarter of the ttl ahead each time. A session may therefore outlive its
// ttl by up to a quarter of it when the process restarted meanwhile.
package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/internal/sqlitedb"
	"github.com/toolwire/toolwire/transport/streamable"
)

// DefaultMaxSessions is how many sessions a store holds unless
// Limits.MaxSessions says otherwise.
const DefaultMaxSessions = 100_000

// MaxSessionState bounds a session's stored state, as redisstore's does.
const MaxSessionState = 4 << 20

// MaxIDLen bounds a session id; a longer one was never stored.
const MaxIDLen = 256

// Option configures Open.
type Option interface{ applySQLiteStore(*config) }

type config struct {
	maxSessions int
	now         func() time.Time
}

type option func(*config)

func (f option) applySQLiteStore(c *config) { f(c) }

// Limits are the numbers of a store. A zero field means the default named
// beside it (or, after an earlier WithLimits, leaves what that one set); a
// negative one means the default. Names follow one rule: MaxX is an upper
// bound on X.
type Limits struct {
	// MaxSessions bounds the sessions the file holds (DefaultMaxSessions,
	// 100,000): past it, storing a new session drops those unused longest
	// (expired ones first), whose clients then get 404 and open new ones.
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

// Store is streamable.SessionStore in an SQLite file, for one process at
// a time: it keeps in memory what it wrote, so another process writing the
// same file is not seen.
type Store struct {
	db  *sqlitedb.DB
	cfg config

	insert, touch, load, update, updateLoad, del, delExpired *sql.Stmt

	// wmu orders the writes that change which sessions exist or their
	// state, with the cache changes that go with them.
	wmu       sync.Mutex
	rows      int // rows in the table
	nextSweep int // Create sweeps expired rows once rows reaches it

	mu    sync.Mutex
	cache map[string]*entry

	ops atomic.Int64 // SQLite statements run
}

var _ streamable.SessionStore = (*Store)(nil)

// entry is a session the store holds in memory. Its record's State is
// never changed in place.
type entry struct {
	rec  streamable.SessionRecord
	exp  int64 // unix ms: when the session expires
	disk int64 // unix ms: the expiry its row holds, never before exp once written
}

// migrations bring the schema from version i to i+1. Append only.
var migrations = []string{
	`
CREATE TABLE sessions (
	id      TEXT    NOT NULL PRIMARY KEY,
	owner   BLOB,
	prime   INTEGER NOT NULL,
	state   BLOB,
	expires INTEGER NOT NULL -- unix ms
);
CREATE INDEX sessions_expires ON sessions (expires);
`,
}

// Open opens (creating if missing, with its directory, mode 0700) the
// session database at path. Sessions already expired are dropped.
//
// Commits are written with synchronous=NORMAL: a stored session survives
// the process's crash or SIGKILL; a power loss may lose the newest ones,
// whose clients then open new sessions.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := config{now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.applySQLiteStore(&cfg)
		}
	}
	limits.Default(&cfg.maxSessions, DefaultMaxSessions)
	db, err := sqlitedb.Open(path, "sqlitestore", sqlitedb.Schema{VersionTable: "schema_version", Migrations: migrations},
		sqlitedb.WithSynchronous(sqlitedb.SyncNormal))
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, cfg: cfg, cache: map[string]*entry{}}
	ctx := context.Background()
	for _, p := range []struct {
		st   **sql.Stmt
		text string
	}{
		{&s.insert, `INSERT INTO sessions (id, owner, prime, state, expires) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`},
		{&s.touch, `UPDATE sessions SET expires = max(expires, ?) WHERE id = ?`},
		{&s.load, `UPDATE sessions SET expires = max(expires, ?) WHERE id = ? AND expires > ? RETURNING owner, prime, state, expires`},
		{&s.update, `UPDATE sessions SET state = ?, expires = max(expires, ?) WHERE id = ?`},
		{&s.updateLoad, `UPDATE sessions SET state = ?, expires = max(expires, ?) WHERE id = ? AND expires > ? RETURNING owner, prime, expires`},
		{&s.del, `DELETE FROM sessions WHERE id = ?`},
		{&s.delExpired, `DELETE FROM sessions WHERE id = ? AND expires <= ?`},
	} {
		if *p.st, err = db.W.PrepareContext(ctx, p.text); err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlitestore: %w", err)
		}
	}
	if _, err := db.W.ExecContext(ctx, `DELETE FROM sessions WHERE expires <= ?`, s.nowMS()); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	if err := db.W.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&s.rows); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	s.nextSweep = max(64, 2*s.rows)
	return s, nil
}

// Close closes the database; the store is not usable after.
func (s *Store) Close() error {
	for _, st := range []*sql.Stmt{s.insert, s.touch, s.load, s.update, s.updateLoad, s.del, s.delExpired} {
		if st != nil {
			st.Close()
		}
	}
	return s.db.Close()
}

// Len is how many sessions the file holds, expired ones included until
// they are swept.
func (s *Store) Len() int {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.rows
}

func (s *Store) nowMS() int64 { return s.cfg.now().UnixMilli() }

// ttlMS is a ttl in whole milliseconds, at least one.
func ttlMS(ttl time.Duration) int64 { return max(ttl.Milliseconds(), 1) }

// ahead is the expiry to write for a session expiring at exp: a quarter
// of the ttl later, so that the next quarter's touches write nothing.
func ahead(exp int64, ttl time.Duration) int64 { return exp + ttlMS(ttl)/4 }

var errSessionExists = errors.New("sqlitestore: a session with this id already exists")

// check refuses ids and states past the store's bounds.
func check(id string, state []byte) error {
	if id == "" || len(id) > MaxIDLen {
		return fmt.Errorf("sqlitestore: a session id of %d bytes (1 to %d)", len(id), MaxIDLen)
	}
	if len(state) > MaxSessionState {
		return fmt.Errorf("sqlitestore: session state of %d bytes, more than %d", len(state), MaxSessionState)
	}
	return nil
}

func prime(p bool) int {
	if p {
		return 1
	}
	return 0
}

// Create implements streamable.SessionStore: one INSERT.
func (s *Store) Create(ctx context.Context, rec *streamable.SessionRecord, ttl time.Duration) error {
	if err := check(rec.ID, rec.State); err != nil {
		return err
	}
	now := s.nowMS()
	e := &entry{rec: *rec, exp: now + ttlMS(ttl)}
	e.rec.State = bytes.Clone(rec.State)
	e.disk = ahead(e.exp, ttl)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.rows >= s.nextSweep {
		if err := s.sweepLocked(ctx, now); err != nil {
			return err
		}
	}
	if over := s.rows - s.cfg.maxSessions + 1; over > 0 {
		if err := s.evictLocked(ctx, over); err != nil {
			return err
		}
	}
	inserted, err := s.insertLocked(ctx, e)
	if err == nil && !inserted {
		// The id is stored: taken again only once that session expired.
		s.mu.Lock()
		old := s.cache[rec.ID]
		s.mu.Unlock()
		var n int64
		switch {
		case old != nil && old.exp > now:
		case old != nil:
			n, err = s.execLocked(ctx, s.del, rec.ID)
		default:
			n, err = s.execLocked(ctx, s.delExpired, rec.ID, now)
		}
		if n == 1 {
			s.forgetLocked(rec.ID, 1)
			inserted, err = s.insertLocked(ctx, e)
		}
	}
	if err != nil {
		return fmt.Errorf("sqlitestore: storing a session: %w", err)
	}
	if !inserted {
		return errSessionExists
	}
	s.rows++
	s.mu.Lock()
	s.cache[rec.ID] = e
	s.mu.Unlock()
	return nil
}

func (s *Store) insertLocked(ctx context.Context, e *entry) (bool, error) {
	n, err := s.execLocked(ctx, s.insert, e.rec.ID, []byte(e.rec.Owner), prime(e.rec.Prime), e.rec.State, e.disk)
	return n == 1, err
}

// Touch implements streamable.SessionStore. A session this process holds
// costs nothing, or one UPDATE of its expiry once a quarter of the ttl;
// one it does not hold yet (opened before a restart) one UPDATE that reads
// it.
func (s *Store) Touch(ctx context.Context, id string, ttl time.Duration) (*streamable.SessionRecord, error) {
	if check(id, nil) != nil {
		return nil, streamable.ErrSessionNotFound // never stored
	}
	now := s.nowMS()
	exp := now + ttlMS(ttl)
	for {
		s.mu.Lock()
		e := s.cache[id]
		if e == nil {
			s.mu.Unlock()
			rec, again, err := s.loadTouch(ctx, id, now, exp, ttl)
			if again {
				continue
			}
			return rec, err
		}
		if e.exp <= now {
			s.mu.Unlock()
			return nil, s.expired(ctx, id, e)
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
			s.ops.Add(1)
			if _, err := s.touch.ExecContext(ctx, write, id); err != nil {
				s.mu.Lock()
				if e.disk == write {
					e.disk = was // the next Touch tries again
				}
				s.mu.Unlock()
				return nil, fmt.Errorf("sqlitestore: refreshing a session: %w", err)
			}
		}
		return &rec, nil
	}
}

// loadTouch is Touch of a session not in memory: read from the file (one
// UPDATE that also pushes its expiry back) and kept. again: a request that
// came first loaded it meanwhile.
func (s *Store) loadTouch(ctx context.Context, id string, now, exp int64, ttl time.Duration) (_ *streamable.SessionRecord, again bool, _ error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	loaded := s.cache[id] != nil
	s.mu.Unlock()
	if loaded {
		return nil, true, nil
	}
	var owner, state []byte
	var p int
	e := &entry{exp: exp}
	s.ops.Add(1)
	err := s.load.QueryRowContext(ctx, ahead(exp, ttl), id, now).Scan(&owner, &p, &state, &e.disk)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, streamable.ErrSessionNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("sqlitestore: reading a session: %w", err)
	}
	if p != 0 && p != 1 {
		return nil, false, fmt.Errorf("sqlitestore: session %q is stored damaged", id)
	}
	e.rec = streamable.SessionRecord{ID: id, Owner: string(owner), Prime: p == 1, State: state}
	s.mu.Lock()
	s.cache[id] = e
	s.mu.Unlock()
	rec := e.rec
	rec.State = bytes.Clone(state)
	return &rec, false, nil
}

// expired forgets a session found expired in memory: its row may hold a
// later expiry (written ahead), which must not bring it back.
func (s *Store) expired(ctx context.Context, id string, e *entry) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	same := s.cache[id] == e
	s.mu.Unlock()
	if !same { // deleted or opened again meanwhile
		return streamable.ErrSessionNotFound
	}
	n, err := s.execLocked(ctx, s.del, id)
	if err != nil {
		return fmt.Errorf("sqlitestore: dropping an expired session: %w", err)
	}
	s.forgetLocked(id, n)
	return streamable.ErrSessionNotFound
}

// Update implements streamable.SessionStore: one UPDATE.
func (s *Store) Update(ctx context.Context, id string, state []byte, ttl time.Duration) error {
	if err := check(id, state); err != nil {
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
	s.mu.Unlock()
	if e == nil {
		var owner []byte
		var p int
		e = &entry{exp: exp}
		s.ops.Add(1)
		err := s.updateLoad.QueryRowContext(ctx, state, ahead(exp, ttl), id, now).Scan(&owner, &p, &e.disk)
		if errors.Is(err, sql.ErrNoRows) {
			return streamable.ErrSessionNotFound
		}
		if err != nil {
			return fmt.Errorf("sqlitestore: updating a session: %w", err)
		}
		e.rec = streamable.SessionRecord{ID: id, Owner: string(owner), Prime: p == 1, State: state}
		s.mu.Lock()
		s.cache[id] = e
		s.mu.Unlock()
		return nil
	}
	s.mu.Lock()
	live, disk := e.exp > now, max(e.disk, ahead(exp, ttl))
	s.mu.Unlock()
	if !live {
		n, err := s.execLocked(ctx, s.del, id)
		if err != nil {
			return fmt.Errorf("sqlitestore: dropping an expired session: %w", err)
		}
		s.forgetLocked(id, n)
		return streamable.ErrSessionNotFound
	}
	n, err := s.execLocked(ctx, s.update, state, disk, id)
	if err != nil {
		return fmt.Errorf("sqlitestore: updating a session: %w", err)
	}
	if n == 0 { // its row was dropped (the cap)
		s.forgetLocked(id, 0)
		return streamable.ErrSessionNotFound
	}
	s.mu.Lock()
	e.rec.State, e.exp, e.disk = state, exp, disk
	s.mu.Unlock()
	return nil
}

// Delete implements streamable.SessionStore: one DELETE.
func (s *Store) Delete(ctx context.Context, id string) error {
	if check(id, nil) != nil {
		return nil // never stored
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	n, err := s.execLocked(ctx, s.del, id)
	if err != nil {
		return fmt.Errorf("sqlitestore: deleting a session: %w", err)
	}
	s.forgetLocked(id, n)
	return nil
}

// execLocked runs a writing statement and returns the rows it changed.
func (s *Store) execLocked(ctx context.Context, st *sql.Stmt, args ...any) (int64, error) {
	s.ops.Add(1)
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// forgetLocked drops a session from memory, n of its rows having been
// deleted.
func (s *Store) forgetLocked(id string, n int64) {
	s.rows -= int(n)
	s.mu.Lock()
	delete(s.cache, id)
	s.mu.Unlock()
}

// sweepLocked drops the expired sessions, those whose rows say so and
// those memory says so, and sets the size at which Create sweeps next:
// twice what is left, so that a sweep costs O(1) per Create.
func (s *Store) sweepLocked(ctx context.Context, now int64) error {
	var gone []string
	s.mu.Lock()
	for id, e := range s.cache {
		if e.exp <= now {
			gone = append(gone, id)
		}
	}
	s.mu.Unlock()
	s.ops.Add(1)
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestore: sweeping: %w", err)
	}
	defer tx.Rollback()
	del := tx.StmtContext(ctx, s.del)
	for _, id := range gone {
		if _, err := del.ExecContext(ctx, id); err != nil {
			return fmt.Errorf("sqlitestore: sweeping: %w", err)
		}
	}
	expired, err := returnedIDs(tx.QueryContext(ctx, `DELETE FROM sessions WHERE expires <= ? RETURNING id`, now))
	if err != nil {
		return fmt.Errorf("sqlitestore: sweeping: %w", err)
	}
	gone = append(gone, expired...)
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		return fmt.Errorf("sqlitestore: sweeping: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitestore: sweeping: %w", err)
	}
	s.mu.Lock()
	for _, id := range gone {
		delete(s.cache, id)
	}
	s.mu.Unlock()
	s.rows = n
	s.nextSweep = max(64, 2*n)
	return nil
}

// returnedIDs reads the ids a DELETE ... RETURNING id query gives back
// (its rows and error passed on as they come) and closes the rows.
func returnedIDs(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	return ids, nil
}

// evictLocked drops the n sessions whose rows expire first: expired ones,
// then those unused longest.
func (s *Store) evictLocked(ctx context.Context, n int) error {
	s.ops.Add(1)
	gone, err := returnedIDs(s.db.W.QueryContext(ctx,
		`DELETE FROM sessions WHERE id IN (SELECT id FROM sessions ORDER BY expires LIMIT ?) RETURNING id`, n))
	if err != nil {
		return fmt.Errorf("sqlitestore: dropping sessions past the cap: %w", err)
	}
	for _, id := range gone {
		s.forgetLocked(id, 1)
	}
	return nil
}
