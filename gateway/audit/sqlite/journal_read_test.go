package sqlite

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/internal/testwait"
)

// besideWriter is a trail as `toolwire audit` sees it beside a running
// gateway: appends go to the journal's owner, whose background writer
// stores records up to stored in the database and keeps the later ones
// only journaled; Query and Verify go through a second, read-only store.
type besideWriter struct {
	*Store // the reader
	t      testing.TB
	owner  *Store
	stored atomic.Int64
}

var errHeld = errors.New("test: the writer is held")

func openBesideWriter(t testing.TB, path string, stored int64) *besideWriter {
	t.Helper()
	owner, err := Open(path, audit.WithFsync(false), audit.WithLimits(audit.Limits{MaxBatch: 1}))
	if err != nil {
		t.Fatal(err)
	}
	b := &besideWriter{t: t, owner: owner}
	b.stored.Store(stored)
	owner.gc.SetHook(func(_ context.Context, batch []*audit.Record) error {
		if batch[len(batch)-1].Seq > b.stored.Load() {
			return errHeld
		}
		return nil
	})
	if b.Store, err = Open(path); err != nil {
		owner.Close()
		t.Fatal(err)
	}
	if !b.ReadOnly() {
		t.Fatal("a store opened beside the journal's owner is not read-only")
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// Append journals r and, when the writer is to store it, waits until it is
// in the database.
func (b *besideWriter) Append(ctx context.Context, r *audit.Record) error {
	if err := b.owner.Append(ctx, r); err != nil {
		return err
	}
	if r.Seq <= b.stored.Load() {
		b.waitStored(r.Seq)
	}
	return nil
}

// release lets the writer store everything, and waits until it has.
func (b *besideWriter) release() {
	b.stored.Store(math.MaxInt64)
	b.owner.j.mu.Lock()
	head := b.owner.j.head.Seq
	b.owner.j.mu.Unlock()
	b.waitStored(head)
}

func (b *besideWriter) waitStored(seq int64) {
	b.t.Helper()
	j := b.owner.j
	testwait.WaitFor(b.t, "the journal's writer to store the records", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.stored >= seq
	})
}

func (b *besideWriter) Close() error {
	b.stored.Store(math.MaxInt64)
	b.Store.Close()
	return b.owner.Close()
}

// besideWriterKind: half the records of a test in the database, the rest
// only in the journal.
var besideWriterKind = storetest.Kind{
	Open: func(t *testing.T, opts ...audit.Option) audit.Store {
		return openBesideWriter(t, filepath.Join(t.TempDir(), "audit.db"), 5)
	},
}

// TestJournalReaderQuery: beside the journal's owner, Query's filters,
// limits and paging see the journaled records as the stored ones, and a
// record is read back exactly either way.
func TestJournalReaderQuery(t *testing.T) {
	storetest.Run(t, besideWriterKind, "Query", "AnyBytes")
}

// TestJournalReaderSeesPendingRecords: a reader beside the journal's owner
// sees every acknowledged record, and a chain that verifies up to the last
// of them, while they wait in the journal, once the writer has stored
// them, and once the owner has closed and emptied the journal.
func TestJournalReaderSeesPendingRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	b := openBesideWriter(t, path, 3)
	acked := storetest.AppendN(t, b, 8, nil)
	check := func(when string) {
		t.Helper()
		got := storetest.Collect(t, b, audit.Filter{})
		if len(got) != len(acked) {
			t.Fatalf("%s: the reader sees records %v, want 1 to %d", when, storetest.Seqs(got), len(acked))
		}
		for i, r := range got {
			if r.Seq != acked[i].Seq || r.Hash != acked[i].Hash || r.Identity != acked[i].Identity || !r.Time.Equal(acked[i].Time) {
				t.Fatalf("%s: record %d read as %+v, acknowledged as %+v", when, i+1, r, acked[i])
			}
		}
		rep := storetest.MustVerify(t, b)
		last := acked[len(acked)-1]
		if rep.Checked != 8 || rep.Head != (audit.Anchor{Seq: last.Seq, Hash: last.Hash}) {
			t.Fatalf("%s: verify %+v", when, rep)
		}
	}
	if st, err := os.Stat(path + audit.JournalSuffix); err != nil || st.Size() == 0 {
		t.Fatalf("the journal: %v %v", st, err)
	}
	check("records 4 to 8 journaled only")
	b.release()
	check("all stored")
	if err := b.owner.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + audit.JournalSuffix); err != nil || st.Size() != 0 {
		t.Fatalf("the journal after its owner closed: %v %v", st, err)
	}
	check("the owner closed")
}

