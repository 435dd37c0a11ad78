package gateway

import (
	"time"

	"github.com/toolwire/toolwire/internal/backoff"
)

// startFailure is why a caller's session last failed to start, and when
// it may be tried again: a caller's next request within the wait fails at
// once (a *NotReadyError) instead of starting another child that fails
// the same way.
type startFailure struct {
	err  error
	n    int // failures in a row
	next time.Time
}

// failedLocked notes that key's session failed to start with err: its
// next start waits the upstream's backoff (MinBackoff doubling to
// MaxBackoff). At most max callers are remembered; past that the one
// whose wait ends first is forgotten.
func (p *clientPool) failedLocked(key clientKey, err error) {
	f := p.failed[key]
	if f == nil {
		if len(p.failed) >= p.max {
			var first clientKey
			var at time.Time
			for k, o := range p.failed {
				if at.IsZero() || o.next.Before(at) {
					first, at = k, o.next
				}
			}
			delete(p.failed, first)
		}
		f = &startFailure{}
		p.failed[key] = f
	}
	l := p.u.g.opts.limits
	f.n++
	f.err = err
	f.next = time.Now().Add(backoff.Policy{Initial: l.MinBackoff, Max: l.MaxBackoff, Jitter: backoff.EqualJitter}.Delay(f.n))
}
