// Package audit keeps the gateway's audit trail: one Record for every
// tools/call, prompts/get, resources/read and denial, hash-chained so that an
// edited, deleted or inserted record is detected by Verify.
//
// A Store appends records to one chain (Append assigns Seq, PrevHash and
// Hash atomically), queries them, verifies the chain and sweeps old records
// for retention without breaking verifiability. SQLite is the embedded
// store; Postgres the shared one, for several gateway processes writing one
// chain. Both group-commit: concurrent Appends share a transaction and its
// sync, so the trail keeps up with load without losing "committed before
// the response leaves". Async puts a bounded queue in front of any Store.
// Redact prepares arguments for storage, and WriteJSONL and WriteCSV export
// query results.
//
// A store opened WithKey keys the chain: each record's hash is an
// HMAC-SHA-256 under a key kept outside the database, so that write access
// to the database is not enough to edit, relink or append records
// unnoticed. Without a key the chain is keyless (SHA-256): it proves that
// no record was edited, deleted or inserted by anyone who did not also
// recompute every later hash and the stored head. Either way, copying the
// head elsewhere from time to time (VerifyAnchored checks against it)
// extends the proof to the newest records deleted with the head moved
// back.
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/jsonstr"
)

// Outcome is how an audited call ended: one of the Outcome constants.
type Outcome string

// The outcomes. The set is closed: Append refuses any other value, so that
// queries and reports can rely on it.
const (
	// OutcomeOK: the call succeeded.
	OutcomeOK Outcome = "ok"
	// OutcomeToolError: the upstream answered with an isError result.
	OutcomeToolError Outcome = "tool_error"
	// OutcomeProtocolError: the call failed with a JSON-RPC error.
	OutcomeProtocolError Outcome = "protocol_error"
	// OutcomeDenied: a persona rule denied the call; the upstream never saw it.
	OutcomeDenied Outcome = "denied"
	// OutcomeRateLimited: a rate limit refused the call.
	OutcomeRateLimited Outcome = "rate_limited"
	// OutcomeUpstreamError: the upstream could not be reached or failed.
	OutcomeUpstreamError Outcome = "upstream_error"
	// OutcomeTimeout: the call ran out of time.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeCancelled: the caller cancelled the call.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeLost: a gap record (MethodGap), which the store writes in
	// place of records lost to a damaged journal; Append refuses it.
	OutcomeLost Outcome = "lost"
)

// MethodGap is the Method of a gap record: see Gap.
const MethodGap = "audit/gap"

// Outcomes lists every valid Outcome, in a stable order.
func Outcomes() []Outcome { return slices.Clone(outcomes) }

var outcomes = []Outcome{
	OutcomeOK, OutcomeToolError, OutcomeProtocolError, OutcomeDenied,
	OutcomeRateLimited, OutcomeUpstreamError, OutcomeTimeout, OutcomeCancelled,
	OutcomeLost,
}

// Valid reports whether o is one of the Outcome constants.
func (o Outcome) Valid() bool {
	for _, v := range outcomes {
		if o == v {
			return true
		}
	}
	return false
}

// ErrInvalidOutcome is returned by Append for a record whose Outcome is not
// one of the constants.
var ErrInvalidOutcome = errors.New("audit: invalid outcome")

// ErrClosed is returned by a store's (or Async's) methods after Close.
var ErrClosed = errors.New("audit: closed")

