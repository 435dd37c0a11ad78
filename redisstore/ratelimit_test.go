package redisstore

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/ratelimit"
	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

// gatewayLimiter is gateway.Limiter's method set: a *Limiter can be the
// gateway's limiter without this package importing the gateway.
type gatewayLimiter interface {
	Allow(identity, persona, tool string) (ok bool, retryAfter time.Duration, which string)
}

var _ gatewayLimiter = (*Limiter)(nil)

// limiterT0 is where the tests' clocks start: a whole microsecond, as every
// step they take, so that Redis (which counts microseconds) and the
// in-process limiter see the same times.
var limiterT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newFakeClock is a settable clock for WithLimiterClock.
func newFakeClock() *testclock.Clock { return testclock.New(limiterT0) }

func newLimiter(t testing.TB, c *Client, cfg ratelimit.Config, opts ...LimiterOption) *Limiter {
	t.Helper()
	l, err := c.Limiter(cfg, opts...)
	if err != nil {
		t.Fatalf("Limiter: %v", err)
	}
	return l
}

// decision is what Allow returns.
type decision struct {
	ok         bool
	retryAfter time.Duration
	which      string
}

func allow(l gatewayLimiter, identity, persona, tool string) decision {
	ok, ra, which := l.Allow(identity, persona, tool)
	return decision{ok, ra, which}
}

// expect checks one call's decision.
func expect(t testing.TB, l gatewayLimiter, identity, persona, tool string, want decision) {
	t.Helper()
	if got := allow(l, identity, persona, tool); got != want {
		t.Errorf("Allow(%.40q, %.40q, %.40q) = %+v, want %+v", identity, persona, tool, got, want)
	}
}

var allowed = decision{ok: true}

