package streamable

import (
	"net/http"
	"sync"
	"time"
)

// watchdog enforces read and write timeouts for every request of a Handler
// with one ticker, instead of setting and clearing a deadline on the
// connection around each read and write (four trips through the runtime
// poller per request, a tenth of a sequential call's latency). An operation
// registers when it starts and leaves when it ends; the ticker, which runs
// only while operations are registered, gives those past their time an
// immediate deadline, which fails the blocked read or write.
type watchdog struct {
	mu      sync.Mutex
	ops     map[*watched]struct{}
	running bool
	tick    time.Duration
}

// watched is one operation in progress.
type watched struct {
	due   time.Time
	rc    *http.ResponseController
	write bool
}

// past is a deadline that has already passed.
var past = time.Unix(1, 0)

// newWatchdog checks every tick: a quarter of the shortest timeout, within
// 5 ms and 1 s.
func newWatchdog(timeouts ...time.Duration) *watchdog {
	tick := time.Second
	for _, t := range timeouts {
		if t > 0 && t/4 < tick {
			tick = t / 4
		}
	}
	tick = max(tick, 5*time.Millisecond)
	return &watchdog{ops: map[*watched]struct{}{}, tick: tick}
}

// start registers w, due after d.
func (wd *watchdog) start(w *watched, d time.Duration) { wd.startAt(w, time.Now().Add(d)) }

// startAt registers w, due at due.
func (wd *watchdog) startAt(w *watched, due time.Time) {
	w.due = due
	wd.mu.Lock()
	wd.ops[w] = struct{}{}
	if !wd.running {
		wd.running = true
		go wd.run()
	}
	wd.mu.Unlock()
}

// extend moves the time w is due to due, if w is still registered (not
// already overdue).
func (wd *watchdog) extend(w *watched, due time.Time) {
	wd.mu.Lock()
	if _, ok := wd.ops[w]; ok {
		w.due = due
	}
	wd.mu.Unlock()
}

// stop unregisters w.
func (wd *watchdog) stop(w *watched) {
	wd.mu.Lock()
	delete(wd.ops, w)
	wd.mu.Unlock()
}

func (wd *watchdog) run() {
	t := time.NewTicker(wd.tick)
	defer t.Stop()
	var overdue []*watched
	for now := range t.C {
		wd.mu.Lock()
		if len(wd.ops) == 0 {
			wd.running = false
			wd.mu.Unlock()
			return
		}
		overdue = overdue[:0]
		for w := range wd.ops {
			if now.After(w.due) {
				overdue = append(overdue, w)
				delete(wd.ops, w)
			}
		}
		wd.mu.Unlock()
		for _, w := range overdue {
			if w.write {
				_ = w.rc.SetWriteDeadline(past)
			} else {
				_ = w.rc.SetReadDeadline(past)
			}
		}
	}
}