// Record is one audited request. The store sets Seq, Scheme, PrevHash and
// Hash; every other field is the caller's, and all of them are covered by
// Hash.
type Record struct {
	// Seq is the record's position in the chain: 1, 2, 3... with no gaps.
	Seq int64 `json:"seq"`
	// Time is when the request arrived; zero means "now" at Append. Stores
	// keep it to the nanosecond (as Unix nanoseconds) and return it in UTC.
	Time time.Time `json:"time"`
	// Duration is how long the request took.
	Duration time.Duration `json:"duration_ns"`
	// RequestID is the JSON-RPC id of the request (as JSON text) and
	// SessionID the MCP session, when there is one.
	RequestID string `json:"request_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Identity is the caller's principal ("anonymous" for none) and Persona
	// the persona its rights came from.
	Identity string `json:"identity"`
	Persona  string `json:"persona,omitempty"`
	// Upstream is the upstream server the request was (or would have been)
	// sent to.
	Upstream string `json:"upstream,omitempty"`
	// Tool is the tool name for tools/call, the prompt name for
	// prompts/get, the resource URI for resources/read.
	Tool string `json:"tool,omitempty"`
	// Method is the JSON-RPC method.
	Method string `json:"method"`
	// Arguments is the request's arguments as JSON text, already passed
	// through Redact. Append replaces text that is not JSON, or that is
	// longer than Limits.MaxArgumentsBytes, with a JSON string saying so.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Outcome is how the request ended, and Error its error text (cut to
	// Limits.MaxErrorBytes by Append).
	Outcome Outcome `json:"outcome"`
	Error   string  `json:"error,omitempty"`
	// RequestBytes and ResponseBytes are the sizes of the request and
	// response messages; ContentBlocks the number of content blocks in the
	// result.
	RequestBytes  int64 `json:"request_bytes"`
	ResponseBytes int64 `json:"response_bytes"`
	ContentBlocks int64 `json:"content_blocks"`
	// Era is the protocol era (revision family) of the session, Transport
	// the transport the request came in on ("stdio", "streamable", ...).
	Era       string `json:"era,omitempty"`
	Transport string `json:"transport,omitempty"`
	// Scheme is how Hash is computed: keyless or keyed (see Scheme).
	Scheme Scheme `json:"scheme"`
	// PrevHash is the Hash of the record before this one (the zero Digest for
	// the first), Hash this record's: see the encoding on Record.Encode.
	PrevHash Digest `json:"prev_hash"`
	Hash     Digest `json:"hash"`
}

// TruncatedMark ends error text cut by Limits.
const TruncatedMark = "…[truncated]"

// Prepare checks r and brings it within l before it is hashed and stored:
// an invalid Outcome is ErrInvalidOutcome; a zero Time becomes now; Time is
// rounded to the nanosecond in UTC; Arguments and Error are bounded (see
// Limits). Stores call it from Append; it is exported for stores outside
// this package.
func (l Limits) Prepare(r *Record, now time.Time) error {
	if !r.Outcome.Valid() || r.Outcome == OutcomeLost {
		return fmt.Errorf("%w %q", ErrInvalidOutcome, r.Outcome)
	}
	l = l.withDefaults()
	if r.Time.IsZero() {
		r.Time = now
	}
	r.Time = time.Unix(0, r.Time.UnixNano()).UTC()
	switch {
	case len(r.Arguments) == 0:
		r.Arguments = nil
	case len(r.Arguments) > l.MaxArgumentsBytes:
		r.Arguments = marker(fmt.Sprintf("[arguments truncated: %d bytes]", len(r.Arguments)))
	case !json.Valid(r.Arguments):
		r.Arguments = marker(fmt.Sprintf("[arguments not JSON: %d bytes]", len(r.Arguments)))
	}
	r.Error = truncateUTF8(r.Error, l.MaxErrorBytes, TruncatedMark)
	return nil
}

// marker returns s as JSON text.
func marker(s string) json.RawMessage { return jsonstr.Append(nil, s) }

// truncateUTF8 returns s if it is at most max bytes, else its longest
// prefix that ends on a rune boundary and, with mark appended, fits in max
// bytes (or just the prefix when mark alone does not fit).
func truncateUTF8(s string, max int, mark string) string {
	if len(s) <= max {
		return s
	}
	keep := max - len(mark)
	if keep < 0 {
		keep, mark = max, ""
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + mark
}
