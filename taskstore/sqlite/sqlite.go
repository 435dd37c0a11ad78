// Package sqlite is a taskstore.Store in an SQLite database file, kept apart
// from package taskstore so that a server using only the memory store links
// no database driver.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	driver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/toolwire/toolwire/internal/sqlitedb"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
)

// Store keeps tasks in an SQLite database file, through the pure-Go
// driver modernc.org/sqlite (no cgo). It survives restarts of the process and
// crashes of the machine:
//
//   - journal_mode=WAL: readers never block the writer nor each other;
//   - synchronous=FULL: every commit syncs the WAL to disk before it
//     returns, so a task is durable once Create returns, as taskstore.Store requires
//     (synchronous=NORMAL would keep it safe from corruption but could lose
//     the last commits on power loss);
//   - busy_timeout: a writer waits (up to 10s) for another process's write
//     lock rather than failing at once;
//   - writes go through a single connection and read-modify-writes run in
//     BEGIN IMMEDIATE transactions; reads use a small pool of read-only
//     connections;
//   - a Sweep before any task can have expired runs no statement: the
//     store knows the earliest expiry it wrote since the table was last
//     read, so an idle server's periodic sweep costs nothing.
//
// Several processes may open the same file; each then bounds its own
// writes, and SQLite serialises them. The expired tasks another process
// wrote are swept by this one's next sweep that runs, or when the table is
// full; reads never return them meanwhile.
type Store struct {
	cfg  taskstore.Settings
	path string
	db   *sqlitedb.DB
	w    *sql.DB // one connection: this process's only writer
	r    *sql.DB // read-only connections

	// wmu orders this process's writes with its sweeps, so that earliest
	// is never later than a row's expiry when a sweep reads it.
	wmu      sync.Mutex
	earliest int64 // unix ns: no row expires before it, as far as this process wrote or read
	sweeps   int   // DELETE statements Sweep ran

	closeOnce sync.Once
	closeErr  error
}

var _ taskstore.Store = (*Store)(nil)

// busyTimeout is how long a statement waits for a lock held elsewhere.
const busyTimeout = sqlitedb.BusyTimeout

// Open opens the task database at path, creating it (and its
// directory, mode 0700) if missing, and brings its schema up to date. A new
// database file is created with mode 0600; SQLite gives its -wal and -shm
// files the same mode. An existing file keeps its mode.
func Open(path string, opts ...taskstore.Option) (*Store, error) {
	db, err := sqlitedb.Open(path, "taskstore", sqlitedb.Schema{
		VersionTable: "schema_version", Migrations: migrations, Pragmas: []string{"foreign_keys(1)"},
	})
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: taskstore.Resolve(opts...), path: db.Path, db: db, w: db.W, r: db.R}
	if s.earliest, err = s.earliestExpiry(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("taskstore: %w", err)
	}
	return s, nil
}

// earliestExpiry is when the first task in the table expires
// (math.MaxInt64: none does).
func (s *Store) earliestExpiry(ctx context.Context) (int64, error) {
	var first sql.NullInt64
	if err := s.w.QueryRowContext(ctx, `SELECT min(expires_ns) FROM tasks`).Scan(&first); err != nil {
		return 0, err
	}
	if !first.Valid {
		return math.MaxInt64, nil
	}
	return first.Int64, nil
}

// wrote lowers earliest to a task's expiry, before its row is written
// (s.wmu held).
func (s *Store) wrote(r *taskstore.Record) { s.earliest = min(s.earliest, r.ExpiryNanos()) }

