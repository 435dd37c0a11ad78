package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Digest is a SHA-256 hash; it reads and writes as lowercase hex.
type Digest [sha256.Size]byte

// Genesis is the PrevHash of the first record of a chain: all zero bytes.
var Genesis Digest

// String returns d in lowercase hex.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// MarshalText implements encoding.TextMarshaler (lowercase hex).
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (hex, 64 digits).
func (d *Digest) UnmarshalText(b []byte) error {
	if hex.DecodedLen(len(b)) != len(d) {
		return fmt.Errorf("audit: digest of %d hex digits, want %d", len(b), 2*len(d))
	}
	_, err := hex.Decode(d[:], b)
	return err
}

// digestFrom copies b, which must be 32 bytes, into a Digest.
func digestFrom(b []byte) (Digest, error) {
	var d Digest
	if len(b) != len(d) {
		return d, fmt.Errorf("audit: stored hash of %d bytes, want %d", len(b), len(d))
	}
	copy(d[:], b)
	return d, nil
}

// EncodingVersion is the version of the encoding Record.Encode writes; it is
// the first thing encoded, so a later version can never hash alike.
const EncodingVersion = 1

// encodingTag starts every encoding: a domain separator and the version.
const encodingTag = "toolwire/audit/v1\x00"

// Encode returns the canonical encoding of r that Hash covers, version 1:
//
//	"toolwire/audit/v1\x00"
//	int Seq, int Time (Unix ns), int Duration (ns)
//	str RequestID, str SessionID, str Identity, str Persona, str Upstream,
//	str Tool, str Method, str Arguments, str Outcome, str Error
//	int RequestBytes, int ResponseBytes, int ContentBlocks
//	str Era, str Transport
//	PrevHash (32 bytes)
//
// where int is 8 bytes big-endian (two's complement) and str is its length
// as 8 bytes big-endian followed by its bytes. Every field has a fixed
// position and every variable-length field carries its length, so two
// records that differ in any field never encode alike. Hash itself is not
// encoded.
func (r *Record) Encode() []byte {
	n := len(encodingTag) + 6*8 + 12*8 + len(r.PrevHash) +
		len(r.RequestID) + len(r.SessionID) + len(r.Identity) + len(r.Persona) +
		len(r.Upstream) + len(r.Tool) + len(r.Method) + len(r.Arguments) +
		len(r.Outcome) + len(r.Error) + len(r.Era) + len(r.Transport)
	return r.appendEncoding(make([]byte, 0, n))
}

// appendEncoding appends Encode's bytes to b.
func (r *Record) appendEncoding(b []byte) []byte {
	b = append(b, encodingTag...)
	i := func(v int64) { b = binary.BigEndian.AppendUint64(b, uint64(v)) }
	s := func(v string) { i(int64(len(v))); b = append(b, v...) }
	i(r.Seq)
	i(r.Time.UnixNano())
	i(int64(r.Duration))
	s(r.RequestID)
	s(r.SessionID)
	s(r.Identity)
	s(r.Persona)
	s(r.Upstream)
	s(r.Tool)
	s(r.Method)
	s(string(r.Arguments))
	s(string(r.Outcome))
	s(r.Error)
	i(r.RequestBytes)
	i(r.ResponseBytes)
	i(r.ContentBlocks)
	s(r.Era)
	s(r.Transport)
	b = append(b, r.PrevHash[:]...)
	return b
}

// decodeEncoding is the inverse of Encode: it reads every field but Hash
// from b, which must be exactly one encoding. Time comes back in UTC, as
// Limits.Prepare leaves it.
func decodeEncoding(b []byte) (*Record, error) {
	if len(b) < len(encodingTag) || string(b[:len(encodingTag)]) != encodingTag {
		return nil, errors.New("audit: not a version 1 record encoding")
	}
	b = b[len(encodingTag):]
	var bad bool
	i := func() int64 {
		if len(b) < 8 {
			bad = true
			return 0
		}
		v := int64(binary.BigEndian.Uint64(b))
		b = b[8:]
		return v
	}
	s := func() string {
		n := i()
		if bad || n < 0 || n > int64(len(b)) {
			bad = true
			return ""
		}
		v := string(b[:n])
		b = b[n:]
		return v
	}
	r := &Record{Seq: i()}
	r.Time = time.Unix(0, i()).UTC()
	r.Duration = time.Duration(i())
	r.RequestID, r.SessionID, r.Identity, r.Persona, r.Upstream, r.Tool, r.Method = s(), s(), s(), s(), s(), s(), s()
	if args := s(); args != "" {
		r.Arguments = json.RawMessage(args)
	}
	r.Outcome, r.Error = Outcome(s()), s()
	r.RequestBytes, r.ResponseBytes, r.ContentBlocks = i(), i(), i()
	r.Era, r.Transport = s(), s()
	if bad || len(b) != len(r.PrevHash) {
		return nil, errors.New("audit: truncated or overlong record encoding")
	}
	copy(r.PrevHash[:], b)
	return r, nil
}

// ComputeHash returns SHA-256 of r.Encode().
func (r *Record) ComputeHash() Digest { return sha256.Sum256(r.Encode()) }

// Seal links r after prev: it sets r.Seq to prev.Seq+1, r.PrevHash to
// prev.Hash and r.Hash. A store calls it while holding its chain's lock,
// with the head it read under that lock, and then stores r and the new head
// (Anchor{r.Seq, r.Hash}) together.
func Seal(r *Record, prev Anchor) {
	r.Seq = prev.Seq + 1
	r.PrevHash = prev.Hash
	r.Hash = r.ComputeHash()
}

