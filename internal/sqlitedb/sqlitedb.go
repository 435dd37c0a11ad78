// Package sqlitedb opens the project's SQLite databases (the task store,
// the audit trail) the one way they need: a file created 0600 in a 0700
// directory, WAL with synchronous FULL (or NORMAL, when the caller chooses
// to trade power-loss durability for speed), one writer connection whose
// transactions take the write lock at once, a small pool of read-only
// connections, and a schema brought up to date by numbered migrations.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"
)

// BusyTimeout is how long a connection waits for another's lock.
const BusyTimeout = 10 * time.Second

// CacheKiB is each connection's page cache (PRAGMA cache_size), in KiB:
// 512 instead of SQLite's 2,000, because a database here has up to nine
// connections (the writer and up to eight readers) and a process up to
// three databases (sessions, tasks, audit), while what they read again
// and again (a session's or task's row and its index pages) is a few
// pages; the operating system's page cache keeps the rest of the file
// close. A Schema's own cache_size pragma overrides it.
const CacheKiB = 512

// DB is an open database: W the one writer, R the readers.
type DB struct {
	W, R *sql.DB
	Path string // absolute
}

// Schema says how a database's schema is kept: its version table and the
// migrations that bring it from version i to i+1 (append only).
type Schema struct {
	VersionTable string
	Migrations   []string
	// Pragmas are added to every connection's DSN (for example
	// "foreign_keys(1)").
	Pragmas []string
}

// Synchronous is the writer's synchronous setting: what a committed
// transaction survives.
type Synchronous int

const (
	// SyncFull (the default) syncs the WAL at every commit: a committed
	// transaction survives a power loss.
	SyncFull Synchronous = iota
	// SyncNormal writes each commit to the WAL with write(2) and syncs only
	// at checkpoints: a committed transaction survives a crash or SIGKILL
	// of the process, not a power loss or an operating system crash (after
	// which the database is still consistent, only missing the newest
	// commits).
	SyncNormal
)

// pragma is the PRAGMA synchronous value of s, and level what reading the
// pragma back returns.
func (s Synchronous) pragma() (name string, level int, err error) {
	switch s {
	case SyncFull:
		return "FULL", 2, nil
	case SyncNormal:
		return "NORMAL", 1, nil
	}
	return "", 0, fmt.Errorf("unknown synchronous setting %d", int(s))
}

// Option configures Open. Nil options are ignored.
type Option interface{ applySQLiteDB(*options) }

type options struct{ sync Synchronous }

type option func(*options)

func (f option) applySQLiteDB(o *options) { f(o) }

// WithSynchronous sets the writer's synchronous setting (default SyncFull).
func WithSynchronous(s Synchronous) Option { return option(func(o *options) { o.sync = s }) }

// Open opens (creating if missing) the database at path and migrates it.
// Errors are prefixed with pkg, the calling package's name.
func Open(path, pkg string, schema Schema, opts ...Option) (*DB, error) {
	var o options
	for _, op := range opts {
		if op != nil {
			op.applySQLiteDB(&o)
		}
	}
	syncName, syncLevel, err := o.sync.pragma()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	if path == "" || strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("%s: unusable database path %q", pkg, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	f.Close()

	base := fmt.Sprintf("%s?_pragma=busy_timeout(%d)", abs, BusyTimeout.Milliseconds())
	ownCache := false
	for _, p := range schema.Pragmas {
		base += "&_pragma=" + p
		ownCache = ownCache || strings.HasPrefix(p, "cache_size(")
	}
	if !ownCache {
		base += fmt.Sprintf("&_pragma=cache_size(-%d)", CacheKiB)
	}
	db := &DB{Path: abs}
	// _txlock=immediate makes BeginTx issue BEGIN IMMEDIATE: the write lock
	// is taken at once, so a read-modify-write never fails to upgrade.
	db.W, err = sql.Open("sqlite", base+"&_pragma=journal_mode(WAL)&_pragma=synchronous("+syncName+")&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	db.W.SetMaxOpenConns(1)
	db.W.SetMaxIdleConns(1)
	db.W.SetConnMaxLifetime(0)
	db.W.SetConnMaxIdleTime(0)

	ctx := context.Background()
	var mode string
	if err := db.W.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		db.W.Close()
		return nil, fmt.Errorf("%s: open %s: %w", pkg, abs, err)
	}
	if !strings.EqualFold(mode, "wal") {
		db.W.Close()
		return nil, fmt.Errorf("%s: %s: journal mode is %q, not wal", pkg, abs, mode)
	}
	var level int
	if err := db.W.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&level); err != nil {
		db.W.Close()
		return nil, fmt.Errorf("%s: open %s: %w", pkg, abs, err)
	}
	if level != syncLevel {
		db.W.Close()
		return nil, fmt.Errorf("%s: %s: synchronous is %d, not %d (%s)", pkg, abs, level, syncLevel, syncName)
	}
	if err := migrate(ctx, db.W, schema); err != nil {
		db.W.Close()
		return nil, fmt.Errorf("%s: migrate: %w", pkg, err)
	}
	db.R, err = sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		db.W.Close()
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	n := min(max(runtime.GOMAXPROCS(0), 2), 8)
	db.R.SetMaxOpenConns(n)
	db.R.SetMaxIdleConns(n)
	db.R.SetConnMaxIdleTime(0)
	db.R.SetConnMaxLifetime(0)
	return db, nil
}

// migrate applies the migrations db lacks, all in one transaction; it is a
// no-op on an up-to-date database and refuses a newer one.
func migrate(ctx context.Context, db *sql.DB, schema Schema) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	table := schema.VersionTable
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM `+table).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if v > len(schema.Migrations) {
		return fmt.Errorf("schema version %d is newer than this program's %d", v, len(schema.Migrations))
	}
	for ; v < len(schema.Migrations); v++ {
		if _, err := tx.ExecContext(ctx, schema.Migrations[v]); err != nil {
			return fmt.Errorf("to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET version = ?`, v); err != nil {
		return err
	}
	return tx.Commit()
}

// Close checkpoints the WAL into the database file and closes both pools.
func (db *DB) Close() error {
	_, cerr := db.W.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	rerr := db.R.Close()
	werr := db.W.Close()
	return errors.Join(cerr, rerr, werr)
}
