package streamable

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestWorkersRunEverythingAndStopOnClose(t *testing.T) {
	p := newWorkers()
	var ran atomic.Int32
	var wg sync.WaitGroup
	for range 500 {
		wg.Add(1)
		p.run(func() { ran.Add(1); wg.Done() })
	}
	wg.Wait()
	if ran.Load() != 500 {
		t.Fatalf("ran %d of 500", ran.Load())
	}
	p.mu.Lock()
	idle := len(p.idle)
	p.mu.Unlock()
	if idle < 1 || idle > maxIdleWorkers {
		t.Errorf("%d idle workers, want 1 to %d", idle, maxIdleWorkers)
	}
	p.close()
	// Work after close still runs.
	done := make(chan struct{})
	p.run(func() { close(done) })
	<-done
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) != 0 {
		t.Errorf("%d workers idle after close", len(p.idle))
	}
}