// rlKeys returns the rate limit keys on c's server under its prefix.
func rlKeys(t testing.TB, c *Client) []string {
	t.Helper()
	keys, err := do(t, c, "KEYS", c.prefix+"rl:*").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Configs that ratelimit.New refuses are refused with the same errors, and
// the Redis limiter adds none of its own.
func TestLimiterConfigErrors(t *testing.T) {
	c := open(t, testenv.Redis(t).URL())
	for _, cfg := range []ratelimit.Config{
		{Identity: ratelimit.Limit{Rate: -1, Burst: 1}},
		{Persona: ratelimit.Limit{Rate: 1, Burst: 0}},
		{Tool: ratelimit.Limit{Rate: math.NaN(), Burst: 1}},
		{Tools: map[string]ratelimit.Limit{"x": {Rate: math.Inf(1), Burst: 1}}},
		{Identities: map[string]ratelimit.Limit{"a": {Rate: 0, Burst: 3}}},
		{Personas: map[string]ratelimit.Limit{"p": {Rate: 1, Burst: -1}}},
		{MaxBuckets: -1},
		{IdleTTL: -time.Second},
		{Identity: ratelimit.Limit{Rate: -1, Burst: 1}, Tool: ratelimit.Limit{Rate: 1}},
	} {
		_, want := ratelimit.New(cfg)
		l, got := c.Limiter(cfg)
		if want == nil || got == nil || got.Error() != want.Error() || l != nil {
			t.Errorf("Limiter(%+v) = %v, %v; want the error %v", cfg, l, got, want)
		}
	}
	for _, cfg := range []ratelimit.Config{
		{},
		{Identity: ratelimit.PerSecond(1e-300, 1), Tool: ratelimit.PerSecond(1e300, math.MaxInt32)},
		{Tools: map[string]ratelimit.Limit{"free": {}}},
	} {
		if _, err := c.Limiter(cfg); err != nil {
			t.Errorf("Limiter(%+v): %v", cfg, err)
		}
	}
}

// Over a long random sequence of calls and clock steps, two Redis limiters
// on two clients (two replicas, the call going to either at random) decide
// exactly as one in-process ratelimit.Limiter at the same times: same ok
// and which, retryAfter within 1 ms (in fact to the nanosecond but for
// float rounding), with overrides, exempt names, empty persona and tool.
// The one tolerance: when two buckets' waits are equal within 1µs, either
// may be named (the in-process limiter's refused calls rewrite its
// buckets, which rounds their tokens differently in the last bit).
func TestLimiterMatchesInProcess(t *testing.T) {
	srv := testenv.Redis(t)
	clock := newFakeClock()
	// Every Burst/Rate is at least 20s, far above the test's real duration,
	// so that no key expires (in real time) while the fake clock says the
	// bucket has not refilled.
	cfg := ratelimit.Config{
		Identity:   ratelimit.PerSecond(0.0917, 2),
		Identities: map[string]ratelimit.Limit{"vip": ratelimit.PerSecond(1.03, 30), "free": {}},
		Persona:    ratelimit.PerSecond(0.0533, 2),
		Personas:   map[string]ratelimit.Limit{"admins": {}},
		Tool:       ratelimit.PerSecond(0.4771, 10),
		Tools:      map[string]ratelimit.Limit{"slow": ratelimit.PerMinute(0.97, 1), "free": {}},
	}
	replicas := []*Limiter{
		newLimiter(t, open(t, srv.URL()), cfg, WithLimiterClock(clock.Now)),
		newLimiter(t, open(t, srv.URL()), cfg, WithLimiterClock(clock.Now)),
	}
	ref, err := ratelimit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	identities := []string{"a", "b", "c", "vip", "free", "a:b"}
	personas := []string{"", "dev", "ops", "admins"}
	tools := []string{"", "search", "fetch", "slow", "free"}
	rng := rand.New(rand.NewPCG(1, 2))
	const calls = 10000
	counts := map[string]int{}
	var maxDiff time.Duration
	ties := 0
	for i := range calls {
		switch r := rng.IntN(100); {
		case r < 30: // same instant
		case r < 95:
			clock.Advance(time.Duration(rng.Int64N(int64(3*time.Second/time.Microsecond))) * time.Microsecond)
		default:
			clock.Advance(time.Duration(rng.Int64N(int64(90*time.Second/time.Microsecond))) * time.Microsecond)
		}
		id, p, tool := identities[rng.IntN(len(identities))], personas[rng.IntN(len(personas))], tools[rng.IntN(len(tools))]
		got := allow(replicas[rng.IntN(2)], id, p, tool)
		wok, wra, wwhich := ref.AllowAt(clock.Now(), id, p, tool)
		diff := got.retryAfter - wra
		if diff < 0 {
			diff = -diff
		}
		maxDiff = max(maxDiff, diff)
		if got.ok == wok && got.which != wwhich && diff <= time.Microsecond {
			// Two buckets' waits tie but for float rounding: either
			// scope is right. (The rates are chosen so that this is rare.)
			ties++
			wwhich = got.which
		}
		if got.ok != wok || got.which != wwhich || diff > time.Millisecond {
			t.Fatalf("call %d at %v: Allow(%q, %q, %q) = %+v, in process %v, %v, %q",
				i, clock.Now().Sub(limiterT0), id, p, tool, got, wok, wra, wwhich)
		}
		if got.ok {
			counts["allowed"]++
		} else {
			counts[got.which]++
		}
	}
	t.Logf("%d calls: %v; largest retryAfter difference %v; %d ties", calls, counts, maxDiff, ties)
	if ties > calls/100 {
		t.Errorf("%d ties in %d calls: the rates make too many", ties, calls)
	}
	for _, k := range []string{"allowed", ratelimit.ScopeIdentity, ratelimit.ScopePersona, ratelimit.ScopeTool} {
		if counts[k] < calls/20 {
			t.Errorf("only %d calls %s: the sequence does not exercise it", counts[k], k)
		}
	}
	for _, l := range replicas {
		if l.Degraded() {
			t.Error("a replica fell back during the test")
		}
	}
}

// Two replicas (two clients, Redis's clock) share one budget exactly: with
// a burst of 5, five calls pass in total across both, and the sixth is
// refused on either.
func TestLimiterReplicasShareBudget(t *testing.T) {
	srv := testenv.Redis(t)
	cfg := ratelimit.Config{Identity: ratelimit.PerSecond(0.001, 5)} // 1000s a token
	a := newLimiter(t, open(t, srv.URL()), cfg)
	b := newLimiter(t, open(t, srv.URL()), cfg)
	for i, l := range []*Limiter{a, b, b, a, b} {
		if got := allow(l, "u", "", ""); !got.ok {
			t.Fatalf("call %d: %+v, want allowed", i, got)
		}
	}
	for name, l := range map[string]*Limiter{"a": a, "b": b} {
		got := allow(l, "u", "", "")
		if got.ok || got.which != ratelimit.ScopeIdentity || got.retryAfter <= 990*time.Second || got.retryAfter > 1000*time.Second {
			t.Errorf("sixth call on replica %s: %+v, want refused by identity for about 1000s", name, got)
		}
	}
	expect(t, b, "other", "", "", allowed) // another identity has its own bucket
}

// Many goroutines on two clients call at once: exactly burst calls pass.
func TestLimiterConcurrent(t *testing.T) {
	srv := testenv.Redis(t)
	const burst = 100
	cfg := ratelimit.Config{Identity: ratelimit.PerSecond(1e-6, burst), Tool: ratelimit.PerSecond(1e-6, 10*burst)}
	replicas := []*Limiter{newLimiter(t, open(t, srv.URL()), cfg), newLimiter(t, open(t, srv.URL()), cfg)}
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for _, l := range replicas {
		for range 32 {
			wg.Go(func() {
				for range 10 {
					d := allow(l, "u", "", "t")
					switch {
					case d.ok:
						ok.Add(1)
					case d.which == ratelimit.ScopeIdentity && d.retryAfter > 0:
						refused.Add(1)
					default:
						t.Errorf("unexpected decision %+v", d)
					}
				}
			})
		}
	}
	wg.Wait()
	if ok.Load() != burst || refused.Load() != 2*32*10-burst {
		t.Fatalf("%d allowed, %d refused; want %d allowed of %d", ok.Load(), refused.Load(), burst, 2*32*10)
	}
	// The tool bucket lost exactly the allowed calls' tokens.
	tok, err := do(t, replicas[0].c, "HGET", replicas[0].key(ratelimit.ScopeTool, "t"), "t").Float64()
	if err != nil || math.Abs(tok-(10*burst-burst)) > 0.01 {
		t.Fatalf("tool bucket holds %v tokens (%v), want %d", tok, err, 10*burst-burst)
	}
}

// A refused call consumes nothing: not from the buckets that had tokens,
// whose stored state stays byte for byte, nor from the empty one. The
// longest wait names the scope.
func TestLimiterRefusedConsumesNothing(t *testing.T) {
	c := open(t, testenv.Redis(t).URL())
	clock := newFakeClock()
	l := newLimiter(t, c, ratelimit.Config{
		Identity: ratelimit.PerSecond(1, 5),
		Persona:  ratelimit.PerSecond(0.5, 2),
		Tool:     ratelimit.PerSecond(0.25, 1),
	}, WithLimiterClock(clock.Now))
	expect(t, l, "u", "p", "t1", allowed)
	state := func() string {
		var b strings.Builder
		for _, k := range []string{l.key("identity", "u"), l.key("persona", "p"), l.key("tool", "t1")} {
			fmt.Fprintln(&b, do(t, c, "HGETALL", k).Val())
		}
		return b.String()
	}
	before := state()
	for range 10 {
		expect(t, l, "u", "p", "t1", decision{false, 4 * time.Second, ratelimit.ScopeTool})
	}
	if after := state(); after != before {
		t.Fatalf("refused calls changed the buckets:\n%s\nthen\n%s", before, after)
	}
	expect(t, l, "u", "p", "t2", allowed)
	// The persona is empty now (2 taken): its 2s wait beats the identity's.
	expect(t, l, "u", "p", "t3", decision{false, 2 * time.Second, ratelimit.ScopePersona})
	expect(t, l, "u", "", "t3", allowed)
	expect(t, l, "u", "", "t4", allowed)
	expect(t, l, "u", "", "t5", allowed)
	expect(t, l, "u", "", "t6", decision{false, time.Second, ratelimit.ScopeIdentity})
	clock.Advance(500 * time.Millisecond)
	expect(t, l, "u", "", "t6", decision{false, 500 * time.Millisecond, ratelimit.ScopeIdentity})
	clock.Advance(500 * time.Millisecond)
	expect(t, l, "u", "", "t6", allowed)
}

// Per-name overrides replace the scope's default; the zero Limit exempts a
// scope or a name (no key is ever written for it); a call with every scope
// exempt costs no round trip.
func TestLimiterOverridesAndUnlimited(t *testing.T) {
	c := open(t, testenv.Redis(t).URL())
	h := countRoundTrips(c)
	clock := newFakeClock()
	l := newLimiter(t, c, ratelimit.Config{
		Identity:   ratelimit.PerSecond(1, 1),
		Identities: map[string]ratelimit.Limit{"vip": {}, "slow": ratelimit.PerMinute(1, 2)},
		Tools:      map[string]ratelimit.Limit{"slow": ratelimit.PerMinute(1, 1)},
	}, WithLimiterClock(clock.Now))
	for range 100 {
		expect(t, l, "vip", "any", "fast", allowed)
	}
	if n := h.count(); n != 0 {
		t.Errorf("%d round trips for calls with every scope unlimited, want 0", n)
	}
	expect(t, l, "u", "any", "fast", allowed)
	expect(t, l, "u", "any", "fast", decision{false, time.Second, ratelimit.ScopeIdentity})
	expect(t, l, "slow", "", "", allowed)
	expect(t, l, "slow", "", "", allowed)
	expect(t, l, "slow", "", "", decision{false, time.Minute, ratelimit.ScopeIdentity})
	expect(t, l, "vip", "", "slow", allowed)
	expect(t, l, "vip", "", "slow", decision{false, time.Minute, ratelimit.ScopeTool})
	keys := rlKeys(t, c)
	want := []string{l.key("identity", "u"), l.key("identity", "slow"), l.key("tool", "slow")}
	if len(keys) != len(want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	for _, k := range want {
		if do(t, c, "EXISTS", k).Val() != int64(1) {
			t.Errorf("key %q missing; keys %q", k, keys)
		}
	}

	// No limit at all: nothing reaches Redis.
	none := newLimiter(t, c, ratelimit.Config{})
	before := h.count()
	expect(t, none, "u", "p", "t", allowed)
	if n := h.count() - before; n != 0 {
		t.Errorf("%d round trips with no limits, want 0", n)
	}
}

// Names are opaque: ':', braces, glob characters, newlines, NUL, unicode,
// 1 KiB names and script-like text each get their own bucket per scope, no
// two keys collide (across names or scopes), no name changes another key,
// keys stay under the prefix and at most MaxNameLen bytes past it (longer
// names are hashed). Clients with other prefixes share nothing.
func TestLimiterNames(t *testing.T) {
	srv := testenv.Redis(t)
	c := open(t, srv.URL())
	cfg := ratelimit.Config{
		Identity: ratelimit.PerSecond(0.001, 1),
		Persona:  ratelimit.PerSecond(0.001, 1),
		Tool:     ratelimit.PerSecond(0.001, 1),
	}
	l := newLimiter(t, c, cfg, WithLimiterClock(newFakeClock().Now))
	kib := strings.Repeat("x", 1024)
	names := []string{
		"a", "a:", ":a", "a:b", "a::b", "tool:a", "identity:a", "#a", "a#",
		"{a}", "{", "}", "{tool}:a", "*", "?", "[a-z]", "a\nb", "a\x00b", " ", "\xff\xfe",
		"ключ", "名前", "🙂", "ｉ",
		"'); redis.call('FLUSHALL') --", "]] redis.call('FLUSHALL') --[[",
		kib, kib[:1023] + "y", "y" + kib[:1023], strings.Repeat("é", 512),
		strings.Repeat("x", MaxNameLen), strings.Repeat("x", MaxNameLen+1), strings.Repeat("x", MaxNameLen-1),
		strings.Repeat("x", 1<<16),
	}
	// Each name in each scope: first call allowed, so no bucket was shared.
	for _, n := range names {
		expect(t, l, n, "", "", allowed)
		expect(t, l, "", n, "", allowed)
		expect(t, l, "", "", n, allowed)
	}
	for _, n := range names {
		expect(t, l, n, "", "", decision{false, 1000 * time.Second, ratelimit.ScopeIdentity})
		expect(t, l, "", n, "", decision{false, 1000 * time.Second, ratelimit.ScopePersona})
		expect(t, l, "", "", n, decision{false, 1000 * time.Second, ratelimit.ScopeTool})
	}
	keys := rlKeys(t, c)
	if len(keys) != 3*len(names) {
		t.Errorf("%d keys for %d buckets", len(keys), 3*len(names))
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if len(k) > len(c.prefix+"rl:identity:")+MaxNameLen {
			t.Errorf("key of %d bytes: %.80q", len(k), k)
		}
		seen[k] = true
	}
	for _, n := range names {
		for _, s := range []string{"identity", "persona", "tool"} {
			if !seen[l.key(s, n)] {
				t.Errorf("no key %.80q", l.key(s, n))
			}
		}
	}
	// Another prefix, and the default one: buckets of their own.
	other := newLimiter(t, open(t, srv.URL(), WithPrefix("other:")), cfg)
	expect(t, other, "a", "", "", allowed)
	if !strings.HasPrefix(other.key("identity", "a"), "other:rl:") {
		t.Errorf("key %q not under the client's prefix", other.key("identity", "a"))
	}
}

// Each key expires after its bucket's refill time from empty (Burst/Rate,
// rounded up, at least 1s, at most MaxLimiterTTL); a refused call does not
// extend it; an idle key vanishes and its bucket comes back full.
func TestLimiterTTL(t *testing.T) {
	for _, c := range []struct {
		lim  ratelimit.Limit
		want time.Duration
	}{
		{ratelimit.PerSecond(10, 5), time.Second}, // 0.5s: at least 1s
		{ratelimit.PerSecond(1, 1), time.Second},
		{ratelimit.PerSecond(0.3, 1), 4 * time.Second}, // 3.33s rounded up
		{ratelimit.PerMinute(1, 10), 10 * time.Minute},
		{ratelimit.PerSecond(1e300, math.MaxInt32), time.Second},
		{ratelimit.PerSecond(1e-9, 1), MaxLimiterTTL},
		{ratelimit.PerSecond(5e-324, math.MaxInt32), MaxLimiterTTL}, // Burst/Rate is +Inf
	} {
		if got := bucketTTL(c.lim); got != c.want {
			t.Errorf("bucketTTL(%+v) = %v, want %v", c.lim, got, c.want)
		}
	}

	cl := open(t, testenv.Redis(t).URL())
	l := newLimiter(t, cl, ratelimit.Config{
		Identity: ratelimit.PerSecond(2, 2),
		Persona:  ratelimit.PerSecond(1e-300, 1),
		Tool:     ratelimit.PerMinute(1, 5),
	})
	ttl := func(k string) time.Duration {
		d, err := do(t, cl, "PTTL", k).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return time.Duration(d) * time.Millisecond
	}
	expect(t, l, "u", "p", "t", allowed)
	for _, c := range []struct {
		key      string
		min, max time.Duration
	}{
		{l.key("identity", "u"), 500 * time.Millisecond, time.Second},
		{l.key("persona", "p"), MaxLimiterTTL - time.Minute, MaxLimiterTTL},
		{l.key("tool", "t"), 5*time.Minute - time.Minute, 5 * time.Minute},
	} {
		if d := ttl(c.key); d < c.min || d > c.max {
			t.Errorf("TTL of %s = %v, want in [%v, %v]", c.key, d, c.min, c.max)
		}
	}
	// The persona's bucket needs longer than any Duration to refill.
	expect(t, l, "v", "p", "t2", decision{false, math.MaxInt64, ratelimit.ScopePersona})

	// A refused call leaves the TTL running.
	pk := l.key("persona", "p")
	do(t, cl, "EXPIRE", pk, 100)
	for range 5 {
		if d := allow(l, "w", "p", ""); d.ok {
			t.Fatal("the empty persona passed a call")
		}
	}
	if d := ttl(pk); d > 100*time.Second {
		t.Fatalf("TTL %v after refused calls, want at most 100s", d)
	}

	// Idle: gone within a second (plus Redis's expiry cycle), then full.
	ik := l.key("identity", "x")
	for range 2 {
		expect(t, l, "x", "", "", allowed)
	}
	if d := allow(l, "x", "", ""); d.ok || d.which != ratelimit.ScopeIdentity || d.retryAfter <= 0 || d.retryAfter > 500*time.Millisecond {
		t.Fatalf("third call at 2/s with a burst of 2: %+v, want refused by identity within 500ms", d)
	}
	testwait.WaitFor(t, "the idle bucket's key to expire", func() bool {
		return do(t, cl, "EXISTS", ik).Val() == int64(0)
	})
	for range 2 {
		expect(t, l, "x", "", "", allowed)
	}
	do(t, cl, "DEL", ik)
	testwait.WaitFor(t, "Redis to reclaim the expired key", func() bool {
		n, _ := do(t, cl, "DBSIZE").Int64()
		return n == 2 // persona p, tool t
	})
}

// Redis stopped: Allow falls back to per-replica in-process limits from the
// same Config (a fresh identity passes, each replica allows its own burst),
// Degraded is true, and each limiter logs once however many calls fall
// back. Redis started again: Allow shares the budget through Redis again,
// Degraded is false, and each logs once more. A closed client falls back.
func TestLimiterRedisDown(t *testing.T) {
	srv := testenv.Redis(t)
	var logA, logB testenv.SyncBuffer
	opts := []Option{WithLimits(Limits{CommandTimeout: upTimeout, HealthInterval: 50 * time.Millisecond})}
	ca := open(t, srv.URL(), opts...)
	cb := open(t, srv.URL(), append(opts, WithLogger(slog.New(slog.NewTextHandler(&logB, nil))))...)
	cfg := ratelimit.Config{Identity: ratelimit.PerSecond(0.001, 3)}
	a := newLimiter(t, ca, cfg, WithLimiterLogger(slog.New(slog.NewTextHandler(&logA, nil))))
	b := newLimiter(t, cb, cfg)
	expect(t, a, "u", "", "", allowed)
	if a.Degraded() || b.Degraded() {
		t.Fatal("Degraded with Redis up")
	}

	srv.Stop()
	testwait.Returns(t, "Allow with Redis down", func() {
		for _, l := range []*Limiter{a, b} {
			for range 3 {
				expect(t, l, "u", "", "", allowed)
			}
			d := allow(l, "u", "", "")
			if d.ok || d.which != ratelimit.ScopeIdentity || d.retryAfter < 999*time.Second {
				t.Errorf("fourth call with Redis down: %+v, want refused by the in-process identity bucket", d)
			}
			for range 20 {
				expect(t, l, fmt.Sprint("fresh", rand.Int()), "", "", allowed)
			}
		}
	})
	if !a.Degraded() || !b.Degraded() {
		t.Fatal("not Degraded with Redis down")
	}
	const down, up = "rate limits now apply per replica", "rate limits shared through Redis again"
	for name, log := range map[string]*testenv.SyncBuffer{"a": &logA, "b": &logB} {
		if n := strings.Count(log.String(), down); n != 1 {
			t.Errorf("replica %s logged falling back %d times, want 1:\n%s", name, n, log.String())
		}
	}

	srv.Start()
	testwait.WaitFor(t, "both clients healthy", func() bool { return ca.Healthy() && cb.Healthy() })
	// Redis kept nothing: a full shared bucket of 3.
	expect(t, a, "u", "", "", allowed)
	expect(t, b, "u", "", "", allowed)
	if a.Degraded() || b.Degraded() {
		t.Fatal("Degraded after Allow succeeded on Redis")
	}
	expect(t, a, "u", "", "", allowed)
	for _, l := range []*Limiter{a, b} {
		if d := allow(l, "u", "", ""); d.ok {
			t.Error("Redis back: a fourth call in total passed, want the budget shared again")
		}
	}
	for name, log := range map[string]*testenv.SyncBuffer{"a": &logA, "b": &logB} {
		if n := strings.Count(log.String(), down); n != 1 {
			t.Errorf("replica %s logged falling back %d times, want 1", name, n)
		}
		if n := strings.Count(log.String(), up); n != 1 {
			t.Errorf("replica %s logged serving from Redis again %d times, want 1:\n%s", name, n, log.String())
		}
	}

	ca.Close()
	expect(t, a, "closed", "", "", allowed)
	if !a.Degraded() {
		t.Error("not Degraded on a closed client")
	}
}

// An error reply from a working Redis (a key of another type where a bucket
// should be) does not refuse the call: the fallback decides it, Degraded is
// true while it lasts, and the client stays Healthy.
func TestLimiterRedisErrorFallsBack(t *testing.T) {
	c := open(t, testenv.Redis(t).URL())
	var log testenv.SyncBuffer
	l := newLimiter(t, c, ratelimit.Config{Identity: ratelimit.PerSecond(0.001, 1)},
		WithLimiterClock(newFakeClock().Now), WithLimiterLogger(slog.New(slog.NewTextHandler(&log, nil))))
	do(t, c, "SET", l.key("identity", "bad"), "not a hash")
	expect(t, l, "bad", "", "", allowed)
	if !l.Degraded() || !c.Healthy() {
		t.Fatalf("after a script error: Degraded %v, Healthy %v; want true, true", l.Degraded(), c.Healthy())
	}
	expect(t, l, "good", "", "", allowed)
	if l.Degraded() {
		t.Fatal("Degraded after a call Redis decided")
	}
	expect(t, l, "good", "", "", decision{false, 1000 * time.Second, ratelimit.ScopeIdentity})
	if s := log.String(); !strings.Contains(s, "WRONGTYPE") || strings.Count(s, "level=") != 2 {
		t.Errorf("log:\n%s\nwant one line falling back (WRONGTYPE) and one back on Redis", s)
	}
}

// Allow is one round trip (the script) whether it passes or not, once the
// script is cached; after SCRIPT FLUSH the first costs two (EVALSHA, EVAL).
// While the client is unhealthy Allow costs none.
func TestLimiterRoundTrips(t *testing.T) {
	srv := testenv.Redis(t)
	c := open(t, srv.URL(), WithLimits(Limits{HealthInterval: time.Hour}))
	h := countRoundTrips(c)
	l := newLimiter(t, c, ratelimit.Config{
		Identity: ratelimit.PerSecond(1, 3),
		Persona:  ratelimit.PerSecond(1, 5),
		Tool:     ratelimit.PerSecond(1, 2),
	})
	allow(l, "warm", "up", "") // the connection and the script cache
	before := h.count()
	const n = 100
	var refused int
	for i := range n {
		if d := allow(l, fmt.Sprint("u", i%4), "p", fmt.Sprint("t", i%7)); !d.ok {
			refused++
		}
	}
	if got := h.count() - before; got != n {
		t.Errorf("%d round trips for %d calls, want %d", got, n, n)
	}
	if refused == 0 || refused == n {
		t.Errorf("%d of %d refused: want both kinds", refused, n)
	}
	t.Logf("%.2f round trips per Allow (%d of %d refused)", float64(h.count()-before)/n, refused, n)

	do(t, c, "SCRIPT", "FLUSH")
	for _, want := range []int64{2, 1} {
		before = h.count()
		allow(l, "u", "", "")
		if got := h.count() - before; got != want {
			t.Errorf("after SCRIPT FLUSH: %d round trips, want %d", got, want)
		}
	}

	srv.Stop()
	allow(l, "u", "", "") // fails, and the client turns unhealthy
	if c.Healthy() {
		t.Fatal("client healthy after a failure with Redis down")
	}
	before = h.count()
	for range n {
		allow(l, "u", "p", "t")
	}
	if got := h.count() - before; got != 0 {
		t.Errorf("%d round trips for %d calls while unhealthy, want 0", got, n)
	}
}

// Replies the script never sends are errors (so the call falls back and is
// never refused by them); the ones it sends are read exactly.
func TestLimiterReply(t *testing.T) {
	for _, c := range []struct {
		res   []any
		n     int
		ok    bool
		wait  time.Duration
		which int
	}{
		{[]any{int64(1)}, 1, true, 0, 0},
		{[]any{int64(0), "1000000000", int64(2)}, 3, false, time.Second, 2},
		{[]any{int64(0), "1.5", int64(1)}, 1, false, 1, 1},
		{[]any{int64(0), "9.2233720368547758e+18", int64(3)}, 3, false, math.MaxInt64, 3},
		{[]any{int64(0), "1e400", int64(1)}, 1, false, math.MaxInt64, 1},
		{[]any{int64(0), "inf", int64(1)}, 1, false, math.MaxInt64, 1},
	} {
		ok, wait, which, err := parseLimiterReply(c.res, c.n)
		if err != nil || ok != c.ok || wait != c.wait || which != c.which {
			t.Errorf("parseLimiterReply(%v, %d) = %v, %v, %d, %v; want %v, %v, %d", c.res, c.n, ok, wait, which, err, c.ok, c.wait, c.which)
		}
	}
	for _, res := range [][]any{
		nil, {}, {int64(2)}, {"1"}, {int64(1), int64(0)}, {int64(0)}, {int64(0), "5"},
		{int64(0), "5", int64(0)}, {int64(0), "5", int64(4)}, {int64(0), "5", int64(-1)},
		{int64(0), "-1", int64(1)}, {int64(0), "0", int64(1)}, {int64(0), "0.5", int64(1)},
		{int64(0), "NaN", int64(1)}, {int64(0), "-inf", int64(1)}, {int64(0), "abc", int64(1)},
		{int64(0), "", int64(1)}, {int64(0), int64(5), int64(1)}, {int64(0), "5", "1"},
		{int64(0), "5", int64(1), int64(0)}, {nil, "5", int64(1)}, {int64(-1), "5", int64(1)},
	} {
		if ok, wait, which, err := parseLimiterReply(res, 3); err == nil {
			t.Errorf("parseLimiterReply(%#v) = %v, %v, %d; want an error", res, ok, wait, which)
		}
	}
}

// FuzzLimiterReply: no reply makes parseLimiterReply panic, and what it
// accepts is a pass, or a refusal with a positive wait and a bucket index
// in range.
func FuzzLimiterReply(f *testing.F) {
	f.Add(uint8(0), int64(1), "", int64(0), uint8(1))
	f.Add(uint8(3), int64(0), "1000", int64(1), uint8(3))
	f.Add(uint8(3), int64(0), "1e999", int64(3), uint8(3))
	f.Add(uint8(3), int64(0), "0x1p-3", int64(2), uint8(2))
	f.Add(uint8(2), int64(0), "5", int64(1), uint8(1))
	f.Fuzz(func(t *testing.T, length uint8, code int64, wait string, idx int64, n uint8) {
		res := []any{code, wait, idx, wait}[:length%5]
		nb := int(n%3) + 1
		ok, d, which, err := parseLimiterReply(res, nb)
		switch {
		case err != nil:
			if ok || d != 0 || which != 0 {
				t.Fatalf("error %v with a decision %v %v %d", err, ok, d, which)
			}
		case ok:
			if len(res) != 1 || code != 1 || d != 0 || which != 0 {
				t.Fatalf("%v read as a pass with %v %d", res, d, which)
			}
		default:
			if len(res) != 3 || code != 0 || d < 1 || which < 1 || which > nb || int64(which) != idx {
				t.Fatalf("%v (n %d) read as a refusal for %v by %d", res, nb, d, which)
			}
		}
	})
}

// BenchmarkLimiterAllow runs Allow with all three scopes limited over 1000
// identities (mostly passing), reporting round trips per call; the parallel
// variant runs it from GOMAXPROCS goroutines.
func BenchmarkLimiterAllow(b *testing.B) {
	c := open(b, testenv.Redis(b).URL())
	h := countRoundTrips(c)
	l := newLimiter(b, c, ratelimit.Config{
		Identity: ratelimit.PerSecond(1000, 1000),
		Persona:  ratelimit.PerSecond(1e6, 1e6),
		Tool:     ratelimit.PerSecond(1e6, 1e6),
	})
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprint("identity-", i)
	}
	allow(l, ids[0], "persona", "tool")
	b.Run("serial", func(b *testing.B) {
		before := h.count()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			l.Allow(ids[i%len(ids)], "persona", "tool")
			i++
		}
		b.ReportMetric(float64(h.count()-before)/float64(b.N), "roundtrips/op")
	})
	b.Run("parallel", func(b *testing.B) {
		before := h.count()
		b.ReportAllocs()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Allow(ids[next.Add(1)%int64(len(ids))], "persona", "tool")
			}
		})
		b.ReportMetric(float64(h.count()-before)/float64(b.N), "roundtrips/op")
	})
	if l.Degraded() {
		b.Fatal("the limiter fell back during the benchmark")
	}
}
