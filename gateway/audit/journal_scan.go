package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Reading a journal file that may be damaged. An entry is intact when its
// encoding reads and its hash holds; the encoding delimits itself, so an
// entry whose length word alone was damaged is still read whole. Past a
// damaged entry the scan resynchronises on the next intact one: every
// encoding starts with its tag, and only an intact entry's hash holds.

// journalPart is an intact entry (r) or a run of damaged bytes (r nil).
type journalPart struct {
	r *Record
	// entries is how many entries the damaged bytes held (at least 1),
	// by their length words when those lead exactly to what follows,
	// else by the encodings' tags found in them; seq the Seq the first
	// of them claims, 0 when unreadable (it cannot be trusted: use it
	// only where nothing better is known).
	entries int
	seq     int64
}

// journalScanner reads entries with a key (nil: keyless entries are
// checked, keyed ones are read unchecked, and keyed says some were);
// macOK and macBad count the keyed entries read whose HMAC held, and did
// not, under key.
type journalScanner struct {
	key           *Key
	keyed         bool
	macOK, macBad int
}

// entryStatus is what entryAt found.
type entryStatus int

const (
	entryIntact  entryStatus = iota
	entryTorn                // the bytes end within the entry its length declares
	entryDamaged             // anything else
)

// entryAt reads the entry b starts with, and its length when intact.
func (sc *journalScanner) entryAt(b []byte) (*Record, int, entryStatus) {
	if len(b) < 4 {
		return nil, 0, entryTorn
	}
	if r, m, err := decodePrefix(b[4:]); err == nil && 4+m+sha256.Size <= len(b) {
		copy(r.Hash[:], b[4+m:])
		if sc.holds(r, b[4:4+m]) {
			return r, 4 + m + sha256.Size, entryIntact
		}
	}
	if n := binary.BigEndian.Uint32(b); n <= maxJournalEntry && 4+int(n)+sha256.Size > len(b) {
		return nil, 0, entryTorn
	}
	return nil, 0, entryDamaged
}

// holds reports whether r's hash is that of its encoding enc.
func (sc *journalScanner) holds(r *Record, enc []byte) bool {
	switch {
	case r.Scheme == SchemeSHA256:
		return sha256.Sum256(enc) == r.Hash
	case sc.key != nil:
		if sc.key.sum(enc) != r.Hash {
			sc.macBad++
			return false
		}
		sc.macOK++
		return true
	}
	sc.keyed = true // cannot be checked here
	return true
}

// tagPrefix is what every encoding starts with, whatever its version.
var tagPrefix = []byte(encodingTag[:versionAt])

// scan reads the journal b: its intact entries and damaged runs in file
// order. A torn last entry (a write the process died in: never
// acknowledged) is left out; a torn-looking entry with an intact one after
// it is damage.
func (sc *journalScanner) scan(b []byte) []journalPart {
	var parts []journalPart
	for off := 0; off < len(b); {
		r, n, st := sc.entryAt(b[off:])
		if st == entryIntact {
			parts = append(parts, journalPart{r: r})
			off += n
			continue
		}
		next := sc.resync(b, off)
		if next < 0 && st == entryTorn {
			break
		}
		end := next
		if end < 0 {
			end = len(b)
		}
		parts = append(parts, damagedPart(b[off:end], end == len(b)))
		off = end
	}
	return parts
}

// resync returns the offset of the first intact entry after off, -1 when
// none.
func (sc *journalScanner) resync(b []byte, off int) int {
	for from := off + 1 + 4; from < len(b); {
		i := bytes.Index(b[from:], tagPrefix)
		if i < 0 {
			return -1
		}
		at := from + i - 4
		if _, _, st := sc.entryAt(b[at:]); st == entryIntact {
			return at
		}
		from += i + 1
	}
	return -1
}

// damagedPart describes the damaged bytes d; atEnd says they run to the
// end of the file, where a torn entry may end them.
func damagedPart(d []byte, atEnd bool) journalPart {
	p := journalPart{entries: bytes.Count(d, tagPrefix)}
	if len(d) >= 4+len(encodingTag)+8 && bytes.HasPrefix(d[4:], tagPrefix) {
		p.seq = int64(binary.BigEndian.Uint64(d[4+len(encodingTag):]))
		if p.seq < 1 {
			p.seq = 0
		}
	}
	// Follow the length words: when they lead exactly to the end of d
	// (or to a torn entry at the end of the file) they count the entries.
	n := 0
	for off := 0; off < len(d); n++ {
		if len(d)-off < 4 {
			n = -1
			break
		}
		size := 4 + int(binary.BigEndian.Uint32(d[off:])) + sha256.Size
		if size-4-sha256.Size > maxJournalEntry {
			n = -1
			break
		}
		if off+size > len(d) {
			if !atEnd || n == 0 {
				n = -1
			}
			break // a torn last entry: not one acknowledged
		}
		off += size
	}
	if n > 0 {
		p.entries = n
	}
	p.entries = max(p.entries, 1)
	return p
}

// chainAfter is the point of the chain the record after r links to: r's
// own, or for a gap record the last record it stands for, with the hash
// the record after them links to when one survived.
func chainAfter(r *Record) Anchor {
	a := Anchor{Seq: r.Seq, Hash: r.Hash}
	if r.Method != MethodGap || r.Outcome != OutcomeLost {
		return a
	}
	var g gapArgs
	if wirejson.Unmarshal(r.Arguments, &g) != nil || g.From != r.Seq || g.To < g.From {
		return a
	}
	a.Seq = g.To
	if g.Next != nil {
		a.Hash = *g.Next
	}
	return a
}