// journalOwnedElsewhere writes entries as the journal of the trail at path
// and holds its lock for the test, as a running gateway would.
func journalOwnedElsewhere(t *testing.T, path string, entries []byte) {
	t.Helper()
	f, err := os.OpenFile(path+audit.JournalSuffix, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(entries); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// TestJournalReaderTornTail: reading a journal another process appends to,
// a reader takes the entries that continue the database's chain up to a
// torn last entry (a write under way), a damaged one, or one that does not
// continue the entry before it (the file started over while it was read),
// and leaves the file as it was. Journaled records that do not continue
// the database's chain are a query error and a break for verify.
func TestJournalReaderTornTail(t *testing.T) {
	type built struct {
		entries []byte
		next    audit.Anchor // the anchor the next entry follows
	}
	// stored3 makes a trail of three stored records and returns the
	// journal a gateway that stored them would hold: their entries.
	stored3 := func(t *testing.T) (string, built) {
		path := filepath.Join(t.TempDir(), "audit.db")
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var b built
		for _, r := range storetest.AppendN(t, s, 3, nil) {
			b.entries = audit.AppendJournalEntry(b.entries, r, b.next, nil)
			b.next = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
		}
		s.Close()
		return path, b
	}
	add := func(b *built, i int) []byte {
		r := storetest.Sample(i)
		if err := (audit.Limits{}).Prepare(r, time.Now()); err != nil {
			t.Fatal(err)
		}
		start := len(b.entries)
		b.entries = audit.AppendJournalEntry(b.entries, r, b.next, nil)
		b.next = audit.Anchor{Seq: r.Seq, Hash: r.Hash}
		return b.entries[start:]
	}
	cases := []struct {
		name    string
		journal func(b *built) []byte
		want    int64 // the records seen: 1 to want
		err     string
		brk     *audit.Break
	}{
		{"whole entries", func(b *built) []byte { add(b, 4); add(b, 5); return b.entries }, 5, "", nil},
		{"a torn last entry", func(b *built) []byte {
			add(b, 4)
			add(b, 5)
			whole := len(b.entries)
			add(b, 6)
			return b.entries[:whole+30]
		}, 5, "", nil},
		{"half a length", func(b *built) []byte { add(b, 4); return append(b.entries, 0, 0) }, 4, "", nil},
		{"a damaged entry", func(b *built) []byte {
			add(b, 4)
			e := add(b, 5)
			e[40] ^= 1
			add(b, 6)
			return b.entries
		}, 4, "", nil},
		{"started over while read", func(b *built) []byte {
			add(b, 4)
			b.next = audit.Anchor{Seq: 9, Hash: audit.Digest{9}}
			add(b, 10)
			return b.entries
		}, 4, "", nil},
		{"only stored records", func(b *built) []byte { return b.entries }, 3, "", nil},
		{"not continuing the database's chain", func(b *built) []byte {
			b.entries, b.next = nil, audit.Anchor{Seq: 4, Hash: audit.Digest{4}}
			add(b, 5)
			add(b, 6)
			return b.entries
		}, 3, "does not continue the database's chain", &audit.Break{Seq: 4, Kind: audit.BreakMissing}},
		{"relinked after the database's head", func(b *built) []byte {
			b.entries, b.next = nil, audit.Anchor{Seq: 3, Hash: audit.Digest{3}}
			add(b, 4)
			return b.entries
		}, 3, "does not continue the database's chain", &audit.Break{Seq: 4, Kind: audit.BreakRelinked}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, b := stored3(t)
			entries := c.journal(&b)
			journalOwnedElsewhere(t, path, entries)
			s := openAt(t, path)
			if !s.ReadOnly() {
				t.Fatal("not read-only beside the journal's owner")
			}
			var got []*audit.Record
			var qerr error
			for r, err := range s.Query(context.Background(), audit.Filter{}) {
				if err != nil {
					qerr = err
					break
				}
				got = append(got, r)
			}
			rep, err := s.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if c.err != "" {
				if qerr == nil || !strings.Contains(qerr.Error(), c.err) {
					t.Errorf("query: %v, want an error saying %q", qerr, c.err)
				}
				if rep.OK || rep.Break.Seq != c.brk.Seq || rep.Break.Kind != c.brk.Kind {
					t.Errorf("verify: %+v, want %s at %d", rep.Break, c.brk.Kind, c.brk.Seq)
				}
			} else {
				if qerr != nil {
					t.Fatal(qerr)
				}
				if want := seqsUpTo(c.want); !slices.Equal(storetest.Seqs(got), want) {
					t.Errorf("query: %v, want %v", storetest.Seqs(got), want)
				}
				if !rep.OK || rep.Checked != c.want || rep.Head.Seq != c.want {
					t.Errorf("verify: %+v %v", rep, rep.Break)
				}
			}
			if on, err := os.ReadFile(path + audit.JournalSuffix); err != nil || !bytes.Equal(on, entries) {
				t.Errorf("the reader changed the journal: %v", err)
			}
		})
	}
}

// TestJournalReaderEditedHead: beside journaled records, an edit of the
// newest stored record is still found.
func TestJournalReaderEditedHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	b := openBesideWriter(t, path, 3)
	storetest.AppendN(t, b, 5, nil)
	rawExec(t, path, `UPDATE audit SET identity = 'mallory' WHERE seq = 3`)
	storetest.WantBreak(t, b, 3, audit.BreakEdited)
}

