package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Digest is a SHA-256 hash; it reads and writes as lowercase hex.
type Digest [sha256.Size]byte

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

// ParseDigest copies b, a hash as a database column holds it (32 bytes),
// into a Digest; another length is an error.
func ParseDigest(b []byte) (Digest, error) {
	var d Digest
	if len(b) != len(d) {
		return d, fmt.Errorf("audit: stored hash of %d bytes, want %d", len(b), len(d))
	}
	copy(d[:], b)
	return d, nil
}

// EncodingVersion is the version of the encoding Record.Encode writes for
// a keyless record (SchemeSHA256); it is the first thing encoded, so a
// later version can never hash alike. A keyed record (SchemeHMAC) is
// encoded as version 2, which differs only in its tag.
const EncodingVersion = 1

// encodingTag starts every encoding: a domain separator and the version,
// whose digit is encodingTag[versionAt].
const (
	encodingTag = "toolwire/audit/v1\x00"
	versionAt   = len("toolwire/audit/v")
)

// Scheme is how a record's Hash is computed. Stores keep it as the
// record's encoding version, so that a trail keyed from some record on
// still verifies its older, keyless records.
type Scheme int

// The schemes.
const (
	// SchemeSHA256: Hash is the SHA-256 of the version 1 encoding, which
	// anyone can recompute (the keyless chain of trails written before
	// keys, and of stores opened without WithKey).
	SchemeSHA256 Scheme = 1
	// SchemeHMAC: Hash is the HMAC-SHA-256 of the version 2 encoding
	// under the trail's Key, which only its holder can compute.
	SchemeHMAC Scheme = 2
)

// or1 is s, with the zero Scheme read as SchemeSHA256 (a Record built in
// code and not sealed yet).
func (s Scheme) or1() Scheme {
	if s == 0 {
		return SchemeSHA256
	}
	return s
}

// String returns "sha256" or "hmac-sha256".
func (s Scheme) String() string {
	switch s.or1() {
	case SchemeSHA256:
		return "sha256"
	case SchemeHMAC:
		return "hmac-sha256"
	}
	return fmt.Sprintf("scheme(%d)", int(s))
}

// MarshalText implements encoding.TextMarshaler (String).
func (s Scheme) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Scheme) UnmarshalText(b []byte) error {
	switch string(b) {
	case "sha256":
		*s = SchemeSHA256
	case "hmac-sha256":
		*s = SchemeHMAC
	default:
		return fmt.Errorf("audit: unknown chain scheme %q", b)
	}
	return nil
}

// Encode returns the canonical encoding of r that Hash covers, version 1
// (version 2 for SchemeHMAC, "toolwire/audit/v2\x00" its only difference):
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
	start := len(b)
	b = append(b, encodingTag...)
	b[start+versionAt] = byte('0' + r.Scheme.or1())
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
	r, n, err := decodePrefix(b)
	if err == nil && n != len(b) {
		err = errors.New("audit: overlong record encoding")
	}
	return r, err
}

// decodePrefix reads the encoding b starts with, whatever follows it, and
// returns the record and the encoding's length: an encoding delimits
// itself, so a journal entry whose length was damaged can still be read.
func decodePrefix(b []byte) (*Record, int, error) {
	if len(b) < len(encodingTag) || string(b[:versionAt]) != encodingTag[:versionAt] || b[len(encodingTag)-1] != 0 {
		return nil, 0, errors.New("audit: not a record encoding")
	}
	scheme := Scheme(b[versionAt] - '0')
	if scheme != SchemeSHA256 && scheme != SchemeHMAC {
		return nil, 0, fmt.Errorf("audit: unknown record encoding version %q", b[versionAt])
	}
	all := len(b)
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
	r := &Record{Scheme: scheme, Seq: i()}
	r.Time = time.Unix(0, i()).UTC()
	r.Duration = time.Duration(i())
	r.RequestID, r.SessionID, r.Identity, r.Persona, r.Upstream, r.Tool, r.Method = s(), s(), s(), s(), s(), s(), s()
	if args := s(); args != "" {
		r.Arguments = json.RawMessage(args)
	}
	r.Outcome, r.Error = Outcome(s()), s()
	r.RequestBytes, r.ResponseBytes, r.ContentBlocks = i(), i(), i()
	r.Era, r.Transport = s(), s()
	if bad || len(b) < len(r.PrevHash) {
		return nil, 0, errors.New("audit: truncated record encoding")
	}
	copy(r.PrevHash[:], b)
	return r, all - len(b) + len(r.PrevHash), nil
}

// ComputeHash returns SHA-256 of r.Encode(): the Hash of a keyless record
// (SchemeSHA256). A keyed record's is Key.Sum's.
func (r *Record) ComputeHash() Digest { return sha256.Sum256(r.Encode()) }

