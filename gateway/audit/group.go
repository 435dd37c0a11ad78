package audit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Group commit. A store's Appends go through a GroupCommit: a record that
// arrives while a commit is under way waits for it, and all the records
// waiting then are linked and written in the next single transaction (one
// sync for all of them), up to maxBatch at a time. A record that arrives
// while nothing is under way is committed at once: there is no timer, so a
// lone appender waits for its own commit only. The chain's order is the
// commit order: batches in turn, each in arrival order.

// pending is one Append waiting for its record to be committed.
type pending struct {
	ctx  context.Context
	rec  Record     // the caller's record, prepared; sealed by the commit
	done chan error // buffered: the commit's outcome for this record
}

// GroupCommit runs a store's group commits: every Store in the project
// appends through one, so that concurrent Appends share transactions the
// same way whatever the database. At most one batch is under way; the
// goroutine that commits runs only while records wait.
type GroupCommit struct {
	// commit stores batch in one transaction: it reads the head, seals each
	// record after the previous one, inserts them and moves the head, or
	// stores none of them.
	commit   func(ctx context.Context, batch []*Record) error
	maxBatch int

	mu      sync.Mutex
	queue   []*pending
	running bool // a goroutine is committing (run)
	closed  bool
	wg      sync.WaitGroup // the running goroutine

	// hook, when set (SetHook), is called by the store's commit inside
	// the transaction, after the inserts and before the commit; an error
	// rolls the batch back.
	hook func(ctx context.Context, batch []*Record) error
}

// NewGroupCommit returns the group commit of a store whose commit stores
// batch in one transaction: it reads the head, seals each record after the
// previous one, inserts them and moves the head, or stores none of them
// (and calls BeforeCommit just before committing). A batch holds at most
// maxBatch records (Limits.MaxBatch).
func NewGroupCommit(maxBatch int, commit func(ctx context.Context, batch []*Record) error) *GroupCommit {
	return &GroupCommit{commit: commit, maxBatch: max(maxBatch, 1)}
}

// BeforeCommit is called by the store's commit inside the transaction,
// after the inserts and before the commit: it runs the hook SetHook set, if
// any, and an error it returns must roll the batch back.
func (c *GroupCommit) BeforeCommit(ctx context.Context, batch []*Record) error {
	c.mu.Lock()
	hook := c.hook
	c.mu.Unlock()
	if hook == nil {
		return nil
	}
	return hook(ctx, batch)
}

// SetHook sets (nil: removes) the function BeforeCommit runs in every
// commit's transaction: for tests of a store's commit path (holding a
// batch, failing one).
func (c *GroupCommit) SetHook(hook func(ctx context.Context, batch []*Record) error) {
	c.mu.Lock()
	c.hook = hook
	c.mu.Unlock()
}

// Append commits a copy of r (already prepared) and, on success, copies the
// sealed record back to r. It returns when the record is committed, or its
// batch failed, or ctx was done before the record was taken into a batch.
// Once taken, it waits for the batch's outcome: a batch is cancelled only
// when the contexts of all its records are done, so that one caller giving
// up does not fail the others'.
func (c *GroupCommit) Append(ctx context.Context, r *Record) error {
	p := &pending{ctx: ctx, rec: *r, done: make(chan error, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.queue = append(c.queue, p)
	lead := !c.running
	if lead {
		c.running = true
		c.wg.Add(1)
	}
	c.mu.Unlock()
	if lead {
		c.lead()
	}

	var err error
	select {
	case err = <-p.done:
	case <-ctx.Done():
		if c.withdraw(p) {
			return fmt.Errorf("audit: append: %w", ctx.Err())
		}
		err = <-p.done
	}
	if err == nil {
		*r = p.rec
	}
	return err
}

// withdraw removes p from the queue, reporting whether it was still there
// (not yet taken into a batch).
func (c *GroupCommit) withdraw(p *pending) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.queue, p)
	if i < 0 {
		return false
	}
	c.queue = slices.Delete(c.queue, i, i+1)
	return true
}

// Queued is how many records wait for a batch (not the one under way).
func (c *GroupCommit) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// run commits batches while records wait, then exits.
func (c *GroupCommit) run() {
	defer c.wg.Done()
	for {
		batch := c.take()
		if batch == nil {
			return
		}
		c.commitBatch(batch)
	}
}

// lead commits, on the appending goroutine, the batch at the head of the
// queue (which holds its own record), then leaves what arrived meanwhile
// to a goroutine of its own (run): a lone Append costs no goroutine
// switch, and a busy one does not wait for later batches.
func (c *GroupCommit) lead() {
	if batch := c.take(); batch != nil {
		c.commitBatch(batch)
		c.mu.Lock()
		if len(c.queue) > 0 {
			c.mu.Unlock()
			go c.run() // it inherits running and the WaitGroup count
			return
		}
		c.running = false
		c.mu.Unlock()
	}
	c.wg.Done()
}

// commitBatch commits batch and tells each of its records the outcome.
func (c *GroupCommit) commitBatch(batch []*pending) {
	ctx, release := batchContext(batch)
	recs := make([]*Record, len(batch))
	for i, p := range batch {
		recs[i] = &p.rec
	}
	err := c.commit(ctx, recs)
	release()
	for _, p := range batch {
		p.done <- err
	}
}

func (c *GroupCommit) take() []*pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		for _, p := range c.queue {
			p.done <- ErrClosed
		}
		c.queue = nil
		c.running = false
		return nil
	}
	var batch []*pending
	n := 0
	for _, p := range c.queue {
		if len(batch) == c.maxBatch {
			break
		}
		n++
		if err := p.ctx.Err(); err != nil {
			p.done <- fmt.Errorf("audit: append: %w", err)
			continue
		}
		batch = append(batch, p)
	}
	c.queue = slices.Delete(c.queue, 0, n)
	if len(batch) == 0 {
		c.running = false
		return nil
	}
	return batch
}

// batchContext returns a context cancelled once the contexts of all of
// batch's records are done, and the function that releases it.
// When none of them can be cancelled (the gateway's are not), it is
// context.Background(), which spares the database drivers a watcher
// goroutine per transaction and statement.
func batchContext(batch []*pending) (context.Context, func()) {
	if !slices.ContainsFunc(batch, func(p *pending) bool { return p.ctx.Done() != nil }) {
		return context.Background(), func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var left atomic.Int64
	left.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, p := range batch {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// Closed reports whether Close was called.
func (c *GroupCommit) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close stops taking records: the batch under way finishes, the records
// still queued fail with ErrClosed, and later appends too. It returns when
// no commit is under way.
func (c *GroupCommit) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wg.Wait()
}
