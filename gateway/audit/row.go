package audit

import (
	"fmt"
	"time"
)

// Columns are the fields of a stored record that a database keeps in
// another form than Record's: times as Unix nanoseconds (so that the hash
// verifies after a round trip), hashes as 32-byte blobs, the scheme as the
// encoding version. A store reads the other fields straight into a Record
// and these into a Columns, then calls Fill.
type Columns struct {
	// Version is the encoding version column: the record's Scheme.
	Version int64
	// TimeNS and DurationNS are Record.Time and Record.Duration in
	// nanoseconds.
	TimeNS, DurationNS int64
	// Arguments is Record.Arguments; empty stands for none.
	Arguments []byte
	// Outcome is Record.Outcome.
	Outcome string
	// PrevHash and Hash are the record's hashes, 32 bytes each.
	PrevHash, Hash []byte
}

// Fill completes r with c. A row that cannot be a record (an unknown
// encoding version, a hash of the wrong size) is a *RowError naming
// r.Seq, for Verify to report as a break rather than fail.
func (c *Columns) Fill(r *Record) error {
	r.Time = time.Unix(0, c.TimeNS).UTC()
	r.Duration = time.Duration(c.DurationNS)
	if len(c.Arguments) > 0 {
		r.Arguments = c.Arguments
	}
	r.Outcome = Outcome(c.Outcome)
	var err error
	if r.PrevHash, err = ParseDigest(c.PrevHash); err != nil {
		return &RowError{r.Seq, err}
	}
	if r.Hash, err = ParseDigest(c.Hash); err != nil {
		return &RowError{r.Seq, err}
	}
	if r.Scheme = Scheme(c.Version); r.Scheme != SchemeSHA256 && r.Scheme != SchemeHMAC {
		return &RowError{r.Seq, fmt.Errorf("audit: unknown encoding version %d", c.Version)}
	}
	return nil
}

// RowError is a stored row that cannot be read back as a record: Verify
// reports it as a break (BreakInvalid) at Seq.
type RowError struct {
	// Seq is the row's seq column.
	Seq int64
	// Err says what is wrong with it.
	Err error
}

// Error says which record cannot be read, and why.
func (e *RowError) Error() string { return fmt.Sprintf("audit: record %d: %v", e.Seq, e.Err) }

// Unwrap returns Err.
func (e *RowError) Unwrap() error { return e.Err }