// Seal links r after prev: it sets r.Seq to prev.Seq+1, r.PrevHash to
// prev.Hash and r.Hash, keyless (SchemeSHA256). A store calls it (or
// Key.Seal) while holding its chain's lock, with the head it read under
// that lock, and then stores r and the new head (Anchor{r.Seq, r.Hash})
// together.
func Seal(r *Record, prev Anchor) { (*Key)(nil).Seal(r, prev) }

// Seal is the package's Seal with r keyed by k (SchemeHMAC); a nil k seals
// keyless.
func (k *Key) Seal(r *Record, prev Anchor) {
	r.Seq = prev.Seq + 1
	r.PrevHash = prev.Hash
	k.rehash(r)
}

// rehash sets r's Scheme and Hash for k (keyless when nil).
func (k *Key) rehash(r *Record) {
	if k == nil {
		r.Scheme = SchemeSHA256
		r.Hash = r.ComputeHash()
		return
	}
	r.Scheme = SchemeHMAC
	r.Hash = k.sum(r.Encode())
}

// Sum returns the Hash r must carry under its Scheme: the SHA-256 of its
// encoding, or its HMAC under k (false when k is nil: it cannot be known).
func (k *Key) Sum(r *Record) (Digest, bool) {
	if r.Scheme.or1() == SchemeSHA256 {
		return r.ComputeHash(), true
	}
	if k == nil {
		return Digest{}, false
	}
	return k.sum(r.Encode()), true
}

// Anchor is a point of the chain: a record's Seq and Hash. A store keeps
// two: the head (the last record appended) and the anchor (the last record
// swept by retention). The zero Anchor, whose Hash is the zero Digest (the
// PrevHash of a chain's first record), is the anchor of a chain nothing was
// swept from. Verify starts from the anchor and must end at the head, so
// retention keeps the rest of the chain verifiable, and deleting the newest
// records is detected too.
type Anchor struct {
	Seq  int64  `json:"seq"`
	Hash Digest `json:"hash"`
}

// String writes a as SEQ:HASH (hash in hex): how the gateway logs its
// chain's head and `toolwire audit verify --head` reads one.
func (a Anchor) String() string { return fmt.Sprintf("%d:%s", a.Seq, a.Hash) }

// BreakKind says how a chain is broken.
type BreakKind string

