package audit

import (
	"context"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// blockingStore is a Store whose Append waits on gate, reporting each call
// on started; it records what it appended.
type blockingStore struct {
	started chan *Record
	gate    chan struct{}
	fail    error
	mu      sync.Mutex
	got     []*Record
}

func (s *blockingStore) Append(ctx context.Context, r *Record) error {
	select {
	case s.started <- r:
	default: // nobody watches
	}
	select {
	case <-s.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.fail != nil {
		return s.fail
	}
	s.mu.Lock()
	s.got = append(s.got, r)
	s.mu.Unlock()
	return nil
}

func (s *blockingStore) Query(context.Context, Filter) iter.Seq2[*Record, error] {
	return func(func(*Record, error) bool) {}
}
func (s *blockingStore) Verify(context.Context) (*VerifyReport, error) { return nil, nil }
func (s *blockingStore) Sweep(context.Context, time.Time) (int, error) { return 0, nil }
func (s *blockingStore) Close() error                                  { return nil }

func newBlocking() *blockingStore {
	return &blockingStore{started: make(chan *Record, 100), gate: make(chan struct{})}
}

func TestAsyncDropsWhenFull(t *testing.T) {
	st := newBlocking()
	var hooked atomic.Int64
	a := NewAsync(st, nil, WithLimits(Limits{MaxQueue: 2}), WithOnDrop(func(*Record) { hooked.Add(1) }))
	ctx := context.Background()

	// The writer takes the first record and blocks in the store.
	if err := a.Append(ctx, sample(0)); err != nil {
		t.Fatal(err)
	}
	<-st.started
	// Two fit in the queue; the next three are dropped.
	for i := 1; i <= 2; i++ {
		if err := a.Append(ctx, sample(i)); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	for i := 3; i <= 5; i++ {
		if err := a.Append(ctx, sample(i)); !errors.Is(err, ErrDropped) {
			t.Fatalf("record %d: %v, want ErrDropped", i, err)
		}
	}
	if a.Dropped() != 3 || hooked.Load() != 3 || a.Len() != 2 {
		t.Fatalf("dropped %d, hook %d, queued %d", a.Dropped(), hooked.Load(), a.Len())
	}
	// Unblocked, the writer drains the queue; Close waits for it.
	close(st.gate)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(st.got) != 3 || a.Written() != 3 || a.Dropped() != 3 {
		t.Fatalf("stored %d, written %d, dropped %d", len(st.got), a.Written(), a.Dropped())
	}
	for i, r := range st.got {
		if r.Time != sample(i).Time {
			t.Errorf("record %d out of order", i)
		}
	}
	if err := a.Append(ctx, sample(9)); !errors.Is(err, ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
	if err := a.Close(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("second close: %v", err)
	}
}

func TestAsyncDefaultQueueSize(t *testing.T) {
	st := newBlocking()
	a := NewAsync(st)
	a.Append(context.Background(), sample(0))
	<-st.started
	for i := range DefaultQueueSize {
		if err := a.Append(context.Background(), sample(i)); err != nil {
			t.Fatalf("record %d of the default queue: %v", i, err)
		}
	}
	if err := a.Append(context.Background(), sample(0)); !errors.Is(err, ErrDropped) {
		t.Fatalf("past the default size: %v", err)
	}
	close(st.gate)
	a.Close(context.Background())
}

func TestAsyncCloseDeadline(t *testing.T) {
	st := newBlocking()
	var hooked atomic.Int64
	a := NewAsync(st, WithLimits(Limits{MaxQueue: 10}), WithOnDrop(func(*Record) { hooked.Add(1) }))
	for i := range 5 {
		a.Append(context.Background(), sample(i))
	}
	<-st.started
	// The store never unblocks: Close gives up at its deadline, cancels the
	// append under way and counts the four queued records as dropped.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := a.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("close: %v", err)
	}
	if a.Dropped() != 4 || hooked.Load() != 4 || a.Failed() != 1 || a.Written() != 0 {
		t.Fatalf("dropped %d, hooked %d, failed %d, written %d", a.Dropped(), hooked.Load(), a.Failed(), a.Written())
	}
}

func TestAsyncStoreErrors(t *testing.T) {
	st := newBlocking()
	st.fail = errors.New("disk full")
	close(st.gate)
	var errs atomic.Int64
	a := NewAsync(st, WithOnError(func(_ *Record, err error) { errs.Add(1) }))
	for i := range 3 {
		a.Append(context.Background(), sample(i))
	}
	a.Close(context.Background())
	if a.Failed() != 3 || errs.Load() != 3 {
		t.Errorf("failed %d, hook %d", a.Failed(), errs.Load())
	}
}
