package transport

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/jsonrpc"
)

func TestMemoryBudgetAcquireRelease(t *testing.T) {
	b := NewMemoryBudget(100)
	if b.Limit() != 100 || b.InUse() != 0 {
		t.Fatalf("new budget: limit %d, in use %d", b.Limit(), b.InUse())
	}
	if !b.TryAcquire(60) || !b.TryAcquire(40) || b.InUse() != 100 {
		t.Fatalf("100 bytes in two takes refused; in use %d", b.InUse())
	}
	if b.TryAcquire(1) || b.InUse() != 100 || b.Refused() != 1 {
		t.Fatalf("a byte past the limit: in use %d, refused %d", b.InUse(), b.Refused())
	}
	b.Release(60)
	if b.InUse() != 40 || !b.TryAcquire(60) {
		t.Fatalf("after release: in use %d", b.InUse())
	}
	b.Release(100)
	if b.TryAcquire(101) || b.InUse() != 0 {
		t.Fatalf("a request larger than the whole budget: in use %d", b.InUse())
	}
	// Nothing and negative amounts take nothing; over-release never grows
	// the budget past its limit.
	if !b.TryAcquire(0) || !b.TryAcquire(-5) || b.InUse() != 0 {
		t.Fatalf("zero and negative: in use %d", b.InUse())
	}
	b.Release(1000)
	if b.InUse() != 0 || b.TryAcquire(101) {
		t.Fatalf("over-release: in use %d", b.InUse())
	}
	// A limit of zero or less is the default; a nil budget admits all.
	if NewMemoryBudget(0).Limit() != DefaultMemoryBudget || NewMemoryBudget(-1).Limit() != DefaultMemoryBudget {
		t.Error("a limit of zero or less is not the default")
	}
	var none *MemoryBudget
	if !none.TryAcquire(1<<62) || none.InUse() != 0 || none.Limit() != 0 || none.Refused() != 0 {
		t.Error("a nil budget refuses")
	}
	none.Release(5)
}

// The budget is shared by goroutines: it never holds more than its limit,
// and once every taker has given back, nothing is held.
func TestMemoryBudgetConcurrent(t *testing.T) {
	const limit = 1000
	b := NewMemoryBudget(limit)
	var over atomic.Bool
	var granted atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				n := int64(1 + (g*31+i*17)%300)
				if b.TryAcquire(n) {
					granted.Add(1)
					if b.InUse() > limit {
						over.Store(true)
					}
					b.Release(n)
				}
			}
		}()
	}
	wg.Wait()
	if over.Load() || b.InUse() != 0 || granted.Load() == 0 {
		t.Fatalf("over the limit %v, in use at the end %d, granted %d", over.Load(), b.InUse(), granted.Load())
	}
}

// Taking and giving back allocate nothing, on a budget and through a
// share of a share: the budget costs nothing per request.
func TestMemoryBudgetDoesNotAllocate(t *testing.T) {
	for name, b := range map[string]*MemoryBudget{
		"budget": NewMemoryBudget(1 << 20),
		"share":  NewMemoryBudget(1<<20).Share("anonymous", 1<<19).Share("address", 1<<18),
	} {
		if n := testing.AllocsPerRun(100, func() {
			if b.TryAcquire(512) {
				b.Release(512)
			}
			b.TryAcquire(2 << 20)
		}); n != 0 {
			t.Errorf("%s: %v allocations per TryAcquire/Release", name, n)
		}
	}
}

func TestMemoryBudgetRefusal(t *testing.T) {
	b := NewMemoryBudget(1000)
	e := b.Refusal(600)
	if e.Code != jsonrpc.CodeOverloaded || e.Message != "server overloaded: requests in flight hold the memory budget of 1000 bytes; this request of 600 bytes was not read: retry once earlier requests are answered" {
		t.Errorf("got %d %q", e.Code, e.Message)
	}
	if e := b.Refusal(1001); e.Message != "server overloaded: a request of 1001 bytes exceeds the memory budget of 1000 bytes for requests in flight; it was not read" {
		t.Errorf("got %q", e.Message)
	}
}

// By default every Serve shares the process's budget; WithMemoryBudget sets
// another (nil: none), the later option winning.
func TestMemoryBudgetOption(t *testing.T) {
	if c := newServeConfig(nil); c.budget != SharedMemoryBudget() || c.budget.Limit() != DefaultMemoryBudget {
		t.Fatalf("default budget %p (limit %d), want the shared one", c.budget, c.budget.Limit())
	}
	mine := NewMemoryBudget(10)
	if c := newServeConfig([]ServeOption{WithMemoryBudget(mine)}); c.budget != mine {
		t.Error("WithMemoryBudget ignored")
	}
	if c := newServeConfig([]ServeOption{WithMemoryBudget(nil)}); c.budget != nil {
		t.Error("WithMemoryBudget(nil) does not turn the budget off")
	}
	if c := newServeConfig([]ServeOption{WithMemoryBudget(mine), WithMemoryBudget(nil)}); c.budget != nil {
		t.Error("a later WithMemoryBudget(nil) does not win")
	}
	if c := newServeConfig([]ServeOption{WithMemoryBudget(nil), WithMemoryBudget(mine)}); c.budget != mine {
		t.Error("a later WithMemoryBudget does not win")
	}
}

// RequestIDOf is the id recovery of refused messages, for other transports.
func TestRequestIDOf(t *testing.T) {
	if id := RequestIDOf([]byte(`{"jsonrpc":"2.0","method":"x","params":{"id":1},"id":"r"}`)); id != jsonrpc.StringID("r") {
		t.Errorf("got %s", id)
	}
	if id := RequestIDOf([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}`)); id.IsValid() {
		t.Errorf("a response's id recovered: %s", id)
	}
}
