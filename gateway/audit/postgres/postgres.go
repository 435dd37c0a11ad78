// Package postgres is an audit.Store in a PostgreSQL database, shared by
// every gateway process that opens it, kept apart from package audit so
// that a program keeping its trail elsewhere links no PostgreSQL driver.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolwire/toolwire/gateway/audit"
)

// Store is an audit.Store in a PostgreSQL database, shared by every gateway
// process that opens it: their appends form one chain. It keeps the same
// records, hash chain, anchor and head as package sqlite's store, in its
// own tables:
//
//   - toolwire_audit_records: one row per record; times as bigint Unix
//     nanoseconds (so the hash verifies after a round trip), hashes as
//     32-byte bytea, and the caller's text as bytea too, since PostgreSQL
//     text cannot hold a NUL byte or invalid UTF-8 and a record must never
//     be refused, or altered, for what a request contained;
//   - toolwire_audit_head: the one row holding the anchor and the head.
//     Every append transaction locks it (SELECT ... FOR UPDATE) before
//     linking records after the head, which serializes appenders in all
//     processes;
//   - toolwire_audit_meta: the schema version, migrated on open.
//
// Appends are group-committed as in SQLite, one transaction per batch; a
// record is durable when Append returns as far as the server's settings
// make a commit durable (fsync and synchronous_commit on, the defaults). The
// store holds at most audit.Limits.MaxConns connections and dials again after a
// server restart.
type Store struct {
	cfg    audit.Settings
	pool   *pgPool
	secret string // the DSN's password, kept out of error text
	gc     *audit.GroupCommit
	keyed  bool // the trail is keyed and this store lacks its key

	closed    atomic.Bool
	closeOnce sync.Once
}

var (
	_ audit.Store    = (*Store)(nil)
	_ audit.Anchored = (*Store)(nil)
)

// pgMigrations bring the schema from version i to i+1. Append only.
var pgMigrations = []string{
	// 1: records, and the one-row head table (anchor and head).
	`
CREATE TABLE toolwire_audit_records (
	seq            bigint  NOT NULL PRIMARY KEY,
	v              integer NOT NULL,
	time_ns        bigint  NOT NULL,
	duration_ns    bigint  NOT NULL,
	request_id     bytea   NOT NULL,
	session_id     bytea   NOT NULL,
	identity       bytea   NOT NULL,
	persona        bytea   NOT NULL,
	upstream       bytea   NOT NULL,
	tool           bytea   NOT NULL,
	method         bytea   NOT NULL,
	arguments      bytea,
	outcome        text    NOT NULL,
	error          bytea   NOT NULL,
	request_bytes  bigint  NOT NULL,
	response_bytes bigint  NOT NULL,
	content_blocks bigint  NOT NULL,
	era            bytea   NOT NULL,
	transport      bytea   NOT NULL,
	prev_hash      bytea   NOT NULL,
	hash           bytea   NOT NULL
);
CREATE INDEX toolwire_audit_records_time ON toolwire_audit_records (time_ns);
CREATE INDEX toolwire_audit_records_identity ON toolwire_audit_records (identity, time_ns);
CREATE TABLE toolwire_audit_head (
	one         boolean NOT NULL PRIMARY KEY DEFAULT true CHECK (one),
	anchor_seq  bigint  NOT NULL,
	anchor_hash bytea   NOT NULL,
	head_seq    bigint  NOT NULL,
	head_hash   bytea   NOT NULL
);
INSERT INTO toolwire_audit_head (anchor_seq, anchor_hash, head_seq, head_hash)
	VALUES (0, decode(repeat('00', 32), 'hex'), 0, decode(repeat('00', 32), 'hex'));
`,
}

// postgresSchemaVersion is the schema version Open writes.
var postgresSchemaVersion = len(pgMigrations)

// pgMigrateLock is the advisory lock key that serializes migrations of
// processes opening one database at once ("toolaudt").
const pgMigrateLock int64 = 0x746f6f6c61756474

// pgConnectTimeout bounds a connection attempt when the DSN sets none.
const pgConnectTimeout = 10 * time.Second

const pgColumns = `seq, v, time_ns, duration_ns, request_id, session_id, identity, persona, upstream, tool,
	method, arguments, outcome, error, request_bytes, response_bytes, content_blocks, era, transport, prev_hash, hash`