// migrations bring the schema from version i to i+1. Append only: never
// edit one that has shipped.
var migrations = []string{
	// 1: the tasks table. Times are unix nanoseconds; expires_ns is
	// created_ns+ttl_ns, NULL for no limit. JSON is kept verbatim as BLOB,
	// NULL when absent. task_count, kept by triggers, bounds the table
	// without a COUNT(*) per Create.
	`
CREATE TABLE tasks (
	id               TEXT    NOT NULL PRIMARY KEY,
	owner            TEXT    NOT NULL,
	status           TEXT    NOT NULL,
	status_message   TEXT    NOT NULL DEFAULT '',
	created_ns       INTEGER NOT NULL,
	updated_ns       INTEGER NOT NULL,
	ttl_ns           INTEGER NOT NULL DEFAULT 0,
	expires_ns       INTEGER,
	poll_ns          INTEGER NOT NULL DEFAULT 0,
	protocol_version TEXT    NOT NULL DEFAULT '',
	method           TEXT    NOT NULL DEFAULT '',
	params           BLOB,
	result           BLOB,
	error            BLOB,
	input_requests   BLOB
);
CREATE INDEX tasks_owner_created ON tasks (owner, created_ns DESC, id DESC);
CREATE INDEX tasks_expires ON tasks (expires_ns) WHERE expires_ns IS NOT NULL;
CREATE INDEX tasks_active ON tasks (status) WHERE status IN ('working', 'input_required');
CREATE TABLE task_count (n INTEGER NOT NULL);
INSERT INTO task_count (n) VALUES (0);
CREATE TRIGGER tasks_counted_in AFTER INSERT ON tasks BEGIN UPDATE task_count SET n = n + 1; END;
CREATE TRIGGER tasks_counted_out AFTER DELETE ON tasks BEGIN UPDATE task_count SET n = n - 1; END;
`,
}

const columns = `id, owner, status, status_message, created_ns, updated_ns, ttl_ns, poll_ns, protocol_version, method, params, result, error, input_requests`

type scanner interface{ Scan(...any) error }

func scanRecord(row scanner) (*taskstore.Record, error) {
	var (
		r                 taskstore.Record
		status            string
		created, updated  int64
		ttl, poll         int64
		params, result    []byte
		rpcErr, inputReqs []byte
	)
	if err := row.Scan(&r.ID, &r.Owner, &status, &r.StatusMessage, &created, &updated, &ttl, &poll,
		&r.ProtocolVersion, &r.Method, &params, &result, &rpcErr, &inputReqs); err != nil {
		return nil, err
	}
	r.Status = mcp.TaskStatus(status)
	r.CreatedAt, r.UpdatedAt = time.Unix(0, created), time.Unix(0, updated)
	r.TTL, r.PollInterval = time.Duration(ttl), time.Duration(poll)
	r.Params, r.Result, r.Error, r.InputRequests = raw(params), raw(result), raw(rpcErr), raw(inputReqs)
	return &r, nil
}

func raw(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}

// blob binds b as a BLOB, or NULL when empty.
func blob(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}

func expires(r *taskstore.Record) any {
	if e := r.ExpiryNanos(); e != math.MaxInt64 {
		return e
	}
	return nil
}

