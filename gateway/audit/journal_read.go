package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/toolwire/toolwire/gateway/policy"
)

// Reading beside the journal's owner. The owner acknowledges a record once
// it is journaled, before its background writer stores it in the
// database, so a store that does not own the journal (one opened read-only
// beside a running gateway) reads the journal too: Query and Verify take
// the journaled records past the head of the database snapshot they read.
// The journal is read first and the snapshot taken after: the owner starts
// the file over only once everything in it is stored, so a record
// acknowledged before the read is in the one or the other.

// journaled returns the records the journal beside s holds after the
// database's head, without locking or changing the file: none when there
// is no journal. Some may be stored by the time the caller's snapshot is
// taken; see continuing.
func (s *SQLite) journaled(ctx context.Context) ([]*Record, error) {
	f, err := os.Open(s.path + journalSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() == 0 {
		return nil, err
	}
	_, head, err := readAnchors(ctx, s.r)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", f.Name(), err)
	}
	return readJournaled(b, head.Seq, s.cfg.key), nil
}

// readJournaled reads a journal another process appends to, and returns
// its records after seq after. It reads the entries that form one chain
// from the start, up to the end, a torn or damaged entry (a write under
// way, which is not acknowledged yet; damage is reported by the owner's
// next open, which recovers the records after it) or an entry that does
// not continue the one before (the file was started over while it was
// read, after storing everything before it). Keyed entries are checked
// with key, or read unchecked without it.
func readJournaled(b []byte, after int64, key *Key) []*Record {
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
			if next := chainAfter(prev); r.Seq != next.Seq+1 || r.PrevHash != next.Hash {
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

// continuing returns the records of recs after head, the head of the
// database snapshot read after them. They must continue its chain; when
// they do not, it returns them all the same, for Verify to report the
// break, with an error saying so.
func continuing(recs []*Record, head Anchor) ([]*Record, error) {
	for len(recs) > 0 && recs[0].Seq <= head.Seq {
		recs = recs[1:]
	}
	if len(recs) > 0 && (recs[0].Seq != head.Seq+1 || recs[0].PrevHash != head.Hash) {
		return recs, fmt.Errorf("journaled record %d does not continue the database's chain (head %d): run verify", recs[0].Seq, head.Seq)
	}
	return recs, nil
}

// match reports whether r passes f's conditions on its fields, as the
// stores' queries apply them (not AfterSeq or Limit).
func (f *Filter) match(r *Record, glob *policy.Glob) bool {
	t := r.Time.UnixNano()
	switch {
	case !f.Since.IsZero() && t < f.Since.UnixNano(),
		!f.Until.IsZero() && t >= f.Until.UnixNano(),
		f.Identity != "" && r.Identity != f.Identity,
		f.Outcome != "" && r.Outcome != f.Outcome:
		return false
	case f.Tool == "":
		return true
	case glob != nil:
		return glob.Match(r.Tool)
	}
	return r.Tool == f.Tool
}
