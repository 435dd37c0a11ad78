package server

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// blockingSender holds every Send until released, counting sends and the
// most that were ever in progress at once.
type blockingSender struct {
	release          chan struct{}
	sends, now, peak atomic.Int32
}

func (b *blockingSender) Send(ctx context.Context, _ jsonrpc.Message) error {
	b.sends.Add(1)
	n := b.now.Add(1)
	for {
		p := b.peak.Load()
		if n <= p || b.peak.CompareAndSwap(p, n) {
			break
		}
	}
	defer b.now.Add(-1)
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// While a slow client is being told of one change, further changes are
// coalesced: one sending goroutine per session, and one more notification
// once the first is through, however many changes came meanwhile.
func TestSlowClientGetsCoalescedChanges(t *testing.T) {
	s := New(mcp.Implementation{Name: "slow", Version: "1"})
	out := &blockingSender{release: make(chan struct{})}
	ss := s.NewSession(out)
	ss.mu.Lock()
	ss.initialized, ss.ready = true, true
	ss.mu.Unlock()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				ss.listChanged(changedTools)
			}
		}()
	}
	wg.Wait()
	testwait.WaitFor(t, "the first notification to be sent", func() bool { return out.sends.Load() > 0 })
	close(out.release)
	testwait.WaitFor(t, "the sending goroutine to end", func() bool {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		return !ss.notifier
	})
	if got := out.sends.Load(); got < 1 || got > 2 {
		t.Errorf("%d notifications for 800 changes; want 1 or 2", got)
	}
	if out.peak.Load() != 1 {
		t.Errorf("%d sends in progress at once; want 1", out.peak.Load())
	}
	ss.Close()
}
