package audit

import (
	"context"
	"errors"
	"iter"
	"time"
)

// Store keeps one audit chain. Implementations are safe for concurrent use,
// also by several processes on one database: appends form a single chain
// (an SQLite store without fsync lets one process append at a time; see
// WithFsync).
type Store interface {
	// Append applies the store's Limits to r (see Limits.Prepare), then
	// assigns r.Seq, r.PrevHash and r.Hash and stores r, atomically with
	// respect to every other Append. When it returns nil the record is
	// durable (committed and synced; see WithFsync for SQLite's lighter
	// choice). Otherwise r's Seq, PrevHash and Hash are left as they were
	// and r is not stored, unless the connection to a database server broke
	// during the commit itself, when it may be. Concurrent Appends may be
	// committed together, in one transaction: each still returns only once
	// its own record is committed.
	Append(ctx context.Context, r *Record) error
	// Query yields the records that match f in ascending Seq order, then
	// stops; an error is yielded once, as the last pair.
	Query(ctx context.Context, f Filter) iter.Seq2[*Record, error]
	// Verify walks the chain from the anchor to the head and reports the
	// first break, and the gaps gap records stand for. The error is for
	// failures to read, not for breaks.
	Verify(ctx context.Context) (*VerifyReport, error)
	// Sweep deletes, for retention, the longest prefix of the chain whose
	// records are all older than olderThan, and moves the anchor to the last
	// record deleted so that Verify still passes. A record newer than
	// olderThan keeps every later Seq, however old, until it too is old
	// enough. It returns how many records it deleted.
	Sweep(ctx context.Context, olderThan time.Time) (int, error)
	// Close releases the store.
	Close() error
}

// Filter selects records for Query. Zero fields do not filter.
type Filter struct {
	// Since and Until bound Record.Time: Since <= Time < Until.
	Since, Until time.Time
	// Identity matches Record.Identity exactly.
	Identity string
	// Tool matches Record.Tool: exactly, or as a glob when it holds * or ?
	// (IsGlob), in the syntax of the personas' tool lists
	// (policy.CompileGlob): * matches any run of characters ('/'
	// included), ? one character, case-sensitively, in every store; a glob
	// with one of the reserved [ ] { } \ fails the query.
	Tool string
	// Outcome matches Record.Outcome.
	Outcome Outcome
	// AfterSeq skips records up to and including this Seq: for paging, pass
	// the last Seq of the previous page.
	AfterSeq int64
	// Limit caps the number of records; 0 or less means no cap.
	Limit int
}

// Option configures a store: sqlite.Open's, postgres.Open's, or another
// Store's that reads its options with Resolve. Options apply in order (a
// later one wins), nil options are ignored and defaults fill in the rest,
// as everywhere in the project; an option that does not concern a store
// (WithFsync for PostgreSQL, Limits.MaxConns for SQLite) is ignored by it.
type Option interface{ applyAudit(*Settings) }

type option func(*Settings)

func (f option) applyAudit(c *Settings) { f(c) }

// Settings is what a store's options resolve to (Resolve): the values a
// store outside this package (sqlite.Store, postgres.Store) works with.
type Settings struct {
	// Key keys the chain (WithKey); nil seals records keyless.
	Key *Key
	// Limits are the trail's limits, defaults filled in (WithLimits): a
	// store reads MaxBatch and MaxConns here.
	Limits Limits
	// Fsync says whether an SQLite commit syncs before Append returns
	// (WithFsync; default on).
	Fsync bool

	now func() time.Time
}

// Resolve applies opts in order (a later one wins, nil ones are ignored)
// over the defaults: how a Store outside this package reads its options.
func Resolve(opts ...Option) Settings {
	c := Settings{now: time.Now, Fsync: true}
	for _, o := range opts {
		if o != nil {
			o.applyAudit(&c)
		}
	}
	c.Limits = c.Limits.withDefaults()
	return c
}

// Now reads the configured clock (WithClock; default time.Now): what
// stamps a record appended with a zero Time.
func (c Settings) Now() time.Time { return c.now() }

// Prepare applies the Limits to r and stamps it with the clock when its
// Time is zero (Limits.Prepare): the first step of every store's Append.
func (c Settings) Prepare(r *Record) error { return c.Limits.Prepare(r, c.now()) }

// WithKey keys the chain with k: the records appended from now on are
// sealed with HMAC-SHA-256 under it (SchemeHMAC), and Verify checks keyed
// records with it. Records appended before, keyless, still verify; a
// keyless record after a keyed one is a break. A store without the key of
// a keyed trail reads it, but Append fails (ErrKeyRequired) and Verify
// stops at its first keyed record (BreakKey).
func WithKey(k *Key) Option { return option(func(c *Settings) { c.Key = k }) }

// WithClock sets the clock that stamps records with a zero Time (default
// time.Now). For tests.
func WithClock(now func() time.Time) Option {
	return option(func(c *Settings) {
		if now != nil {
			c.now = now
		}
	})
}

// WithFsync chooses what an acknowledged record survives in an SQLite
// store. On (the default): each commit syncs the WAL (synchronous=FULL), so
// a record Append acknowledged survives a power loss; concurrent appends
// share a commit. Off: Append writes the sealed record to a journal file
// next to the database with one write(2) and returns; a background writer
// moves journaled records into the database in batches (synchronous=NORMAL),
// and the next open moves in whatever a killed process left.
// An acknowledged record then survives a crash or SIGKILL of the process,
// not a power loss or an operating system crash, and appends cost a write
// instead of a transaction. The journal's owner is the trail's only writer:
// another process opening it meanwhile is read-only. The chain stays
// verifiable either way: a power loss can only lose the newest records and
// their head together, never break the chain. A Postgres store ignores it:
// there durability is the server's (fsync, synchronous_commit).
func WithFsync(on bool) Option { return option(func(c *Settings) { c.Fsync = on }) }

// ErrKeyRequired is Append on a keyed trail by a store opened without its
// key (WithKey: none, or another): its records would not verify.
var ErrKeyRequired = errors.New("audit: this audit trail is keyed: appending needs its key")

// Anchored is a Store that verifies against heads anchored elsewhere.
type Anchored interface {
	// VerifyAnchored is Verify, which also checks that the chain passes
	// through each of heads (Verifier.Expect).
	VerifyAnchored(ctx context.Context, heads ...Anchor) (*VerifyReport, error)
	// Head returns the chain's head: the last record appended (or
	// journaled), as Verify would end at it.
	Head(ctx context.Context) (Anchor, error)
}

// CheckHead is a store's verdict, when it opens, on its chain's head
// record r under the key it was given (nil: none): needsKey when r is
// keyed and its HMAC does not hold under k (Append must then fail with
// ErrKeyRequired), holds when it does.
func CheckHead(r *Record, k *Key) (needsKey, holds bool) {
	if r.Scheme != SchemeHMAC {
		return false, false
	}
	if sum, known := k.Sum(r); known && sum == r.Hash {
		return false, true
	}
	return true, false
}
