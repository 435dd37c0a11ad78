package transport

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/toolwire/toolwire/jsonrpc"
)

// DefaultMemoryBudget is the limit of the budget every Serve shares when it
// is given none (SharedMemoryBudget): 32 MiB of request bodies in flight.
//
// Why 32 MiB: a request costs more memory than its body while it is decoded
// and handled. With arguments checked on their raw bytes (schema.Check) and
// _meta never decoded into a tree, the worst case measured for tools whose
// schema is checked that way is a typed tool taking a large array (the
// handler's own []int): about 22 bytes allocated and 15 bytes of peak heap
// per body byte; a tool whose inputSchema needs a decoded tree (anyOf, $ref
// and the like at its root) costs up to about 200 bytes allocated and 50 of
// peak heap per body byte (go test -run TestAmplification -v ./server). 32
// MiB of bodies thus bounds requests in flight near 480 MiB of heap for
// typed tools and 1.6 GiB in the worst case, while admitting four stdio
// messages of the largest size (stdio.DefaultMaxMessageSize, 8 MiB) or
// eight HTTP bodies of 4 MiB at once, and thousands of ordinary requests of
// a few KiB. A server hosting tree-schema tools on a small machine should
// lower it.
const DefaultMemoryBudget = 32 << 20

// MemoryBudget bounds the memory of requests in flight on a server: the
// bytes of request bodies from the moment a transport accepts one until its
// handling ends (its response is sent). A transport asks for a request's
// bytes before decoding it (TryAcquire) and gives them back when the request
// is done (Release); past the limit a request is refused, undecoded, with
// jsonrpc.CodeOverloaded (Refusal), so a burst of large requests costs what the
// budget allows and no more, whatever their content would cost decoded.
//
// One budget may be shared by every transport of a server (stdio, in-memory
// and HTTP connections alike), making the bound server-wide. It is safe for
// concurrent use, and TryAcquire and Release neither allocate nor block. A
// nil *MemoryBudget admits everything.
//
// A Share of a budget is a budget too: what it admits is taken from its
// parent, and it never holds more than its own limit, so one class of
// callers (those without credentials, one client address) cannot take the
// whole of its parent.
type MemoryBudget struct {
	limit   int64
	inUse   atomic.Int64
	refused atomic.Int64
	parent  *MemoryBudget // a share's budget; nil for a budget of its own
	name    string        // who holds a share, for Refusal
}

// NewMemoryBudget returns a budget of limit bytes; a limit of 0 or less
// means DefaultMemoryBudget.
func NewMemoryBudget(limit int64) *MemoryBudget {
	if limit <= 0 {
		limit = DefaultMemoryBudget
	}
	return &MemoryBudget{limit: limit}
}

// sharedBudget is the budget of Serve calls given none.
var sharedBudget = sync.OnceValue(func() *MemoryBudget { return NewMemoryBudget(DefaultMemoryBudget) })

// SharedMemoryBudget returns the process's default budget
// (DefaultMemoryBudget bytes), which every Serve given no WithMemoryBudget
// shares, so that a process serving several connections bounds them
// together. An HTTP handler can share it too.
func SharedMemoryBudget() *MemoryBudget { return sharedBudget() }

// Share returns a share of b named name (who holds it, as a refusal says:
// "requests without credentials"): a budget of limit bytes whose takes are
// taken from b as well, so that its holders never hold more than limit of
// b, whatever b has left. A limit of 0 or less, or past b's, is b's. A
// share of a nil budget is nil (no budget).
func (b *MemoryBudget) Share(name string, limit int64) *MemoryBudget {
	if b == nil {
		return nil
	}
	if limit <= 0 || limit > b.limit {
		limit = b.limit
	}
	return &MemoryBudget{limit: limit, parent: b, name: name}
}

// TryAcquire takes n bytes from the budget and reports true, or reports
// false, taking nothing, when that would pass the limit (a request larger
// than the whole limit never fits); a share takes from its parent too, and
// refuses when either would pass its limit. n of 0 or less takes nothing
// and succeeds. Every successful TryAcquire must be matched by a Release of
// the same n.
func (b *MemoryBudget) TryAcquire(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		cur := b.inUse.Load()
		if n > b.limit-cur {
			b.refused.Add(1)
			return false
		}
		if b.inUse.CompareAndSwap(cur, cur+n) {
			break
		}
	}
	if !b.parent.TryAcquire(n) {
		b.inUse.Add(-n)
		return false
	}
	return true
}

// Release gives back n bytes taken by TryAcquire (for a share, to its
// parent too). Giving back more than was taken never makes the budget
// larger than its limit.
func (b *MemoryBudget) Release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	for {
		cur := b.inUse.Load()
		if b.inUse.CompareAndSwap(cur, max(cur-n, 0)) {
			break
		}
	}
	b.parent.Release(n)
}

// Available returns the bytes a TryAcquire could take now: what is left of
// the limit, and for a share of its parent's, whichever is less. It is a
// snapshot: another goroutine may take them first. A nil budget has no
// bound (math.MaxInt64).
func (b *MemoryBudget) Available() int64 {
	if b == nil {
		return math.MaxInt64
	}
	return min(max(b.limit-b.inUse.Load(), 0), b.parent.Available())
}

// InUse returns the bytes taken now.
func (b *MemoryBudget) InUse() int64 {
	if b == nil {
		return 0
	}
	return b.inUse.Load()
}

// Limit returns the budget's limit in bytes (0 for a nil budget: none).
func (b *MemoryBudget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// Refused returns how many times a take did not fit this budget's own
// limit: a TryAcquire on it, or on a share of it that its own limit let
// through.
func (b *MemoryBudget) Refused() int64 {
	if b == nil {
		return 0
	}
	return b.refused.Load()
}

// Refusal is the error answering a request of n bytes the budget refused:
// jsonrpc.CodeOverloaded, saying why in protocol terms. For a share it names the
// limit that does not fit n now: the share's own, or its parent's.
func (b *MemoryBudget) Refusal(n int64) *jsonrpc.Error {
	for s := b; s != nil && s.parent != nil; s = s.parent {
		if n > s.limit {
			return jsonrpc.NewError(jsonrpc.CodeOverloaded, "server overloaded: a request of %d bytes exceeds the share of %d bytes of the memory budget that %s may hold; it was not read", n, s.limit, s.name)
		}
		if n > s.limit-s.inUse.Load() {
			return jsonrpc.NewError(jsonrpc.CodeOverloaded, "server overloaded: %s hold their share of %d bytes of the memory budget; this request of %d bytes was not read: retry once their earlier requests are answered", s.name, s.limit, n)
		}
		if s.parent.parent == nil {
			b = s.parent
		}
	}
	if n > b.Limit() {
		return jsonrpc.NewError(jsonrpc.CodeOverloaded, "server overloaded: a request of %d bytes exceeds the memory budget of %d bytes for requests in flight; it was not read", n, b.Limit())
	}
	return jsonrpc.NewError(jsonrpc.CodeOverloaded, "server overloaded: requests in flight hold the memory budget of %d bytes; this request of %d bytes was not read: retry once earlier requests are answered", b.Limit(), n)
}
