package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
)

// The journal's file format. A store that acknowledges a record before it
// is in its database (the SQLite store without fsync) first writes it to a
// journal file, an append-only sequence of entries, each one sealed
// record: its length as 4 bytes big-endian, its Encode bytes (which carry
// every field but Hash, and start with the encoding's version tag), and
// its Hash (SHA-256 or, keyed, HMAC-SHA-256 of the encoding). Binary,
// because the hash covers the fields' exact bytes, which JSON cannot carry
// (invalid UTF-8), and because Append has computed the encoding for the
// hash anyway.

// JournalSuffix names a journal after the database it belongs to. (Not
// "-journal": that is SQLite's own rollback journal.)
const JournalSuffix = ".journal"

// MaxJournalEntry bounds one journaled record: Limits keep records far
// smaller (arguments and error text are cut), so a longer entry is damage.
const MaxJournalEntry = 8 << 20

// AppendJournalEntry seals r after prev with k (keyless when nil), as
// Key.Seal does, and appends its journal entry to b.
func AppendJournalEntry(b []byte, r *Record, prev Anchor, k *Key) []byte {
	r.Seq, r.PrevHash = prev.Seq+1, prev.Hash
	r.Scheme = SchemeSHA256
	if k != nil {
		r.Scheme = SchemeHMAC
	}
	start := len(b)
	b = r.appendEncoding(append(b, 0, 0, 0, 0))
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	if k != nil {
		r.Hash = k.sum(b[start+4:])
	} else {
		r.Hash = sha256.Sum256(b[start+4:])
	}
	return append(b, r.Hash[:]...)
}

// ReadJournal reads a journal another process appends to, and returns its
// records after seq after. It reads the entries that form one chain from
// the start, up to the end, a torn or damaged entry (a write under way,
// which is not acknowledged yet; damage is reported by the owner's next
// open, which recovers the records after it) or an entry that does not
// continue the one before (the file was started over while it was read,
// after storing everything before it). Keyed entries are checked with key,
// or read unchecked without it.
func ReadJournal(b []byte, after int64, key *Key) []*Record {
	sc := journalScanner{key: key}
	var recs []*Record
	var prev *Record
	for off := 0; off < len(b); {
		r, n, st := sc.entryAt(b[off:])
		if st != entryIntact {
			break
		}
		off += n
		if prev != nil {
			if next := ChainAfter(prev); r.Seq != next.Seq+1 || r.PrevHash != next.Hash {
				break
			}
		}
		prev = r
		if r.Seq > after {
			recs = append(recs, r)
		}
	}
	return recs
}

// JournalScan is what ScanJournal found in a journal file: its intact
// entries and damaged runs in file order, and what it learnt of the key
// its keyed entries were sealed with.
type JournalScan struct {
	// Parts are the intact entries and damaged runs, in file order.
	Parts []JournalPart
	// Keyed says keyed entries were read unchecked (no key was given).
	Keyed bool
	// MACOK and MACBad count the keyed entries whose HMAC held, and did
	// not, under the key given.
	MACOK, MACBad int
}

// ScanJournal reads the journal b, which may be damaged, checking keyed
// entries with key (nil: they are read unchecked, and Keyed says some
// were). A torn last entry (a write the process died in: never
// acknowledged) is left out; a torn-looking entry with an intact one after
// it is damage.
func ScanJournal(b []byte, key *Key) JournalScan {
	sc := journalScanner{key: key}
	parts := sc.scan(b)
	return JournalScan{Parts: parts, Keyed: sc.keyed, MACOK: sc.macOK, MACBad: sc.macBad}
}

// Reading a journal file that may be damaged. An entry is intact when its
// encoding reads and its hash holds; the encoding delimits itself, so an
// entry whose length word alone was damaged is still read whole. Past a
// damaged entry the scan resynchronises on the next intact one: every
// encoding starts with its tag, and only an intact entry's hash holds.

// JournalPart is an intact entry (Record) or a run of damaged bytes
// (Record nil) of a journal file.
type JournalPart struct {
	// Record is the intact entry's record, nil for damaged bytes.
	Record *Record
	// Entries is how many entries the damaged bytes held (at least 1),
	// by their length words when those lead exactly to what follows,
	// else by the encodings' tags found in them.
	Entries int
	// Seq is the Seq the first of the damaged entries claims, 0 when
	// unreadable (it cannot be trusted: use it only where nothing better
	// is known).
	Seq int64
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
	if n := binary.BigEndian.Uint32(b); n <= MaxJournalEntry && 4+int(n)+sha256.Size > len(b) {
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
func (sc *journalScanner) scan(b []byte) []JournalPart {
	var parts []JournalPart
	for off := 0; off < len(b); {
		r, n, st := sc.entryAt(b[off:])
		if st == entryIntact {
			parts = append(parts, JournalPart{Record: r})
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
func damagedPart(d []byte, atEnd bool) JournalPart {
	p := JournalPart{Entries: bytes.Count(d, tagPrefix)}
	if len(d) >= 4+len(encodingTag)+8 && bytes.HasPrefix(d[4:], tagPrefix) {
		p.Seq = int64(binary.BigEndian.Uint64(d[4+len(encodingTag):]))
		if p.Seq < 1 {
			p.Seq = 0
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
		if size-4-sha256.Size > MaxJournalEntry {
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
		p.Entries = n
	}
	p.Entries = max(p.Entries, 1)
	return p
}

// ChainAfter is the point of the chain the record after r links to: r's
// own, or for a gap record the last record it stands for, with the hash
// the record after them links to when one survived. A store moves its
// head to it after storing r.
func ChainAfter(r *Record) Anchor {
	if r.Method == MethodGap && r.Outcome == OutcomeLost {
		if g, ok := gapOf(r); ok {
			return g.after(r)
		}
	}
	return Anchor{Seq: r.Seq, Hash: r.Hash}
}
