package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/filelock"
)

// The journal is how an SQLite store without fsync (audit.WithFsync(false))
// makes Append cheap and still durable against a crash or SIGKILL of the
// process: Append seals the record and writes it to an append-only file
// next to the database (path + ".journal") with one write(2), and
// returns; a background writer moves journaled records into the database
// in batches and empties the file once all of it is in. Opening the store
// moves whatever a killed process left in the journal into the database
// first. The journal's owner holds an exclusive lock on it, so one process
// at a time appends (a second opens the store read-only: it queries and
// verifies every record the owner acknowledged, stored or still journaled
// (journal_read.go), and Append fails).
type journal struct {
	s    *Store
	f    *os.File
	path string

	mu       sync.Mutex
	head     audit.Anchor    // the chain after the last record journaled
	queue    []*audit.Record // journaled, not yet in the database
	written  int64           // bytes in the file
	stored   int64           // the last Seq in the database
	err      error           // the last failure to move records into the database
	closing  bool
	changed  *sync.Cond    // signalled when queue, stored or closing change
	wake     chan struct{} // a record was journaled
	kick     chan struct{} // store now: a reader or Close waits
	done     chan struct{}
	buf      []byte
	gaps     []audit.Gap // written by recover
	maxBatch int
	restart  int64 // journalRestart; smaller in tests
}

// Timing of the background writer.
const (
	// journalRetry is how long it waits after failing to store a batch
	// before trying again.
	journalRetry = 100 * time.Millisecond
	// journalGather is how long it lets records gather before storing
	// them, unless a batch is full or a reader waits: a transaction costs
	// far more than a record in it, and the records are safe meanwhile.
	journalGather = 25 * time.Millisecond
	// journalRestart is the journal's size past which it is started over
	// once everything in it is stored (truncating costs a system call, so
	// it is not done after every batch).
	journalRestart = 1 << 20
)

// ErrReadOnly is Append on a store whose journal another process holds.
var ErrReadOnly = errors.New("audit: read-only: another process appends to this audit trail")

// openJournal takes the journal of s (locking it), moves what it holds into
// the database, and starts the background writer. It returns nil and no
// error when another process holds the journal: s is then read-only.
func openJournal(s *Store) (*journal, error) {
	path := s.path + audit.JournalSuffix
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: journal: %w", err)
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrHeld) {
			return nil, nil
		}
		return nil, fmt.Errorf("audit: journal: lock: %w", err)
	}
	j := &journal{s: s, f: f, path: path, wake: make(chan struct{}, 1), kick: make(chan struct{}, 1), done: make(chan struct{}), maxBatch: s.cfg.Limits.MaxBatch, restart: journalRestart}
	j.changed = sync.NewCond(&j.mu)
	if err := j.recover(); err != nil {
		f.Close()
		return nil, err
	}
	go j.run()
	return j, nil
}

// recover stores the journaled records the database lacks (those after
// its head that continue its chain), then empties the journal. A torn last
// entry, from a write the process died in, was never acknowledged and is
// dropped. Damage elsewhere never drops the intact entries after it: they
// are stored too, the records the damaged bytes held are replaced by a gap
// record saying so (see Gap), and the damaged file is kept beside the
// journal for whoever looks into it.
func (j *journal) recover() error {
	ctx := context.Background()
	_, head, err := readAnchors(ctx, j.s.w)
	if err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	if _, err := j.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	buf, err := io.ReadAll(j.f)
	if err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	if len(buf) > 0 && j.s.keyed {
		return errJournalKeyed // the trail's key is not this store's
	}
	sc := audit.ScanJournal(buf, j.s.cfg.Key)
	parts := sc.Parts
	if sc.Keyed || sc.MACBad > 0 && sc.MACOK == 0 && !j.s.keyOK {
		// Keyed entries that cannot be checked, or none holds under
		// this key: most likely another key than the trail's, and
		// taking them all for damage would lose them.
		return errJournalKeyed
	}
	var missing []*audit.Record
	kept := ""
	// lose replaces the records after head up to to by a gap record; next
	// is the PrevHash of the record after them, nil when none survived.
	lose := func(to int64, next *audit.Digest) error {
		if to <= head.Seq {
			return nil // stored before the journal was damaged
		}
		if kept == "" {
			if kept, err = keepDamaged(j.path, buf, j.s.cfg.Now()); err != nil {
				return err
			}
		}
		g := audit.NewGapRecord(head.Seq+1, to, next, kept, j.s.cfg.Now())
		j.s.cfg.Key.Seal(g, head)
		missing = append(missing, g)
		j.gaps = append(j.gaps, audit.Gap{From: g.Seq, To: to, Kept: kept, Reason: g.Error})
		head = audit.ChainAfter(g)
		return nil
	}
	var last int64 // the Seq of the last intact entry read
	var damage *audit.JournalPart
	for i := range parts {
		p := &parts[i]
		if p.Record == nil {
			damage = p
			continue
		}
		r := p.Record
		if damage != nil && r.Seq > head.Seq+1 {
			if err := lose(r.Seq-1, &r.PrevHash); err != nil {
				return err
			}
		}
		damage, last = nil, r.Seq
		if r.Seq <= head.Seq {
			continue // already stored
		}
		if r.Seq != head.Seq+1 || r.PrevHash != head.Hash {
			return fmt.Errorf("audit: journal %s: record %d does not continue the database's chain (head %d)", j.path, r.Seq, head.Seq)
		}
		missing = append(missing, r)
		head = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
	}
	if damage != nil { // damage up to the end: its entries were the newest
		base := last
		if base == 0 {
			base = head.Seq
			if damage.Seq > 0 && damage.Seq-1 < base {
				base = damage.Seq - 1
			}
		}
		if err := lose(base+int64(damage.Entries), nil); err != nil {
			return err
		}
	}
	for len(missing) > 0 {
		n := min(len(missing), j.maxBatch)
		if err := j.s.store(ctx, missing[:n], true); err != nil {
			return fmt.Errorf("audit: journal: storing what it holds: %w", err)
		}
		missing = missing[n:]
	}
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	j.head, j.stored = head, head.Seq
	return nil
}

