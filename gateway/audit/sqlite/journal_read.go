package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/toolwire/toolwire/gateway/audit"
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
func (s *Store) journaled(ctx context.Context) ([]*audit.Record, error) {
	f, err := os.Open(s.path + audit.JournalSuffix)
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
	return audit.ReadJournal(b, head.Seq, s.cfg.Key), nil
}

// continuing returns the records of recs after head, the head of the
// database snapshot read after them. They must continue its chain; when
// they do not, it returns them all the same, for Verify to report the
// break, with an error saying so.
func continuing(recs []*audit.Record, head audit.Anchor) ([]*audit.Record, error) {
	for len(recs) > 0 && recs[0].Seq <= head.Seq {
		recs = recs[1:]
	}
	if len(recs) > 0 && (recs[0].Seq != head.Seq+1 || recs[0].PrevHash != head.Hash) {
		return recs, fmt.Errorf("journaled record %d does not continue the database's chain (head %d): run verify", recs[0].Seq, head.Seq)
	}
	return recs, nil
}