const pgInsert = `INSERT INTO toolwire_audit_records (` + pgColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`

// Open connects to the database at dsn (a postgres:// URL or
// keyword/value string) and creates or migrates the audit tables. Several
// processes may open one database: they append to one chain. The DSN's
// password never appears in an error.
func Open(ctx context.Context, dsn string, opts ...audit.Option) (*Store, error) {
	secret := dsnPassword(dsn)
	if dsn == "" {
		return nil, scrub("postgres", "", errNoDSN)
	}
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, scrub("postgres", secret, err)
	}
	if pc.Password != "" {
		secret = pc.Password
	}
	if pc.ConnectTimeout == 0 {
		pc.ConnectTimeout = pgConnectTimeout
	}
	cfg := audit.Resolve(opts...)
	s := &Store{cfg: cfg, pool: newPGPool(pc, cfg.Limits.MaxConns), secret: secret}
	if err := s.withConn(ctx, s.migrate); err != nil {
		s.pool.close()
		return nil, s.wrap("postgres: open", err)
	}
	err = s.withConn(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		r, err := pgScanRecord(conn.QueryRow(ctx, `SELECT `+pgColumns+` FROM toolwire_audit_records
			WHERE seq = (SELECT head_seq FROM toolwire_audit_head)`))
		var re *audit.RowError
		if errors.Is(err, pgx.ErrNoRows) || errors.As(err, &re) {
			return nil // none, or unreadable: Verify reports it
		}
		if err != nil {
			return err
		}
		s.keyed, _ = audit.CheckHead(r, cfg.Key)
		return nil
	})
	if err != nil {
		s.pool.close()
		return nil, s.wrap("postgres: open", err)
	}
	s.gc = audit.NewGroupCommit(cfg.Limits.MaxBatch, s.commit)
	return s, nil
}

func (s *Store) wrap(op string, err error) error { return scrub(op, s.secret, err) }

// migrate applies the migrations the database lacks, in one transaction
// under an advisory lock; it refuses a database newer than this program.
func (s *Store) migrate(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgMigrateLock); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS toolwire_audit_meta (key text NOT NULL PRIMARY KEY, value text NOT NULL)`); err != nil {
		return err
	}
	var text string
	v := 0
	switch err := tx.QueryRow(ctx, `SELECT value FROM toolwire_audit_meta WHERE key = 'schema_version'`).Scan(&text); {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return err
	default:
		if v, err = strconv.Atoi(text); err != nil {
			return fmt.Errorf("schema version %q: %w", text, err)
		}
	}
	if v > len(pgMigrations) {
		return fmt.Errorf("schema version %d is newer than this program's %d", v, len(pgMigrations))
	}
	if v == len(pgMigrations) {
		return nil
	}
	for ; v < len(pgMigrations); v++ {
		if _, err := tx.Exec(ctx, pgMigrations[v]); err != nil {
			return fmt.Errorf("to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO toolwire_audit_meta (key, value) VALUES ('schema_version', $1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(v)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// rollback ends tx if it is still open, within a bound of its own (the
// caller's context may be what failed it).
func rollback(tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.Background(), pgCloseTimeout)
	defer cancel()
	tx.Rollback(ctx)
}

// withConn runs fn on a pooled connection. When fn fails because the
// connection broke (a server restarted since it was last used, say), and
// nothing can have been committed, it runs fn once more on a new one.
func (s *Store) withConn(ctx context.Context, fn func(context.Context, *pgx.Conn) error) error {
	for attempt := 0; ; attempt++ {
		conn, err := s.pool.acquire(ctx)
		if err != nil {
			return err
		}
		err = fn(ctx, conn)
		if err != nil && conn.IsClosed() {
			s.pool.broken(conn)
			var uncertain *uncertainError
			if attempt == 0 && ctx.Err() == nil && !errors.As(err, &uncertain) {
				continue
			}
			return err
		}
		s.pool.release(conn)
		return err
	}
}

// Append implements audit.Store: r joins the next group commit (see Store).
func (s *Store) Append(ctx context.Context, r *audit.Record) error {
	if s.closed.Load() {
		return audit.ErrClosed
	}
	if s.keyed {
		return audit.ErrKeyRequired
	}
	if err := s.cfg.Prepare(r); err != nil {
		return err
	}
	return s.gc.Append(ctx, r)
}

// commit stores batch in one transaction that locks the head row.
func (s *Store) commit(ctx context.Context, batch []*audit.Record) error {
	err := s.withConn(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer rollback(tx)
		var head audit.Anchor
		var hh []byte
		if err := tx.QueryRow(ctx, `SELECT head_seq, head_hash FROM toolwire_audit_head FOR UPDATE`).
			Scan(&head.Seq, &hh); err != nil {
			return err
		}
		if head.Hash, err = audit.ParseDigest(hh); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, c := range batch {
			s.cfg.Key.Seal(c, head)
			head = audit.Anchor{Seq: c.Seq, Hash: c.Hash}
			var args []byte
			if c.Arguments != nil {
				args = []byte(c.Arguments)
			}
			b.Queue(pgInsert, c.Seq, int64(c.Scheme), c.Time.UnixNano(), int64(c.Duration),
				[]byte(c.RequestID), []byte(c.SessionID), []byte(c.Identity), []byte(c.Persona),
				[]byte(c.Upstream), []byte(c.Tool), []byte(c.Method), args, string(c.Outcome),
				[]byte(c.Error), c.RequestBytes, c.ResponseBytes, c.ContentBlocks,
				[]byte(c.Era), []byte(c.Transport), c.PrevHash[:], c.Hash[:])
		}
		b.Queue(`UPDATE toolwire_audit_head SET head_seq = $1, head_hash = $2`, head.Seq, head.Hash[:])
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if err := s.gc.BeforeCommit(ctx, batch); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return &uncertainError{err}
		}
		return nil
	})
	return s.wrap("append", err)
}

