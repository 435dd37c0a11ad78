// Package sqlite is an audit.Store in an SQLite database file, kept apart
// from package audit so that a program reading or verifying trails some
// other way, or keeping them in PostgreSQL, links no SQLite driver.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/sqlitedb"
)

// Store is an audit.Store in an SQLite database file, through the pure-Go driver
// modernc.org/sqlite, set up like taskstore's:
//
//   - journal_mode=WAL: queries and Verify never block Append;
//   - synchronous=FULL: each commit syncs the WAL before Append returns, so
//     a record survives SIGKILL and power loss once Append has returned
//     ("sync" delivery: committed before the response leaves); audit.WithFsync(false)
//     trades the power loss for speed (synchronous=NORMAL);
//   - group commit: Appends that arrive while a commit is under way are
//     written together in the next transaction, with one sync for all;
//   - one writing connection, and each commit a BEGIN IMMEDIATE transaction
//     that reads the head, links the records and moves the head: concurrent
//     appenders, in this process or others, form one chain;
//   - a small pool of read-only connections for Query and Verify.
//
// The head and the anchor (see audit.Anchor) live in the one-row table
// audit_chain, updated in the same transactions as the records.
type Store struct {
	cfg  audit.Settings
	path string
	db   *sqlitedb.DB
	w    *sql.DB // one connection: the only writer
	r    *sql.DB // read-only connections
	gc   *audit.GroupCommit

	// The append's statements, prepared once on the writer connection:
	// insertRows stores insertRowsN records at once (one statement execution
	// costs more than a row in it).
	insert, insertRows, readHead, writeHead *sql.Stmt

	j        *journal    // without fsync: appends go through it (journal.go)
	readOnly bool        // another process holds the journal
	keyed    bool        // the trail is keyed and this store lacks its key
	keyOK    bool        // the head record holds under this store's key
	gaps     []audit.Gap // written when the journal was recovered

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var (
	_ audit.Store    = (*Store)(nil)
	_ audit.Anchored = (*Store)(nil)
)

// Open opens the audit database at path, creating it (mode 0600) and
// its directory (mode 0700) if missing, and brings its schema up to date.
// Reopening a file continues its chain.
func Open(path string, opts ...audit.Option) (*Store, error) {
	cfg := audit.Resolve(opts...)
	level := sqlitedb.SyncFull
	if !cfg.Fsync {
		level = sqlitedb.SyncNormal
	}
	db, err := sqlitedb.Open(path, "audit", sqlitedb.Schema{VersionTable: "audit_schema_version", Migrations: migrations},
		sqlitedb.WithSynchronous(level))
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, path: db.Path, db: db, w: db.W, r: db.R}
	if err := s.prepare(); err != nil {
		db.Close()
		return nil, err
	}
	s.gc = audit.NewGroupCommit(cfg.Limits.MaxBatch, s.commit)
	if s.keyed, s.keyOK, err = s.checkHead(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.openJournal(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// checkHead reads the head record: keyed says it is keyed and s lacks its
// key (none, or another: its HMAC does not hold under s's), ok that it
// holds under s's key.
func (s *Store) checkHead() (keyed, ok bool, err error) {
	r, err := scanRecord(s.r.QueryRow(`SELECT ` + columns + ` FROM audit WHERE seq = (SELECT head_seq FROM audit_chain)`))
	var re *audit.RowError
	if errors.Is(err, sql.ErrNoRows) || errors.As(err, &re) {
		return false, false, nil // none, or unreadable: Verify reports it
	}
	if err != nil {
		return false, false, fmt.Errorf("audit: %w", err)
	}
	keyed, ok = audit.CheckHead(r, s.cfg.Key)
	return keyed, ok, nil
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// migrations bring the schema from version i to i+1. Append only.
var migrations = []string{
	// 1: records (times in Unix ns, hashes as 32-byte BLOBs, v the
	// encoding version) and the one-row chain table (anchor and head).
	`
CREATE TABLE audit (
	seq            INTEGER NOT NULL PRIMARY KEY,
	v              INTEGER NOT NULL,
	time_ns        INTEGER NOT NULL,
	duration_ns    INTEGER NOT NULL,
	request_id     TEXT    NOT NULL,
	session_id     TEXT    NOT NULL,
	identity       TEXT    NOT NULL,
	persona        TEXT    NOT NULL,
	upstream       TEXT    NOT NULL,
	tool           TEXT    NOT NULL,
	method         TEXT    NOT NULL,
	arguments      BLOB,
	outcome        TEXT    NOT NULL,
	error          TEXT    NOT NULL,
	request_bytes  INTEGER NOT NULL,
	response_bytes INTEGER NOT NULL,
	content_blocks INTEGER NOT NULL,
	era            TEXT    NOT NULL,
	transport      TEXT    NOT NULL,
	prev_hash      BLOB    NOT NULL,
	hash           BLOB    NOT NULL
);
CREATE INDEX audit_time ON audit (time_ns);
CREATE INDEX audit_identity ON audit (identity, time_ns);
CREATE TABLE audit_chain (
	anchor_seq  INTEGER NOT NULL,
	anchor_hash BLOB    NOT NULL,
	head_seq    INTEGER NOT NULL,
	head_hash   BLOB    NOT NULL
);
INSERT INTO audit_chain VALUES (0, zeroblob(32), 0, zeroblob(32));
`,
}

const columns = `seq, v, time_ns, duration_ns, request_id, session_id, identity, persona, upstream, tool,
	method, arguments, outcome, error, request_bytes, response_bytes, content_blocks, era, transport, prev_hash, hash`

type scanner interface{ Scan(...any) error }

// scanRecord reads one row; a row that cannot be a record (an unknown
// encoding version, a hash of the wrong size) is an *audit.RowError.
func scanRecord(row scanner) (*audit.Record, error) {
	var (
		r                    audit.Record
		c                    audit.Columns
		reqB, respB, content int64
	)
	if err := row.Scan(&r.Seq, &c.Version, &c.TimeNS, &c.DurationNS, &r.RequestID, &r.SessionID, &r.Identity,
		&r.Persona, &r.Upstream, &r.Tool, &r.Method, &c.Arguments, &c.Outcome, &r.Error,
		&reqB, &respB, &content, &r.Era, &r.Transport, &c.PrevHash, &c.Hash); err != nil {
		return nil, err
	}
	r.RequestBytes, r.ResponseBytes, r.ContentBlocks = reqB, respB, content
	return &r, c.Fill(&r)
}

func readAnchors(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (anchor, head audit.Anchor, err error) {
	var ah, hh []byte
	if err = q.QueryRowContext(ctx, `SELECT anchor_seq, anchor_hash, head_seq, head_hash FROM audit_chain`).
		Scan(&anchor.Seq, &ah, &head.Seq, &hh); err != nil {
		return
	}
	if anchor.Hash, err = audit.ParseDigest(ah); err != nil {
		return
	}
	head.Hash, err = audit.ParseDigest(hh)
	return
}

// Append implements audit.Store: r joins the next group commit (see Store).
func (s *Store) Append(ctx context.Context, r *audit.Record) error {
	if s.closed.Load() {
		return audit.ErrClosed
	}
	if s.readOnly {
		return ErrReadOnly
	}
	if s.keyed {
		return audit.ErrKeyRequired
	}
	if err := s.cfg.Prepare(r); err != nil {
		return err
	}
	if s.j != nil {
		return s.j.append(r)
	}
	return s.gc.Append(ctx, r)
}

// openJournal sets up the journal (journal.go): without fsync appends go
// through it; with fsync one left by a process that died is emptied into
// the database first. A journal another process holds makes this store
// read-only, since that process is appending to the chain.
func (s *Store) openJournal() error {
	if s.cfg.Fsync {
		if _, err := os.Stat(s.path + audit.JournalSuffix); err != nil {
			return nil // none: nothing to recover
		}
	}
	j, err := openJournal(s)
	switch {
	case errors.Is(err, errJournalKeyed):
		s.readOnly, s.keyed = true, true // left for a process with the key
	case err != nil:
		return err
	case j == nil:
		s.readOnly = true
	case s.cfg.Fsync:
		s.gaps = j.gaps
		return j.close() // recovered; appends go straight to the database
	default:
		s.gaps = j.gaps
		s.j = j
	}
	return nil
}

// NeedsKey reports whether the trail is keyed and s was opened without
// its key (audit.WithKey: none, or another): Append then fails with
// audit.ErrKeyRequired, and a journal a killed process left is not recovered.
func (s *Store) NeedsKey() bool { return s.keyed }

// JournalGaps are the runs of records this open found lost to a damaged
// journal, each now a gap record in the chain (see audit.Gap); nil when none.
func (s *Store) JournalGaps() []audit.Gap { return s.gaps }

// ReadOnly reports whether another process appends to this trail (it
// holds the journal): this store then reads and verifies, and Append and
// Sweep fail with ErrReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }

// flush makes a Query, Verify or Sweep see every record appended so far.
func (s *Store) flush(ctx context.Context) error {
	if s.j == nil {
		return nil
	}
	return s.j.flush(ctx)
}

// commit seals batch after the stored head and stores it in one write
// transaction (the group commit's path).
func (s *Store) commit(ctx context.Context, batch []*audit.Record) error {
	return s.store(ctx, batch, false)
}

// store stores batch in one write transaction, sealing each record after
// the stored head. With sealed, records the journal already sealed after
// that head keep their hash (recomputing it would cost as much again).
func (s *Store) store(ctx context.Context, batch []*audit.Record, sealed bool) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit: append: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			err = fmt.Errorf("audit: append: %w", err)
		}
	}()
	var hh []byte
	var head audit.Anchor
	if err = tx.StmtContext(ctx, s.readHead).QueryRowContext(ctx).Scan(&head.Seq, &hh); err != nil {
		return err
	}
	if head.Hash, err = audit.ParseDigest(hh); err != nil {
		return err
	}
	for _, c := range batch {
		if !sealed || c.Seq != head.Seq+1 || c.PrevHash != head.Hash {
			s.cfg.Key.Seal(c, head)
		}
		head = audit.ChainAfter(c)
	}
	var vals []any
	for rest := batch; len(rest) > 0; {
		stmt, n := s.insert, 1
		if len(rest) >= insertRowsN {
			stmt, n = s.insertRows, insertRowsN
		}
		vals = vals[:0]
		for _, c := range rest[:n] {
			vals = appendColumns(vals, c)
		}
		if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, vals...); err != nil {
			return err
		}
		rest = rest[n:]
	}
	if _, err := tx.StmtContext(ctx, s.writeHead).ExecContext(ctx, head.Seq, head.Hash[:]); err != nil {
		return err
	}
	if err := s.gc.BeforeCommit(ctx, batch); err != nil {
		return err
	}
	return tx.Commit()
}

// insertRowsN is how many records one execution of insertRows stores.
const insertRowsN = 16

// appendColumns appends c's column values, in the order of columns.
func appendColumns(vals []any, c *audit.Record) []any {
	var args any
	if c.Arguments != nil {
		args = []byte(c.Arguments)
	}
	return append(vals,
		c.Seq, int64(c.Scheme), c.Time.UnixNano(), int64(c.Duration), c.RequestID, c.SessionID,
		c.Identity, c.Persona, c.Upstream, c.Tool, c.Method, args, string(c.Outcome), c.Error,
		c.RequestBytes, c.ResponseBytes, c.ContentBlocks, c.Era, c.Transport,
		c.PrevHash[:], c.Hash[:])
}

// prepare prepares the append's statements on the writer connection.
func (s *Store) prepare() (err error) {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", strings.Count(columns, ",")+1), ", ") + ")"
	if s.insert, err = s.w.Prepare(`INSERT INTO audit (` + columns + `) VALUES ` + row); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	rows := strings.TrimSuffix(strings.Repeat(row+", ", insertRowsN), ", ")
	if s.insertRows, err = s.w.Prepare(`INSERT INTO audit (` + columns + `) VALUES ` + rows); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if s.readHead, err = s.w.Prepare(`SELECT head_seq, head_hash FROM audit_chain`); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if s.writeHead, err = s.w.Prepare(`UPDATE audit_chain SET head_seq = ?, head_hash = ?`); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Query implements audit.Store. The rows are read as they are yielded, in one
// read transaction on a read-only connection held until the loop ends;
// beside another process's journal, the records it holds past that
// snapshot's head follow them (journal_read.go).
func (s *Store) Query(ctx context.Context, f audit.Filter) iter.Seq2[*audit.Record, error] {
	return func(yield func(*audit.Record, error) bool) {
		fail := func(err error) { yield(nil, fmt.Errorf("audit: query: %w", err)) }
		if s.closed.Load() {
			yield(nil, audit.ErrClosed)
			return
		}
		match, err := f.Matcher()
		if err != nil {
			fail(err)
			return
		}
		if err := s.flush(ctx); err != nil {
			fail(err)
			return
		}
		var journaled []*audit.Record
		if s.j == nil {
			var err error
			if journaled, err = s.journaled(ctx); err != nil {
				fail(err)
				return
			}
		}
		tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			fail(err)
			return
		}
		defer tx.Rollback()
		if len(journaled) > 0 {
			_, head, err := readAnchors(ctx, tx)
			if err == nil {
				journaled, err = continuing(journaled, head)
			}
			if err != nil {
				fail(err)
				return
			}
		}
		q := `SELECT ` + columns + ` FROM audit WHERE seq > ?`
		args := []any{f.AfterSeq}
		if !f.Since.IsZero() {
			q += ` AND time_ns >= ?`
			args = append(args, f.Since.UnixNano())
		}
		if !f.Until.IsZero() {
			q += ` AND time_ns < ?`
			args = append(args, f.Until.UnixNano())
		}
		if f.Identity != "" {
			q += ` AND identity = ?`
			args = append(args, f.Identity)
		}
		if f.Tool != "" {
			if audit.IsGlob(f.Tool) {
				q += ` AND tool GLOB ?`
			} else {
				q += ` AND tool = ?`
			}
			args = append(args, f.Tool)
		}
		if f.Outcome != "" {
			q += ` AND outcome = ?`
			args = append(args, string(f.Outcome))
		}
		q += ` ORDER BY seq`
		if f.Limit > 0 {
			q += ` LIMIT ?`
			args = append(args, f.Limit)
		}
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			fail(err)
			return
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			r, err := scanRecord(rows)
			if err != nil {
				fail(err)
				return
			}
			n++
			if !yield(r, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			fail(err)
			return
		}
		for _, r := range journaled {
			if f.Limit > 0 && n >= f.Limit {
				return
			}
			if r.Seq <= f.AfterSeq || !match(r) {
				continue
			}
			n++
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Verify implements audit.Store. It reads the chain table and the records in one
// read transaction, so appends running meanwhile do not disturb it; beside
// another process's journal, the chain goes on through the records it
// holds past that snapshot's head, the last of them the head.
func (s *Store) Verify(ctx context.Context) (*audit.VerifyReport, error) {
	return s.VerifyAnchored(ctx)
}

// VerifyAnchored implements audit.Anchored.
func (s *Store) VerifyAnchored(ctx context.Context, heads ...audit.Anchor) (_ *audit.VerifyReport, err error) {
	if s.closed.Load() {
		return nil, audit.ErrClosed
	}
	if err := s.flush(ctx); err != nil {
		return nil, fmt.Errorf("audit: verify: %w", err)
	}
	var journaled []*audit.Record
	if s.j == nil {
		if journaled, err = s.journaled(ctx); err != nil {
			return nil, fmt.Errorf("audit: verify: %w", err)
		}
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("audit: verify: %w", err)
	}
	defer tx.Rollback()
	anchor, head, err := readAnchors(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("audit: verify: %w", err)
	}
	stored := head
	journaled, _ = continuing(journaled, stored) // a break is the Verifier's to report
	if len(journaled) > 0 {
		last := journaled[len(journaled)-1]
		head = audit.Anchor{Seq: last.Seq, Hash: last.Hash}
	}
	v := audit.NewVerifier(anchor, head)
	v.UseKey(s.cfg.Key)
	v.Expect(heads...)
	rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM audit ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("audit: verify: %w", err)
	}
	defer rows.Close()
	if err := v.AddRows(rows.Next, func() (*audit.Record, error) { return scanRecord(rows) }); err != nil {
		return nil, fmt.Errorf("audit: verify: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: verify: %w", err)
	}
	if len(journaled) > 0 {
		v.Reached(stored)
		for _, r := range journaled {
			if !v.Add(r) {
				break
			}
		}
	}
	return v.Report(), nil
}

// Head implements audit.Anchored.
func (s *Store) Head(ctx context.Context) (audit.Anchor, error) {
	if s.closed.Load() {
		return audit.Anchor{}, audit.ErrClosed
	}
	if s.j != nil {
		s.j.mu.Lock()
		defer s.j.mu.Unlock()
		return s.j.head, nil
	}
	journaled, err := s.journaled(ctx)
	if err != nil {
		return audit.Anchor{}, fmt.Errorf("audit: head: %w", err)
	}
	_, head, err := readAnchors(ctx, s.r)
	if err != nil {
		return audit.Anchor{}, fmt.Errorf("audit: head: %w", err)
	}
	if journaled, _ = continuing(journaled, head); len(journaled) > 0 {
		head = audit.ChainAfter(journaled[len(journaled)-1])
	}
	return head, nil
}

// Sweep implements audit.Store: in one write transaction it finds the last Seq S
// before the first record at or after olderThan (or the head, when there is
// none), moves the anchor to S (with the hash the first record kept links
// to) and deletes records up to S.
func (s *Store) Sweep(ctx context.Context, olderThan time.Time) (n int, err error) {
	if s.closed.Load() {
		return 0, audit.ErrClosed
	}
	if s.readOnly {
		return 0, ErrReadOnly
	}
	if err := s.flush(ctx); err != nil {
		return 0, fmt.Errorf("audit: sweep: %w", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("audit: sweep: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			err = fmt.Errorf("audit: sweep: %w", err)
		}
	}()
	anchor, head, err := readAnchors(ctx, tx)
	if err != nil {
		return 0, err
	}
	var keep sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT min(seq) FROM audit WHERE time_ns >= ?`,
		olderThan.UnixNano()).Scan(&keep); err != nil {
		return 0, err
	}
	last := head.Seq
	if keep.Valid {
		last = keep.Int64 - 1
	}
	if last <= anchor.Seq {
		return 0, tx.Commit()
	}
	// The new anchor's hash is the one the first record kept links to (a
	// gap record stands for several Seq, so record last may have no row).
	h := head.Hash[:]
	if keep.Valid {
		if err := tx.QueryRowContext(ctx, `SELECT prev_hash FROM audit WHERE seq = ?`, keep.Int64).Scan(&h); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM audit WHERE seq <= ?`, last)
	if err != nil {
		return 0, err
	}
	deleted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE audit_chain SET anchor_seq = ?, anchor_hash = ?`, last, h); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return int(deleted), nil
}

// Close implements audit.Store: it lets the group commit under way finish (the
// Appends still queued fail with ErrClosed), checkpoints the WAL into the
// database file and closes the connections. Later calls of any method
// return ErrClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if s.j != nil {
			if err := s.j.close(); err != nil {
				s.closeErr = fmt.Errorf("audit: close: records left in the journal for the next open: %w", err)
			}
		}
		s.gc.Close()
		for _, st := range []*sql.Stmt{s.insert, s.insertRows, s.readHead, s.writeHead} {
			st.Close()
		}
		if err := s.db.Close(); err != nil && s.closeErr == nil {
			s.closeErr = fmt.Errorf("audit: close: %w", err)
		}
	})
	return s.closeErr
}
