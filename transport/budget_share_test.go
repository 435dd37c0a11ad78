package transport

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
)

// A share holds at most its limit, takes what it admits from its parent,
// and leaves the rest of the parent to others; a share of a share is
// bounded by both.
func TestMemoryBudgetShare(t *testing.T) {
	root := NewMemoryBudget(100)
	anon := root.Share("requests without credentials", 50)
	addr := anon.Share("requests without credentials from this address", 20)
	if anon.Limit() != 50 || addr.Limit() != 20 || root.Share("x", 0).Limit() != 100 || root.Share("x", 1000).Limit() != 100 {
		t.Fatalf("limits: %d %d", anon.Limit(), addr.Limit())
	}
	if !addr.TryAcquire(20) || addr.TryAcquire(1) {
		t.Fatalf("the address share: in use %d", addr.InUse())
	}
	if anon.InUse() != 20 || root.InUse() != 20 || addr.Refused() != 1 || anon.Refused() != 0 || root.Refused() != 0 {
		t.Fatalf("in use %d/%d/%d, refused %d/%d/%d", addr.InUse(), anon.InUse(), root.InUse(), addr.Refused(), anon.Refused(), root.Refused())
	}
	if !anon.TryAcquire(30) || anon.TryAcquire(1) || anon.Available() != 0 || root.Available() != 50 {
		t.Fatalf("the anonymous share: in use %d, root %d", anon.InUse(), root.InUse())
	}
	// Identified callers draw on the root: the share's holders left them
	// half of it, and they can have all of that.
	if !root.TryAcquire(50) || root.TryAcquire(1) {
		t.Fatalf("the rest of the root: in use %d", root.InUse())
	}
	// The root full: a share refuses though its own limit has room, and
	// takes nothing.
	anon.Release(30)
	if !root.TryAcquire(30) || anon.TryAcquire(1) || anon.InUse() != 20 || root.InUse() != 100 || root.Refused() != 2 {
		t.Fatalf("a share over a full root: in use %d, root %d, root refused %d", anon.InUse(), root.InUse(), root.Refused())
	}
	if got := anon.Refusal(1).Message; got != "server overloaded: requests in flight hold the memory budget of 100 bytes; this request of 1 bytes was not read: retry once earlier requests are answered" {
		t.Errorf("refusal at the root's limit: %q", got)
	}
	if got := addr.Refusal(5).Message; got != "server overloaded: requests without credentials from this address hold their share of 20 bytes of the memory budget; this request of 5 bytes was not read: retry once their earlier requests are answered" {
		t.Errorf("refusal at the share's limit: %q", got)
	}
	if got := addr.Refusal(21).Message; got != "server overloaded: a request of 21 bytes exceeds the share of 20 bytes of the memory budget that requests without credentials from this address may hold; it was not read" {
		t.Errorf("refusal past the share's limit: %q", got)
	}
	// Releasing a share gives back to every level.
	root.Release(80)
	addr.Release(20)
	if addr.InUse() != 0 || anon.InUse() != 0 || root.InUse() != 0 || addr.Available() != 20 || anon.Available() != 50 {
		t.Fatalf("after release: %d/%d/%d", addr.InUse(), anon.InUse(), root.InUse())
	}
	var none *MemoryBudget
	if none.Share("x", 5) != nil || none.Available() != math.MaxInt64 {
		t.Error("a share of no budget is not nil")
	}
}

// Goroutines taking through shares and the root at once: no level ever
// holds more than its limit, and everything is given back.
func TestMemoryBudgetShareConcurrent(t *testing.T) {
	root := NewMemoryBudget(1000)
	anon := root.Share("anonymous", 400)
	addrs := []*MemoryBudget{anon.Share("a", 150), anon.Share("b", 150), anon.Share("c", 150)}
	var over atomic.Bool
	check := func() {
		if root.InUse() > 1000 || anon.InUse() > 400 || addrs[0].InUse() > 150 || addrs[1].InUse() > 150 || addrs[2].InUse() > 150 {
			over.Store(true)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		b := root
		if g < 6 {
			b = addrs[g%3]
		}
		wg.Go(func() {
			for i := range 2000 {
				n := int64(1 + (g*31+i*17)%120)
				if b.TryAcquire(n) {
					check()
					b.Release(n)
				}
			}
		})
	}
	wg.Wait()
	if over.Load() || root.InUse() != 0 || anon.InUse() != 0 {
		t.Fatalf("over a limit %v; in use at the end %d, %d", over.Load(), root.InUse(), anon.InUse())
	}
}