func isConstraint(err error) bool {
	var e *driver.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// Create implements taskstore.Store. It sets r.CreatedAt and r.UpdatedAt. When it
// returns nil the task is committed and synced to disk.
func (s *Store) Create(ctx context.Context, r *taskstore.Record) error {
	now := s.cfg.Clock()
	c, err := taskstore.PrepareCreate(r, now)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		s.wmu.Lock()
		s.wrote(c)
		res, err := s.w.ExecContext(ctx, `INSERT INTO tasks (`+columns+`, expires_ns)
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
			WHERE (SELECT n FROM task_count) < ?`,
			c.ID, c.Owner, string(c.Status), c.StatusMessage, now.UnixNano(), now.UnixNano(),
			int64(c.TTL), int64(c.PollInterval), c.ProtocolVersion, c.Method,
			blob(c.Params), blob(c.Result), blob(c.Error), blob(c.InputRequests), expires(c),
			s.cfg.Limits.MaxTasks)
		s.wmu.Unlock()
		if err != nil {
			if isConstraint(err) {
				return taskstore.ErrExists
			}
			return fmt.Errorf("taskstore: create: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("taskstore: create: %w", err)
		} else if n == 1 {
			return nil
		}
		// Full: make room by sweeping expired tasks, once.
		if attempt > 0 {
			return taskstore.ErrFull
		}
		if swept, err := s.sweep(ctx, now, true); err != nil {
			return err
		} else if swept == 0 {
			return taskstore.ErrFull
		}
	}
}

// Get implements taskstore.Store.
func (s *Store) Get(ctx context.Context, owner, id string) (*taskstore.Record, error) {
	row := s.r.QueryRowContext(ctx, `SELECT `+columns+` FROM tasks
		WHERE id = ? AND owner = ? AND (expires_ns IS NULL OR expires_ns > ?)`,
		id, owner, s.cfg.Clock().UnixNano())
	r, err := scanRecord(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("taskstore: get: %w", err)
	}
	return r, nil
}

// Update implements taskstore.Store. It runs in a BEGIN IMMEDIATE transaction on the
// store's only writing connection, so fn must not call the store.
func (s *Store) Update(ctx context.Context, id string, fn func(*taskstore.Record) error) (_ *taskstore.Record, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("taskstore: update: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	now := s.cfg.Clock()
	old, err := scanRecord(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM tasks
		WHERE id = ? AND (expires_ns IS NULL OR expires_ns > ?)`, id, now.UnixNano()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("taskstore: update: %w", err)
	}
	n, err := taskstore.ApplyUpdate(old, fn, now)
	if err != nil {
		return nil, err
	}
	s.wrote(n)
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET status = ?, status_message = ?, updated_ns = ?,
		ttl_ns = ?, expires_ns = ?, poll_ns = ?, protocol_version = ?, method = ?,
		params = ?, result = ?, error = ?, input_requests = ? WHERE id = ?`,
		string(n.Status), n.StatusMessage, n.UpdatedAt.UnixNano(),
		int64(n.TTL), expires(n), int64(n.PollInterval), n.ProtocolVersion, n.Method,
		blob(n.Params), blob(n.Result), blob(n.Error), blob(n.InputRequests), id); err != nil {
		return nil, fmt.Errorf("taskstore: update: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("taskstore: update: %w", err)
	}
	return n, nil
}

// List implements taskstore.Store.
func (s *Store) List(ctx context.Context, owner, cursor string, limit int) (taskstore.Page, error) {
	cc, cid, err := taskstore.DecodeCursor(cursor)
	if err != nil {
		return taskstore.Page{}, err
	}
	limit = taskstore.ClampLimit(limit)
	rows, err := s.r.QueryContext(ctx, `SELECT `+columns+` FROM tasks
		WHERE owner = ? AND (created_ns < ? OR (created_ns = ? AND id < ?))
		AND (expires_ns IS NULL OR expires_ns > ?)
		ORDER BY created_ns DESC, id DESC LIMIT ?`,
		owner, cc, cc, cid, s.cfg.Clock().UnixNano(), limit+1)
	if err != nil {
		return taskstore.Page{}, fmt.Errorf("taskstore: list: %w", err)
	}
	defer rows.Close()
	var p taskstore.Page
	for rows.Next() {
		if len(p.Records) == limit {
			last := p.Records[limit-1]
			p.Next = taskstore.EncodeCursor(last.CreatedAt.UnixNano(), last.ID)
			break
		}
		r, err := scanRecord(rows)
		if err != nil {
			return taskstore.Page{}, fmt.Errorf("taskstore: list: %w", err)
		}
		p.Records = append(p.Records, r)
	}
	if err := rows.Err(); err != nil {
		return taskstore.Page{}, fmt.Errorf("taskstore: list: %w", err)
	}
	return p, nil
}

// Sweep implements taskstore.Store. It runs no statement before the
// earliest expiry the store knows of.
func (s *Store) Sweep(ctx context.Context, now time.Time) (int, error) {
	return s.sweep(ctx, now, false)
}

// sweep deletes the expired tasks; always, or only once earliest has
// passed.
func (s *Store) sweep(ctx context.Context, now time.Time, always bool) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if !always && now.UnixNano() < s.earliest {
		return 0, nil
	}
	s.sweeps++
	res, err := s.w.ExecContext(ctx, `DELETE FROM tasks WHERE expires_ns <= ?`, now.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("taskstore: sweep: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("taskstore: sweep: %w", err)
	}
	if s.earliest, err = s.earliestExpiry(ctx); err != nil {
		s.earliest = math.MinInt64 // unknown: the next sweep runs
		return int(n), fmt.Errorf("taskstore: sweep: %w", err)
	}
	return int(n), nil
}

// Recover implements taskstore.Store.
func (s *Store) Recover(ctx context.Context, message string) (int, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE tasks SET status = 'failed', status_message = ?,
		updated_ns = max(updated_ns, ?) WHERE status IN ('working', 'input_required')`,
		message, s.cfg.Clock().UnixNano())
	if err != nil {
		return 0, fmt.Errorf("taskstore: recover: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// Close implements taskstore.Store: it checkpoints the WAL into the database file
// (truncating the WAL) and closes the connections. Later calls fail.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("taskstore: close: %w", err)
		}
	})
	return s.closeErr
}
