package audit

import (
	"context"
	"iter"
	"strings"
	"time"
)

// Store keeps one audit chain. Implementations are safe for concurrent use,
// also by several processes on one database: appends form a single chain.
type Store interface {
	// Append applies the store's Limits to r (see Limits.Prepare), then
	// assigns r.Seq, r.PrevHash and r.Hash and stores r, atomically with
	// respect to every other Append. When it returns nil the record is
	// durable (committed and synced).
	Append(ctx context.Context, r *Record) error
	// Query yields the records that match f in ascending Seq order, then
	// stops; an error is yielded once, as the last pair.
	Query(ctx context.Context, f Filter) iter.Seq2[*Record, error]
	// Verify walks the chain from the anchor to the head and reports the
	// first break. The error is for failures to read, not for breaks.
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
	// Tool matches Record.Tool: exactly, or as a glob when it holds one of
	// * ? [ (IsGlob), where * matches any run of characters ('/' included),
	// ? one character and [...] one of a set, case-sensitively (SQLite's
	// GLOB).
	Tool string
	// Outcome matches Record.Outcome.
	Outcome Outcome
	// AfterSeq skips records up to and including this Seq: for paging, pass
	// the last Seq of the previous page.
	AfterSeq int64
	// Limit caps the number of records; 0 or less means no cap.
	Limit int
}

// IsGlob reports whether a Filter.Tool pattern is a glob rather than a name.
func IsGlob(pattern string) bool { return strings.ContainsAny(pattern, "*?[") }

// Option configures a store made by OpenSQLite.
type Option func(*config)

type config struct {
	limits Limits
	now    func() time.Time
}

func newConfig(opts []Option) *config {
	c := &config{now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	c.limits = c.limits.withDefaults()
	return c
}

// WithLimits sets the per-record limits (zero fields keep the defaults).
func WithLimits(l Limits) Option { return func(c *config) { c.limits = l } }

// WithClock sets the clock that stamps records with a zero Time (default
// time.Now). For tests.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}