// The kinds of break Verify reports.
const (
	// BreakEdited: the record's stored Hash is not the hash of its fields:
	// the record was changed after it was appended (or, keyed, sealed
	// with another key).
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
	// BreakKey: a keyed record, and no key to check it with.
	BreakKey BreakKind = "key"
	// BreakKeyless: a keyless record after keyed ones: the chain never
	// goes back to SHA-256 once keyed, so it was written without the key.
	BreakKeyless BreakKind = "keyless"
	// BreakAnchored: the chain does not pass through a head anchored
	// elsewhere (VerifyAnchored): that record differs, or is gone with the
	// newest records.
	BreakAnchored BreakKind = "anchored"
	// BreakLost: records lost to a damaged journal, as a gap record in the
	// chain says (see Gap). Reported as the Break only when nothing else
	// is wrong.
	BreakLost BreakKind = "lost"
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

// Gap is a run of records lost, not deleted: the store found the journal
// holding them damaged when it recovered it, kept the damaged file aside
// and wrote a gap record (MethodGap) in their place, which the chain
// covers like any record.
type Gap struct {
	// From and To are the Seq of the first and last record lost.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Kept is where the damaged journal was kept, Reason the gap record's
	// account of it.
	Kept   string `json:"kept,omitempty"`
	Reason string `json:"reason"`
}

// AnchorCheck is how the chain compares with a head anchored elsewhere
// (VerifyAnchored), when it does not break it.
type AnchorCheck struct {
	Anchor
	// Result is "matches"; "swept" when the record is before the
	// retention anchor (not checked); "lost" when it is in a Gap;
	// "unchecked" when the walk broke before it.
	Result string `json:"result"`
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
	// KeyedFrom is the first keyed record (SchemeHMAC) walked, 0 when
	// none: the records before it are keyless, those after it keyed.
	KeyedFrom int64 `json:"keyed_from,omitempty"`
	// Key is the ID of the key the keyed records were checked with.
	Key string `json:"key,omitempty"`
	// Gaps are the runs of records lost to a damaged journal, in order.
	Gaps []Gap `json:"gaps,omitempty"`
	// Anchored are the checks of the heads VerifyAnchored was given.
	Anchored []AnchorCheck `json:"anchored,omitempty"`
	// Break is the first break found, nil when OK. Tampering found is
	// reported before a gap (BreakLost).
	Break *Break `json:"break,omitempty"`
}

// Verifier checks a chain one record at a time, in Seq order, and remembers
// the first break. Stores use it in Verify; it holds no records.
type Verifier struct {
	rep   VerifyReport
	prev  Anchor
	key   *Key
	lost  bool // the last record added was a gap record
	ended bool // Report was called
}

// NewVerifier returns a Verifier of a chain that starts after anchor and
// should end at head. Keyed records need UseKey; Expect adds heads
// anchored elsewhere.
func NewVerifier(anchor, head Anchor) *Verifier {
	return &Verifier{rep: VerifyReport{Anchor: anchor, Head: head}, prev: anchor}
}

// UseKey checks keyed records with k.
func (v *Verifier) UseKey(k *Key) {
	v.key = k
	if k != nil {
		v.rep.Key = k.ID()
	}
}

// Expect makes the walk check that the chain passes through each of
// heads: points of it anchored elsewhere (a log store), so that newest
// records deleted, with the stored head moved back, are found. Call it
// before Add.
func (v *Verifier) Expect(heads ...Anchor) {
	for _, h := range heads {
		c := AnchorCheck{Anchor: h, Result: "unchecked"}
		switch {
		case h.Seq < v.prev.Seq:
			c.Result = "swept"
		case h.Seq == v.prev.Seq && h.Hash == v.prev.Hash:
			c.Result = "matches"
		case h.Seq == v.prev.Seq:
			v.fail(h.Seq, BreakAnchored, "the anchored head %d has hash %s; the trail's anchor there has %s", h.Seq, h.Hash, v.prev.Hash)
		}
		v.rep.Anchored = append(v.rep.Anchored, c)
	}
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

// AddRows adds the records a store's query yields, in seq order, until the
// chain breaks: next advances to the next row (false at the end) and scan
// reads it. A row that cannot be read back (a *RowError) is a BreakInvalid
// at its seq; any other error of scan ends the walk and is returned.
func (v *Verifier) AddRows(next func() bool, scan func() (*Record, error)) error {
	for next() {
		r, err := scan()
		var re *RowError
		if errors.As(err, &re) {
			v.Fail(re.Seq, BreakInvalid, re.Err.Error())
			return nil
		}
		if err != nil {
			return err
		}
		if !v.Add(r) {
			return nil
		}
	}
	return nil
}

// Add checks the next record, r, and reports whether the chain is still
// unbroken. A gap record (see Gap) is noted and the walk goes on after the
// records it stands for.
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
	scheme := r.Scheme.or1()
	switch {
	case r.Seq <= v.prev.Seq:
		v.fail(r.Seq, BreakInserted, "seq %d is not after %d (the anchor or the record before)", r.Seq, v.prev.Seq)
	case r.Seq > want:
		v.fail(want, BreakMissing, "records %d to %d are missing (deleted): the next record is %d", want, r.Seq-1, r.Seq)
	case scheme == SchemeSHA256 && v.rep.KeyedFrom > 0:
		v.fail(r.Seq, BreakKeyless, "record %d is keyless (SHA-256) after keyed records (from %d): it was written without the key", r.Seq, v.rep.KeyedFrom)
	case scheme == SchemeHMAC && v.key == nil:
		v.fail(r.Seq, BreakKey, "record %d is keyed (HMAC-SHA-256): checking it needs the trail's key", r.Seq)
	default:
		if scheme == SchemeHMAC && v.rep.KeyedFrom == 0 {
			v.rep.KeyedFrom = r.Seq
		}
		if sum, _ := v.key.Sum(r); sum != r.Hash {
			how := "the hash of the record's fields"
			if scheme == SchemeHMAC {
				how = "the HMAC of the record's fields under key " + v.key.ID()
			}
			v.fail(r.Seq, BreakEdited, "stored hash %s is not %s: the record was edited", r.Hash, how)
		} else if r.PrevHash != v.prev.Hash {
			what := fmt.Sprintf("the hash %s of seq %d", v.prev.Hash, v.prev.Seq)
			if v.lost {
				what = fmt.Sprintf("the hash %s the gap record before it gives record %d", v.prev.Hash, v.prev.Seq)
			}
			v.fail(r.Seq, BreakRelinked, "prev_hash %s is not %s: a record was replaced or inserted", r.PrevHash, what)
		}
	}
	if v.Broken() {
		return false
	}
	v.prev, v.lost = Anchor{Seq: r.Seq, Hash: r.Hash}, false
	if r.Method == MethodGap && r.Outcome == OutcomeLost {
		v.gap(r)
		return !v.Broken()
	}
	for i := range v.rep.Anchored {
		if c := &v.rep.Anchored[i]; c.Result == "unchecked" && c.Seq == r.Seq {
			if c.Hash != r.Hash {
				v.fail(c.Seq, BreakAnchored, "record %d has hash %s, not the anchored head's %s: the trail was rewritten from there or before", c.Seq, r.Hash, c.Hash)
				return false
			}
			c.Result = "matches"
		}
	}
	return true
}

// gap notes the gap record r (sealed and linked correctly) and moves the
// walk past the records it stands for.
func (v *Verifier) gap(r *Record) {
	g, ok := gapOf(r)
	if !ok {
		v.fail(r.Seq, BreakInvalid, "gap record %d does not say which records were lost", r.Seq)
		return
	}
	v.rep.Gaps = append(v.rep.Gaps, Gap{From: g.From, To: g.To, Kept: g.Kept, Reason: r.Error})
	v.prev, v.lost = g.after(r), true
	// An anchored head among the lost records cannot be checked, but for
	// the last of them, whose hash the record after it gives.
	for i := range v.rep.Anchored {
		c := &v.rep.Anchored[i]
		switch {
		case c.Result != "unchecked" || c.Seq < g.From || c.Seq > g.To:
		case c.Seq == v.prev.Seq && c.Hash == v.prev.Hash:
			c.Result = "matches"
		case c.Seq == g.To && g.Next != nil:
			v.fail(c.Seq, BreakAnchored, "the anchored head %d has hash %s, but the record after it links to %s: the trail was rewritten", c.Seq, c.Hash, *g.Next)
			return
		default:
			c.Result = "lost"
		}
	}
}

// Report finishes the walk: it checks that the chain ended at the head and
// passed through every anchored head, and returns the report.
func (v *Verifier) Report() *VerifyReport {
	if !v.ended {
		v.ended = true
		v.Reached(v.rep.Head)
		for _, c := range v.rep.Anchored {
			if c.Result == "unchecked" && c.Seq > v.prev.Seq && !v.Broken() {
				v.fail(v.prev.Seq+1, BreakAnchored, "the anchored head %d (hash %s) is past the trail's last record %d: records %d to %d were deleted, and the stored head with them",
					c.Seq, c.Hash, v.prev.Seq, v.prev.Seq+1, c.Seq)
			}
		}
		if !v.Broken() && len(v.rep.Gaps) > 0 {
			g := v.rep.Gaps[0]
			v.fail(g.From, BreakLost, "%s", g.Reason)
		}
		v.rep.OK = !v.Broken()
	}
	rep := v.rep
	rep.Gaps = slices.Clone(rep.Gaps)
	rep.Anchored = slices.Clone(rep.Anchored)
	return &rep
}

// Reached checks that the records added so far end at h: the head, or a
// point the records added next continue from (a store that verifies a
// database's records and then journaled ones passes the database's head).
func (v *Verifier) Reached(h Anchor) {
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

// gapArgs are a gap record's Arguments: the records lost, the PrevHash of
// the record after them when one survived (the chain goes on from it, else
// from the gap record's own hash), and where the damaged journal was kept.
type gapArgs struct {
	From int64   `json:"from"`
	To   int64   `json:"to"`
	Next *Digest `json:"next_prev_hash,omitempty"`
	Kept string  `json:"kept,omitempty"`
}

// gapOf reads what the gap record r says; false when its arguments do not
// name the records it stands for, starting at its own seq.
func gapOf(r *Record) (gapArgs, bool) {
	var g gapArgs
	if wirejson.Unmarshal(r.Arguments, &g) != nil || g.From != r.Seq || g.To < g.From {
		return g, false
	}
	return g, true
}

// after is the point of the chain the record after the gap record r links
// to: the last record it stands for, with the hash the record after them
// links to when one survived (else r's own).
func (g gapArgs) after(r *Record) Anchor {
	a := Anchor{Seq: g.To, Hash: r.Hash}
	if g.Next != nil {
		a.Hash = *g.Next
	}
	return a
}

// NewGapRecord returns the unsealed gap record (see Gap) standing for the
// records from to to, lost to a damaged journal whose copy was kept at
// kept; next is the PrevHash of the record after them, nil when none
// survived. now stamps it.
func NewGapRecord(from, to int64, next *Digest, kept string, now time.Time) *Record {
	args, _ := json.Marshal(gapArgs{From: from, To: to, Next: next, Kept: kept})
	span := fmt.Sprintf("records %d to %d", from, to)
	if from == to {
		span = fmt.Sprintf("record %d", from)
	}
	return &Record{
		Time: time.Unix(0, now.UnixNano()).UTC(), Identity: "toolwire", Method: MethodGap, Outcome: OutcomeLost,
		Arguments: args, Error: fmt.Sprintf("%s lost to a damaged journal entry (kept at %s)", span, kept),
	}
}