// errJournalKeyed is the journal of a keyed trail recovered without its
// key (none, or another): its entries could not be checked, nor a gap
// record sealed.
var errJournalKeyed = errors.New("audit: the journal of this keyed trail needs its key to be recovered")

// keepDamaged copies the damaged journal b next to the journal at path,
// named after the time, and returns the copy's path.
func keepDamaged(path string, b []byte, now time.Time) (string, error) {
	name := path + ".damaged-" + now.UTC().Format("20060102T150405.000000000Z")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("audit: keeping the damaged journal: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("audit: keeping the damaged journal: %w", err)
	}
	return name, nil
}

// append seals r after the last journaled record and writes it to the
// journal; when it returns nil, r survives the process.
func (j *journal) append(r *audit.Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closing {
		return audit.ErrClosed
	}
	rec := *r
	j.buf = audit.AppendJournalEntry(j.buf[:0], &rec, j.head, j.s.cfg.Key)
	n, err := j.f.Write(j.buf)
	j.written += int64(n)
	if err != nil {
		// A partial entry makes the journal unreadable from there on:
		// stop taking records rather than lose them silently.
		j.closing = true
		return fmt.Errorf("audit: append: journal: %w", err)
	}
	j.head = audit.Anchor{Seq: rec.Seq, Hash: rec.Hash}
	j.queue = append(j.queue, &rec)
	*r = rec
	select {
	case j.wake <- struct{}{}:
	default:
	}
	return nil
}

// run moves journaled records into the database until closed and empty.
func (j *journal) run() {
	defer close(j.done)
	for {
		j.mu.Lock()
		for len(j.queue) == 0 && !j.closing {
			j.mu.Unlock()
			<-j.wake
			j.mu.Lock()
		}
		if len(j.queue) == 0 { // closing, and everything is stored
			j.mu.Unlock()
			return
		}
		if len(j.queue) < j.maxBatch && !j.closing {
			j.mu.Unlock()
			j.gather()
			j.mu.Lock()
		}
		batch := j.queue[:min(len(j.queue), j.maxBatch)]
		j.mu.Unlock()

		err := j.s.store(context.Background(), batch, true)

		j.mu.Lock()
		j.err = err
		if err == nil {
			j.queue = j.queue[len(batch):]
			j.stored = batch[len(batch)-1].Seq
			if len(j.queue) == 0 && j.written >= j.restart {
				// All of the file is in the database: start it over.
				if terr := j.f.Truncate(0); terr == nil {
					j.written = 0
				}
			}
		}
		j.changed.Broadcast()
		closing := j.closing
		j.mu.Unlock()
		if err != nil {
			if closing {
				return // the records stay in the journal for the next open
			}
			time.Sleep(journalRetry)
		}
	}
}

// gather waits journalGather for more records, less when a reader or Close
// kicks the writer.
func (j *journal) gather() {
	t := time.NewTimer(journalGather)
	defer t.Stop()
	select {
	case <-t.C:
	case <-j.kick:
	}
}

// hurry makes the writer store what it holds now.
func (j *journal) hurry() {
	select {
	case j.kick <- struct{}{}:
	default:
	}
}

// flush waits until every record journaled so far is in the database, or
// ctx ends, so that a Query or Verify in this process sees its own
// appends.
func (j *journal) flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		j.mu.Lock()
		j.changed.Broadcast()
		j.mu.Unlock()
	})
	defer stop()
	j.mu.Lock()
	defer j.mu.Unlock()
	want := j.head.Seq
	for j.stored < want {
		if err := ctx.Err(); err != nil {
			return err
		}
		j.hurry()
		if j.err != nil && j.closing {
			return j.err
		}
		j.changed.Wait()
	}
	return nil
}

// close stops taking records, waits until the background writer has
// stored what it can, and releases the journal.
func (j *journal) close() error {
	j.mu.Lock()
	j.closing = true
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
	j.hurry()
	<-j.done
	j.mu.Lock()
	err := j.err
	if len(j.queue) == 0 && j.written > 0 {
		// Everything is stored: leave an empty journal behind.
		if terr := j.f.Truncate(0); terr == nil {
			j.written = 0
		}
	}
	j.changed.Broadcast()
	j.mu.Unlock()
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}
