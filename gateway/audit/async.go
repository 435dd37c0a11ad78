package audit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/toolwire/toolwire/internal/limits"
)

// DefaultQueueSize is the capacity of an Async queue unless
// Limits.MaxQueue says otherwise: at about 1 KiB a record, some 10 MiB at most.
const DefaultQueueSize = 10_000

// ErrDropped is returned by Async.Append when the queue is full: the record
// is not stored.
var ErrDropped = errors.New("audit: queue full, record dropped")

// Async is "async" delivery: Append queues the record and returns at once,
// and one background writer appends queued records to the Store in order.
// A full queue drops the record rather than slow the request down; every
// drop is counted (Dropped) and reported to the OnDrop hook, for a log line
// and a metric. Records are durable only once written: a crash loses the
// queue.
type Async struct {
	store    Store
	maxQueue int // Limits.MaxQueue, until NewAsync makes q
	q        chan *Record
	onDrop   func(*Record)
	onError  func(*Record, error)

	mu     sync.RWMutex // held for reading by Append, for writing by Close
	closed bool

	dropped atomic.Uint64
	failed  atomic.Uint64
	written atomic.Uint64
	done    chan struct{}
	stop    chan struct{}
	ctx     context.Context // the writer's; cancelled when Close gives up
	cancel  context.CancelFunc
}

// AsyncOption configures NewAsync. Options apply in order and nil options
// are ignored, as for Option.
type AsyncOption interface{ applyAsync(*Async) }

type asyncOption func(*Async)

func (f asyncOption) applyAsync(a *Async) { f(a) }

// WithOnDrop sets a hook called with every record dropped: on the appending
// goroutine when the queue was full, on the writer for records left at
// Close's deadline. It must not block.
func WithOnDrop(f func(*Record)) AsyncOption { return asyncOption(func(a *Async) { a.onDrop = f }) }

// WithOnError sets a hook called, on the writer, when the Store fails to
// append a record; that record is lost.
func WithOnError(f func(*Record, error)) AsyncOption {
	return asyncOption(func(a *Async) { a.onError = f })
}

// NewAsync starts the writer of a queue in front of s. Close stops it; s
// stays open, for its owner to close.
func NewAsync(s Store, opts ...AsyncOption) *Async {
	a := &Async{store: s, done: make(chan struct{}), stop: make(chan struct{})}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	for _, o := range opts {
		if o != nil {
			o.applyAsync(a)
		}
	}
	limits.Default(&a.maxQueue, DefaultQueueSize)
	a.q = make(chan *Record, a.maxQueue)
	go a.run()
	return a
}

func (a *Async) run() {
	defer close(a.done)
	for r := range a.q {
		select {
		case <-a.stop:
			// Close gave up: count what is left as dropped.
			a.drop(r)
			continue
		default:
		}
		if err := a.store.Append(a.ctx, r); err != nil {
			a.failed.Add(1)
			if a.onError != nil {
				a.onError(r, err)
			}
			continue
		}
		a.written.Add(1)
	}
}

func (a *Async) drop(r *Record) {
	a.dropped.Add(1)
	if a.onDrop != nil {
		a.onDrop(r)
	}
}

// Append queues r without waiting; the caller must not use r afterwards
// (the writer sets its Seq and hashes). It returns ErrDropped when the
// queue is full and ErrClosed after Close; ctx is not used.
func (a *Async) Append(_ context.Context, r *Record) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return ErrClosed
	}
	select {
	case a.q <- r:
		return nil
	default:
		a.drop(r)
		return ErrDropped
	}
}

// Dropped is how many records were dropped: queue full, or left unwritten
// at Close's deadline.
func (a *Async) Dropped() uint64 { return a.dropped.Load() }

// Failed is how many records the Store failed to append.
func (a *Async) Failed() uint64 { return a.failed.Load() }

// Written is how many records were appended to the Store.
func (a *Async) Written() uint64 { return a.written.Load() }

// Len is how many records wait in the queue.
func (a *Async) Len() int { return len(a.q) }

// Close stops taking records and waits for the writer to append those
// queued, until ctx is done; then the append under way is cancelled and the
// rest are dropped (counted, and passed to OnDrop), and Close returns
// ctx.Err(). It does not close the Store. Later calls return ErrClosed.
func (a *Async) Close(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	a.closed = true
	close(a.q)
	a.mu.Unlock()
	select {
	case <-a.done:
		a.cancel()
		return nil
	case <-ctx.Done():
		close(a.stop)
		a.cancel()
		<-a.done
		return ctx.Err()
	}
}
