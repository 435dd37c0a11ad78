package streamable

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/transport"
)

// charge is what one POST body holds of the memory budget, and where: the
// budget itself for a request with a principal; for one without, the share
// of its client address within the anonymous share (budgetShares).
type charge struct {
	s    *budgetShares
	pool *transport.MemoryBudget // nil: no budget
	addr string                  // the address share held; "" for none
	held int64
}

// take charges n more bytes; false, taking nothing, when they do not fit.
func (c *charge) take(n int64) bool {
	if !c.pool.TryAcquire(n) {
		return false
	}
	c.held += n
	return true
}

// trim gives back what is held past n.
func (c *charge) trim(n int64) {
	if c.held > n {
		c.pool.Release(c.held - n)
		c.held = n
	}
}

// release gives back everything the charge holds, and its address share.
func (c *charge) release() {
	c.trim(0)
	if c.addr != "" {
		c.s.drop(c.addr)
		c.addr = ""
	}
}

// budgetShares splits a handler's memory budget between callers with a
// principal (the whole budget) and those without (a share of it, and
// within that one share per client address), so that clients without
// credentials cannot starve identified ones, nor one address the rest.
type budgetShares struct {
	budget   *transport.MemoryBudget // nil: no budget
	anon     *transport.MemoryBudget // the anonymous share, or the budget
	addrSize int64                   // 0: no address shares

	mu    sync.Mutex
	addrs map[string]*addrShare // only while a body from the address is charged
}

type addrShare struct {
	b    *transport.MemoryBudget
	refs int
}

func newBudgetShares(o *handlerConfig) *budgetShares {
	s := &budgetShares{budget: o.budget, anon: o.budget, addrs: map[string]*addrShare{}}
	if o.budget == nil {
		return s
	}
	limit := o.budget.Limit()
	if o.anonShare >= 0 {
		size := o.anonShare
		if size == 0 {
			size = max(limit/2, o.maxBodyBytes)
		}
		s.anon = o.budget.Share("requests without credentials", size)
	}
	if o.addrShare >= 0 {
		s.addrSize = o.addrShare
		if s.addrSize == 0 {
			s.addrSize = max(limit/8, o.maxBodyBytes)
		}
	}
	return s
}

// charge starts the charge of r's body.
func (s *budgetShares) charge(r *http.Request) *charge {
	c := &charge{s: s, pool: s.budget}
	if s.budget == nil || auth.PrincipalFrom(r.Context()) != nil {
		return c
	}
	c.pool = s.anon
	if s.addrSize == 0 {
		return c
	}
	c.addr = httpguard.ClientAddress(r.RemoteAddr)
	s.mu.Lock()
	a := s.addrs[c.addr]
	if a == nil {
		a = &addrShare{b: s.anon.Share("requests without credentials from this address", s.addrSize)}
		s.addrs[c.addr] = a
	}
	a.refs++
	s.mu.Unlock()
	c.pool = a.b
	return c
}

// drop ends a charge's use of its address share, forgetting the share once
// no body from the address is charged.
func (s *budgetShares) drop(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.addrs[addr]; a != nil {
		if a.refs--; a.refs <= 0 {
			delete(s.addrs, addr)
		}
	}
}

// addresses returns how many address shares are held (for tests).
func (s *budgetShares) addresses() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.addrs)
}

// errOverBudget ends the read of a body whose next bytes do not fit the
// memory its caller may hold.
var errOverBudget = errors.New("streamable: request body past the memory budget")

// Buffer sizes of readCharged: a declared body up to firstRead is read into
// one buffer of its size; a larger or undeclared one starts at firstRead
// (undeclaredRead) and doubles as it arrives.
const (
	firstRead      = 16 << 10
	undeclaredRead = 512
)

// readCharged reads src to the end, charging c for its buffer as it grows,
// so that a body holds memory for the bytes it has sent (a declared length
// up to firstRead is charged whole at once). Up to uncharged bytes are read
// whatever the budget says, as the caller may handle a small message that
// is not a request uncharged; past that, a buffer that cannot be charged
// ends the read with errOverBudget. progress, if not nil, gets the bytes
// read so far after each read that returned some.
func readCharged(src io.Reader, declared, limit int64, c *charge, progress func(int64)) ([]byte, error) {
	bound := limit // the most the body can hold
	if declared >= 0 && declared < limit {
		bound = declared
	}
	grow := func(size int64) bool {
		if want := min(size, bound); want > c.held && !c.take(want-c.held) && want > uncharged {
			return false
		}
		return true
	}
	size := int64(undeclaredRead)
	if declared > 0 {
		size = min(declared+1, firstRead) // room to see the end without growing
	}
	if !grow(size) {
		return nil, errOverBudget
	}
	b := make([]byte, 0, size)
	for {
		n, err := src.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if n > 0 && progress != nil {
			progress(int64(len(b)))
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			next := min(2*int64(cap(b)), bound+1)
			if next <= int64(cap(b)) {
				next = 2 * int64(cap(b))
			}
			if !grow(next) {
				return b, errOverBudget
			}
			nb := make([]byte, len(b), next)
			copy(nb, b)
			b = nb
		}
	}
}

// bodyDeadline is when a body read that began at start must end, having
// received got bytes: Limits.BodyGrace plus a second for every
// rate bytes, never past the read timeout.
func (o *handlerConfig) bodyDeadline(start time.Time, got int64) time.Time {
	end := start.Add(o.readTimeout)
	if o.minBodyRate <= 0 {
		return end
	}
	d := o.bodyGrace + time.Duration(float64(got)/float64(o.minBodyRate)*float64(time.Second))
	if due := start.Add(d); due.Before(end) {
		return due
	}
	return end
}