// pgScanRecord reads one row of pgColumns; a row that cannot be a record
// is an *audit.RowError.
func pgScanRecord(row pgx.Row) (*audit.Record, error) {
	var (
		r                                     audit.Record
		c                                     audit.Columns
		reqID, sessID, ident, persona, upstrm []byte
		tool, method, errText, era, trns      []byte
	)
	if err := row.Scan(&r.Seq, &c.Version, &c.TimeNS, &c.DurationNS, &reqID, &sessID, &ident, &persona, &upstrm,
		&tool, &method, &c.Arguments, &c.Outcome, &errText, &r.RequestBytes, &r.ResponseBytes,
		&r.ContentBlocks, &era, &trns, &c.PrevHash, &c.Hash); err != nil {
		return nil, err
	}
	r.RequestID, r.SessionID, r.Identity = string(reqID), string(sessID), string(ident)
	r.Persona, r.Upstream, r.Tool, r.Method = string(persona), string(upstrm), string(tool), string(method)
	r.Error, r.Era, r.Transport = string(errText), string(era), string(trns)
	return &r, c.Fill(&r)
}

// pgAnchors reads the anchor and the head.
func pgAnchors(ctx context.Context, tx pgx.Tx, lock bool) (anchor, head audit.Anchor, err error) {
	q := `SELECT anchor_seq, anchor_hash, head_seq, head_hash FROM toolwire_audit_head`
	if lock {
		q += ` FOR UPDATE`
	}
	var ah, hh []byte
	if err = tx.QueryRow(ctx, q).Scan(&anchor.Seq, &ah, &head.Seq, &hh); err != nil {
		return
	}
	if anchor.Hash, err = audit.ParseDigest(ah); err != nil {
		return
	}
	head.Hash, err = audit.ParseDigest(hh)
	return
}

// pgQuery builds f's query, with parameters only. A Tool glob is narrowed
// in SQL with a LIKE superset (see globLike) and matched exactly by the
// caller (Filter.Matcher), which then also applies the Limit.
func pgQuery(f audit.Filter) (q string, args []any, glob bool) {
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	q = `SELECT ` + pgColumns + ` FROM toolwire_audit_records WHERE seq > ` + arg(f.AfterSeq)
	if !f.Since.IsZero() {
		q += ` AND time_ns >= ` + arg(f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		q += ` AND time_ns < ` + arg(f.Until.UnixNano())
	}
	if f.Identity != "" {
		q += ` AND identity = ` + arg([]byte(f.Identity))
	}
	if f.Tool != "" {
		if glob = audit.IsGlob(f.Tool); glob {
			q += ` AND tool LIKE ` + arg([]byte(globLike(f.Tool)))
		} else {
			q += ` AND tool = ` + arg([]byte(f.Tool))
		}
	}
	if f.Outcome != "" {
		q += ` AND outcome = ` + arg(string(f.Outcome))
	}
	q += ` ORDER BY seq`
	if f.Limit > 0 && !glob {
		q += ` LIMIT ` + arg(f.Limit)
	}
	return q, args, glob
}

// Query implements audit.Store. The rows are read as they are yielded, on one
// connection held until the loop ends; a loop ended early cancels the rest
// of the query.
func (s *Store) Query(ctx context.Context, f audit.Filter) iter.Seq2[*audit.Record, error] {
	return func(yield func(*audit.Record, error) bool) {
		if s.closed.Load() {
			yield(nil, audit.ErrClosed)
			return
		}
		match, err := f.Matcher()
		if err != nil {
			yield(nil, fmt.Errorf("audit: query: %w", err))
			return
		}
		q, args, _ := pgQuery(f)
		yielded, stopped := 0, false
		err = s.withConn(ctx, func(ctx context.Context, conn *pgx.Conn) (err error) {
			defer func() {
				if err != nil && yielded > 0 {
					// Not to be retried: records were yielded already.
					err = &uncertainError{err}
				}
			}()
			qctx, cancel := context.WithCancel(ctx)
			defer cancel()
			rows, err := conn.Query(qctx, q, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				r, err := pgScanRecord(rows)
				if err != nil {
					return err
				}
				if !match(r) { // the exact test of a glob LIKE narrowed
					continue
				}
				yielded++
				if !yield(r, nil) || (f.Limit > 0 && yielded >= f.Limit) {
					// Stop the server sending the rest, and do not reuse a
					// connection a cancel request may still be on its way to.
					stopped = true
					cancel()
					rows.Close()
					closeConn(conn)
					return nil
				}
			}
			return rows.Err()
		})
		if err != nil && !stopped {
			yield(nil, s.wrap("query", err))
		}
	}
}

// Verify implements audit.Store. It reads the head row and the records in one
// repeatable-read transaction, so appends running meanwhile do not disturb
// it.
func (s *Store) Verify(ctx context.Context) (*audit.VerifyReport, error) {
	return s.VerifyAnchored(ctx)
}

// NeedsKey reports whether the trail is keyed and s was opened without
// its key (audit.WithKey: none, or another): Append then fails with
// audit.ErrKeyRequired.
func (s *Store) NeedsKey() bool { return s.keyed }

// Head implements audit.Anchored.
func (s *Store) Head(ctx context.Context) (audit.Anchor, error) {
	if s.closed.Load() {
		return audit.Anchor{}, audit.ErrClosed
	}
	var head audit.Anchor
	err := s.withConn(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		var hh []byte
		if err := conn.QueryRow(ctx, `SELECT head_seq, head_hash FROM toolwire_audit_head`).Scan(&head.Seq, &hh); err != nil {
			return err
		}
		var err error
		head.Hash, err = audit.ParseDigest(hh)
		return err
	})
	if err != nil {
		return audit.Anchor{}, s.wrap("head", err)
	}
	return head, nil
}