func seqsUpTo(n int64) []int64 {
	var out []int64
	for i := int64(1); i <= n; i++ {
		out = append(out, i)
	}
	return out
}

// TestJournalReaderRacesTheWriter: while records are appended and the
// writer stores them and starts the journal over again and again, every
// query of a reader beside it holds every record acknowledged before the
// query began, in one unbroken run, and every verify passes.
func TestJournalReaderRacesTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	owner := openAt(t, path, audit.WithFsync(false))
	owner.j.mu.Lock()
	owner.j.restart = 4 << 10 // a few records: the file starts over all the time
	owner.j.mu.Unlock()
	reader := openAt(t, path)

	// The appender appends a burst of records each round, while the
	// reader reads: bounded, so that the writer catches up between bursts
	// and starts the journal over.
	var acked atomic.Int64
	bursts := make(chan int, 1)
	appending := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(appending)
		i := 0
		for n := range bursts {
			for range n {
				r := storetest.Sample(i)
				i++
				if err := owner.Append(context.Background(), r); err != nil {
					t.Error(err)
					return
				}
				acked.Store(r.Seq)
			}
		}
	})
	defer wg.Wait()
	defer close(bursts)

	const rounds = 200
	for i := range rounds {
		before := acked.Load()
		select {
		case bursts <- 20:
		case <-appending: // failed
			return
		}
		from := max(0, before-100)
		got := storetest.Collect(t, reader, audit.Filter{AfterSeq: from})
		seqs := storetest.Seqs(got)
		if int64(len(seqs)) < before-from || (len(seqs) > 0 && (seqs[0] != from+1 || seqs[len(seqs)-1] != seqs[0]+int64(len(seqs))-1)) {
			t.Fatalf("round %d: records after %d acknowledged up to %d; the reader sees %v", i, from, before, seqs)
		}
		if i%20 == 0 {
			if rep := storetest.MustVerify(t, reader); rep.Last < before {
				t.Fatalf("round %d: verify checked up to %d, acknowledged up to %d", i, rep.Last, before)
			}
		}
	}
	// The journal holds less than all the records: it started over.
	entry := int64(len(audit.AppendJournalEntry(nil, storetest.Sample(0), audit.Anchor{}, nil)))
	owner.j.mu.Lock()
	written := owner.j.written
	owner.j.mu.Unlock()
	if n := acked.Load(); written >= n*entry {
		t.Errorf("the journal never started over: %d bytes for %d records", written, n)
	}
}
