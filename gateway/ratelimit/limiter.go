// Package ratelimit limits the gateway's tools/call traffic with token
// buckets per identity, per persona and per tool (golang.org/x/time/rate).
// A limited call gets an isError result whose retry_after_ms is the
// retryAfter that Allow returns. Memory is bounded: idle buckets are
// evicted, and the number of buckets never exceeds a configured maximum,
// however many identities call.
package ratelimit

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Scope names a kind of bucket, as the `which` of a denial reports it.
const (
	ScopeIdentity = "identity"
	ScopePersona  = "persona"
	ScopeTool     = "tool"
)

// Config is the limits per scope. A scope's default applies to every
// identity, persona or tool unless an entry in the matching map overrides
// it (an override may be the zero Limit, to exempt one).
type Config struct {
	Identity   Limit
	Identities map[string]Limit
	Persona    Limit
	Personas   map[string]Limit
	Tool       Limit
	Tools      map[string]Limit

	// MaxBuckets bounds the number of buckets kept (all scopes together);
	// when full, the least recently used bucket is dropped. Default 100000.
	// A dropped bucket that had not yet refilled comes back full, so set
	// it above the number of callers active within any Burst/Rate window.
	MaxBuckets int
	// IdleTTL drops a bucket unused for this long. A bucket idle for at
	// least Burst/Rate has refilled, so dropping it then loses nothing;
	// the default, 10 minutes, covers any limit of at least one call per
	// minute with bursts up to 10.
	IdleTTL time.Duration
	// Now is the clock; time.Now by default. Tests pass their own.
	Now func() time.Time
}

// Limiter checks calls against their buckets. It is safe for concurrent use.
type Limiter struct {
	cfg Config
	mu  sync.Mutex
	// buckets by scope and name, and the same entries in a list ordered
	// from most to least recently used: the idle ones are at the back.
	byKey map[bucketKey]*list.Element
	lru   list.List
}

type bucketKey struct {
	scope, name string
}

type bucket struct {
	key  bucketKey
	lim  *rate.Limiter
	used time.Time
}

// New validates cfg and returns a Limiter. Errors name the scope and entry.
func New(cfg Config) (*Limiter, error) {
	var errs []error
	check := func(what string, l Limit) {
		if err := l.validate(); err != nil {
			errs = append(errs, fmt.Errorf("rate limit %s: %w", what, err))
		}
	}
	check("per identity", cfg.Identity)
	check("per persona", cfg.Persona)
	check("per tool", cfg.Tool)
	for n, l := range cfg.Identities {
		check(fmt.Sprintf("for identity %q", n), l)
	}
	for n, l := range cfg.Personas {
		check(fmt.Sprintf("for persona %q", n), l)
	}
	for n, l := range cfg.Tools {
		check(fmt.Sprintf("for tool %q", n), l)
	}
	if cfg.MaxBuckets < 0 {
		errs = append(errs, fmt.Errorf("rate limit max buckets %d is negative", cfg.MaxBuckets))
	}
	if cfg.IdleTTL < 0 {
		errs = append(errs, fmt.Errorf("rate limit idle TTL %v is negative", cfg.IdleTTL))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if cfg.MaxBuckets == 0 {
		cfg.MaxBuckets = 100000
	}
	if cfg.IdleTTL == 0 {
		cfg.IdleTTL = 10 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Limiter{cfg: cfg, byKey: map[bucketKey]*list.Element{}}, nil
}

func (l *Limiter) limitFor(scope, name string) Limit {
	var def Limit
	var over map[string]Limit
	switch scope {
	case ScopeIdentity:
		def, over = l.cfg.Identity, l.cfg.Identities
	case ScopePersona:
		def, over = l.cfg.Persona, l.cfg.Personas
	default:
		def, over = l.cfg.Tool, l.cfg.Tools
	}
	if o, ok := over[name]; ok {
		return o
	}
	return def
}

// Allow takes one token from each bucket that applies to a call of tool
// by identity (a stable key such as policy.Identity.String()) under
// persona; an empty persona or tool skips that scope. If any bucket is
// empty the call is refused, no bucket loses a token, retryAfter is the
// longest wait among the empty buckets and which is that bucket's scope.
func (l *Limiter) Allow(identity, persona, tool string) (ok bool, retryAfter time.Duration, which string) {
	return l.AllowAt(l.cfg.Now(), identity, persona, tool)
}

// AllowAt is Allow at the time now.
//
// All buckets are reserved and then, if any would make the call wait,
// all reservations are cancelled, under one lock: no other call sees
// the tokens taken in between, so a refused call consumes nothing.
func (l *Limiter) AllowAt(now time.Time, identity, persona, tool string) (ok bool, retryAfter time.Duration, which string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evictIdle(now)
	var (
		res  [3]*rate.Reservation
		nres int
	)
	for _, s := range [...]struct{ scope, name string }{
		{ScopeIdentity, identity}, {ScopePersona, persona}, {ScopeTool, tool},
	} {
		if s.name == "" {
			continue
		}
		lim := l.limitFor(s.scope, s.name)
		if lim.Unlimited() {
			continue
		}
		b := l.bucket(now, s.scope, s.name, lim)
		r := b.lim.ReserveN(now, 1)
		res[nres] = r
		nres++
		if d := r.DelayFrom(now); d > retryAfter {
			retryAfter, which = d, s.scope
		}
	}
	if retryAfter == 0 {
		return true, 0, ""
	}
	for i := nres - 1; i >= 0; i-- {
		res[i].CancelAt(now)
	}
	return false, retryAfter, which
}

// bucket returns the bucket for scope and name, making it if needed and
// marking it used at now.
func (l *Limiter) bucket(now time.Time, scope, name string, lim Limit) *bucket {
	k := bucketKey{scope, name}
	if e, ok := l.byKey[k]; ok {
		b := e.Value.(*bucket)
		b.used = now
		l.lru.MoveToFront(e)
		return b
	}
	for l.lru.Len() >= l.cfg.MaxBuckets {
		l.remove(l.lru.Back())
	}
	b := &bucket{key: k, lim: rate.NewLimiter(rate.Limit(lim.Rate), lim.Burst), used: now}
	l.byKey[k] = l.lru.PushFront(b)
	return b
}

// evictIdle drops the buckets unused for IdleTTL, from the back of the
// list, so it costs one comparison when there are none.
func (l *Limiter) evictIdle(now time.Time) {
	for e := l.lru.Back(); e != nil; e = l.lru.Back() {
		if now.Sub(e.Value.(*bucket).used) < l.cfg.IdleTTL {
			return
		}
		l.remove(e)
	}
}

func (l *Limiter) remove(e *list.Element) {
	delete(l.byKey, e.Value.(*bucket).key)
	l.lru.Remove(e)
}

// Len is the number of buckets kept.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}