// VerifyAnchored implements audit.Anchored.
func (s *Store) VerifyAnchored(ctx context.Context, heads ...audit.Anchor) (*audit.VerifyReport, error) {
	if s.closed.Load() {
		return nil, audit.ErrClosed
	}
	var rep *audit.VerifyReport
	err := s.withConn(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer rollback(tx)
		anchor, head, err := pgAnchors(ctx, tx, false)
		if err != nil {
			return err
		}
		v := audit.NewVerifier(anchor, head)
		v.UseKey(s.cfg.Key)
		v.Expect(heads...)
		rows, err := tx.Query(ctx, `SELECT `+pgColumns+` FROM toolwire_audit_records ORDER BY seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		if err := v.AddRows(rows.Next, func() (*audit.Record, error) { return pgScanRecord(rows) }); err != nil {
			return err
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rep = v.Report()
		return nil
	})
	if err != nil {
		return nil, s.wrap("verify", err)
	}
	return rep, nil
}

// Sweep implements audit.Store, as SQLite's does, in one transaction that locks
// the head row (so appends wait for it).
func (s *Store) Sweep(ctx context.Context, olderThan time.Time) (int, error) {
	if s.closed.Load() {
		return 0, audit.ErrClosed
	}
	var n int
	err := s.withConn(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		n = 0
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer rollback(tx)
		anchor, head, err := pgAnchors(ctx, tx, true)
		if err != nil {
			return err
		}
		var keep *int64
		if err := tx.QueryRow(ctx, `SELECT min(seq) FROM toolwire_audit_records WHERE time_ns >= $1`,
			olderThan.UnixNano()).Scan(&keep); err != nil {
			return err
		}
		last := head.Seq
		if keep != nil {
			last = *keep - 1
		}
		if last <= anchor.Seq {
			return nil
		}
		// As in SQLite: the hash the first record kept links to.
		h := head.Hash[:]
		if keep != nil {
			if err := tx.QueryRow(ctx, `SELECT prev_hash FROM toolwire_audit_records WHERE seq = $1`, *keep).Scan(&h); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `DELETE FROM toolwire_audit_records WHERE seq <= $1`, last)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE toolwire_audit_head SET anchor_seq = $1, anchor_hash = $2`, last, h); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return &uncertainError{err}
		}
		n = int(tag.RowsAffected())
		return nil
	})
	if err != nil {
		return 0, s.wrap("sweep", err)
	}
	return n, nil
}

// Close implements audit.Store: it lets the group commit under way finish (the
// Appends still queued fail with ErrClosed) and closes the connections,
// those in use as their Query or Verify ends. Later calls of any method
// return ErrClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.gc.Close()
		s.pool.close()
	})
	return nil
}

// globLike is a LIKE pattern (escape character \) that matches every name
// the glob pattern matches, and maybe more: * and ? are % (the store
// compares bytes, where one character may be several), and LIKE's own % _
// \ are escaped. The caller keeps only what the glob matches.
func globLike(pattern string) string {
	var b strings.Builder
	pct := false // b ends with an unescaped %
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*', '?':
			if !pct {
				b.WriteByte('%')
				pct = true
			}
			continue
		case '%', '_', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(pattern[i])
		pct = false
	}
	return b.String()
}