// Anchor is a point of the chain: a record's Seq and Hash. A store keeps
// two: the head (the last record appended) and the anchor (the last record
// swept by retention; {0, Genesis} before any sweep). Verify starts from the
// anchor and must end at the head, so retention keeps the rest of the chain
// verifiable, and deleting the newest records is detected too.
type Anchor struct {
	Seq  int64  `json:"seq"`
	Hash Digest `json:"hash"`
}

// Start is the anchor of a chain nothing was swept from.
var Start = Anchor{Seq: 0, Hash: Genesis}

// BreakKind says how a chain is broken.
type BreakKind string

// The kinds of break Verify reports.
const (
	// BreakEdited: the record's stored Hash is not the hash of its fields:
	// the record was changed after it was appended.
	BreakEdited BreakKind = "edited"
	// BreakMissing: records are missing before this Seq (a gap in the
	// sequence, or fewer records than the head says): they were deleted.
	BreakMissing BreakKind = "missing"
	// BreakRelinked: the record's PrevHash is not the previous record's
	// Hash, though both hash correctly: a record was replaced, or the chain
	// was spliced.
	BreakRelinked BreakKind = "relinked"
	// BreakInserted: a record that cannot belong to the chain: at or before
	// the anchor, or after the head.
	BreakInserted BreakKind = "inserted"
	// BreakHead: the last record is not the head the store recorded.
	BreakHead BreakKind = "head"
	// BreakInvalid: a stored value could not be read back (for example a
	// hash of the wrong length or an unknown encoding version).
	BreakInvalid BreakKind = "invalid"
)

// Break is where and why a chain is broken.
type Break struct {
	// Seq is the first record found wrong (for BreakMissing, the first
	// missing Seq).
	Seq    int64     `json:"seq"`
	Kind   BreakKind `json:"kind"`
	Reason string    `json:"reason"`
}

func (b *Break) Error() string {
	return fmt.Sprintf("audit chain broken at seq %d (%s): %s", b.Seq, b.Kind, b.Reason)
}

// VerifyReport is the result of a Verify: OK, or the first Break.
type VerifyReport struct {
	OK bool `json:"ok"`
	// Checked is how many records were read; First and Last their Seq range
	// (0 when none).
	Checked int64 `json:"checked"`
	First   int64 `json:"first"`
	Last    int64 `json:"last"`
	// Anchor and Head are the store's anchor and head (see Anchor).
	Anchor Anchor `json:"anchor"`
	Head   Anchor `json:"head"`
	// Break is the first break found, nil when OK.
	Break *Break `json:"break,omitempty"`
}

// Verifier checks a chain one record at a time, in Seq order, and remembers
// the first break. Stores use it in Verify; it holds no records.
type Verifier struct {
	rep  VerifyReport
	prev Anchor
}

// NewVerifier returns a Verifier of a chain that starts after anchor and
// should end at head.
func NewVerifier(anchor, head Anchor) *Verifier {
	return &Verifier{rep: VerifyReport{Anchor: anchor, Head: head}, prev: anchor}
}

// Broken reports whether a break was found; once it was, Add does nothing.
func (v *Verifier) Broken() bool { return v.rep.Break != nil }

func (v *Verifier) fail(seq int64, kind BreakKind, format string, args ...any) {
	v.rep.Break = &Break{Seq: seq, Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// Fail records a break found outside Add (an unreadable row, say), unless
// one was found already.
func (v *Verifier) Fail(seq int64, kind BreakKind, reason string) {
	if !v.Broken() {
		v.fail(seq, kind, "%s", reason)
	}
}

// Add checks the next record, r, and reports whether the chain is still
// unbroken.
func (v *Verifier) Add(r *Record) bool {
	if v.Broken() {
		return false
	}
	v.rep.Checked++
	if v.rep.First == 0 {
		v.rep.First = r.Seq
	}
	v.rep.Last = r.Seq
	want := v.prev.Seq + 1
	switch {
	case r.Seq <= v.prev.Seq:
		v.fail(r.Seq, BreakInserted, "seq %d is not after %d (the anchor or the record before)", r.Seq, v.prev.Seq)
	case r.Seq > want:
		v.fail(want, BreakMissing, "records %d to %d are missing (deleted): the next record is %d", want, r.Seq-1, r.Seq)
	case r.ComputeHash() != r.Hash:
		v.fail(r.Seq, BreakEdited, "stored hash %s is not the hash of the record's fields: the record was edited", r.Hash)
	case r.PrevHash != v.prev.Hash:
		v.fail(r.Seq, BreakRelinked, "prev_hash %s is not the hash %s of seq %d: a record was replaced or inserted", r.PrevHash, v.prev.Hash, v.prev.Seq)
	}
	v.prev = Anchor{Seq: r.Seq, Hash: r.Hash}
	return !v.Broken()
}

// Report finishes the walk: it checks that the chain ended at the head and
// returns the report.
func (v *Verifier) Report() *VerifyReport {
	v.reached(v.rep.Head)
	v.rep.OK = !v.Broken()
	rep := v.rep
	return &rep
}

// reached checks that the records added so far end at h: the head, or a
// point the records added next continue from.
func (v *Verifier) reached(h Anchor) {
	if !v.Broken() {
		switch {
		case v.prev.Seq < h.Seq:
			v.fail(v.prev.Seq+1, BreakMissing, "records %d to %d are missing (deleted): the head is %d", v.prev.Seq+1, h.Seq, h.Seq)
		case v.prev.Seq > h.Seq:
			v.fail(h.Seq+1, BreakInserted, "records after the head %d exist", h.Seq)
		case v.prev.Hash != h.Hash:
			v.fail(h.Seq, BreakHead, "the last record's hash %s is not the head's %s", v.prev.Hash, h.Hash)
		}
	}
}
