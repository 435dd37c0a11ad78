package streamable

import "sync"

// workers runs 2025-era requests off their HTTP goroutines (which must stay
// free to end a response that a tool closes early, or that the client drops)
// on reused goroutines: a new goroutine would start on a small stack that the
// request's JSON work grows at once, every time. Idle workers wait in a LIFO
// stack, so the most recently used (warmest) is picked; at most
// maxIdleWorkers wait, and all of them exit when the handler closes.
type workers struct {
	mu     sync.Mutex
	idle   []chan func()
	closed bool
	quit   chan struct{}
}

const maxIdleWorkers = 64

func newWorkers() *workers { return &workers{quit: make(chan struct{})} }

// run hands f to an idle worker, or starts one.
func (p *workers) run(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 && !p.closed {
		ch := p.idle[n-1]
		p.idle = p.idle[:n-1]
		ch <- f // buffered: never blocks; under the lock so close cannot overtake it
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	go p.work(f)
}

func (p *workers) work(f func()) {
	ch := make(chan func(), 1)
	for {
		f()
		p.mu.Lock()
		if p.closed || len(p.idle) >= maxIdleWorkers {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, ch)
		p.mu.Unlock()
		select {
		case f = <-ch:
		case <-p.quit:
			select {
			case f := <-ch: // handed over just before close
				f()
			default:
			}
			return
		}
	}
}

// close ends the idle workers; later work runs on new goroutines.
func (p *workers) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.idle = nil
		close(p.quit)
	}
}
