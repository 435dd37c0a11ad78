package ratelimit

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustNew(t *testing.T, cfg Config) *Limiter {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type call struct {
	at                time.Duration
	identity, persona string
	tool              string
	ok                bool
	retryAfter        time.Duration
	which             string
}

func run(t *testing.T, l *Limiter, calls []call) {
	t.Helper()
	for i, c := range calls {
		ok, ra, which := l.AllowAt(t0.Add(c.at), c.identity, c.persona, c.tool)
		if ok != c.ok || ra != c.retryAfter || which != c.which {
			t.Errorf("call %d (%v %s/%s/%s) = %v, %v, %q; want %v, %v, %q", i, c.at, c.identity, c.persona, c.tool, ok, ra, which, c.ok, c.retryAfter, c.which)
		}
	}
}

func TestPerIdentity(t *testing.T) {
	l := mustNew(t, Config{Identity: PerSecond(1, 2)})
	run(t, l, []call{
		{0, "a", "p", "t", true, 0, ""},
		{0, "a", "p", "t", true, 0, ""},
		{0, "a", "p", "t", false, time.Second, ScopeIdentity},
		{0, "b", "p", "t", true, 0, ""}, // another identity has its own bucket
		{500 * time.Millisecond, "a", "p", "t", false, 500 * time.Millisecond, ScopeIdentity},
		{time.Second, "a", "p", "t", true, 0, ""},
		{time.Second, "a", "p", "t", false, time.Second, ScopeIdentity},
	})
}

func TestPerPersonaAndOverrides(t *testing.T) {
	l := mustNew(t, Config{
		Persona:    PerMinute(60, 1),
		Personas:   map[string]Limit{"admins": {}}, // exempt
		Identities: map[string]Limit{"vip": PerSecond(100, 100)},
	})
	run(t, l, []call{
		{0, "a", "dev", "t", true, 0, ""},
		{0, "b", "dev", "t", false, time.Second, ScopePersona}, // shared by the persona's callers
		{0, "c", "admins", "t", true, 0, ""},
		{0, "c", "admins", "t", true, 0, ""},
		{0, "vip", "", "t", true, 0, ""}, // empty persona skips the scope
	})
}

func TestPerTool(t *testing.T) {
	l := mustNew(t, Config{Tool: PerSecond(10, 1), Tools: map[string]Limit{"slow": PerMinute(1, 1)}})
	run(t, l, []call{
		{0, "a", "p", "fast", true, 0, ""},
		{0, "b", "q", "fast", false, 100 * time.Millisecond, ScopeTool},
		{0, "a", "p", "slow", true, 0, ""},
		{0, "a", "p", "slow", false, time.Minute, ScopeTool},
		{0, "a", "p", "", true, 0, ""},
	})
}

// A call refused by one bucket takes no token from the others.
func TestDenialConsumesNothing(t *testing.T) {
	l := mustNew(t, Config{Identity: PerSecond(1, 5), Persona: PerSecond(1, 5), Tool: PerSecond(1, 1)})
	run(t, l, []call{{0, "a", "p", "t", true, 0, ""}})
	// The tool bucket is empty now: 100 refused calls must leave the
	// identity and persona buckets at 4 tokens each.
	for i := 0; i < 100; i++ {
		if ok, ra, which := l.AllowAt(t0, "a", "p", "t"); ok || which != ScopeTool || ra != time.Second {
			t.Fatalf("refused call %d = %v, %v, %q", i, ok, ra, which)
		}
	}
	run(t, l, []call{
		{0, "a", "p", "u1", true, 0, ""},
		{0, "a", "p", "u2", true, 0, ""},
		{0, "a", "p", "u3", true, 0, ""},
		{0, "a", "p", "u4", true, 0, ""},
		{0, "a", "p", "u5", false, time.Second, ScopeIdentity},
	})
	// The tool bucket itself was not pushed into debt by the refusals.
	run(t, l, []call{{time.Second, "b", "q", "t", true, 0, ""}})
}

// retryAfter is the longest wait, and which names that bucket.
func TestRetryAfterIsTheLongestWait(t *testing.T) {
	l := mustNew(t, Config{Identity: PerSecond(1, 1), Tool: PerMinute(1, 1)})
	run(t, l, []call{
		{0, "a", "", "t", true, 0, ""},
		{0, "a", "", "t", false, time.Minute, ScopeTool},
		{59 * time.Second, "a", "", "t", false, time.Second, ScopeTool},
		{time.Minute, "a", "", "t", true, 0, ""},
	})
}

func TestUnlimitedKeepsNoBuckets(t *testing.T) {
	l := mustNew(t, Config{})
	for i := 0; i < 1000; i++ {
		if ok, _, _ := l.AllowAt(t0, fmt.Sprint(i), "p", "t"); !ok {
			t.Fatal("an unlimited call was refused")
		}
	}
	if l.Len() != 0 {
		t.Errorf("Len = %d, want 0", l.Len())
	}
}

func TestEvictionBound(t *testing.T) {
	const max = 1000
	l := mustNew(t, Config{Identity: PerSecond(1, 1), Tool: PerSecond(1000, 1000), MaxBuckets: max, IdleTTL: time.Hour})
	for i := 0; i < 100000; i++ {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		if ok, _, which := l.AllowAt(now, fmt.Sprintf("id-%d", i), "", "t"); !ok {
			t.Fatalf("call %d refused by %s", i, which)
		}
		if n := l.Len(); n > max {
			t.Fatalf("after %d identities, %d buckets > %d", i+1, n, max)
		}
	}
	if n := l.Len(); n != max {
		t.Errorf("Len = %d, want %d", n, max)
	}
	// The tool bucket, used by every call, is always the most recently
	// used, so the least recently used identities go first.
	if _, ok := l.byKey[bucketKey{ScopeTool, "t"}]; !ok {
		t.Error("the most recently used bucket was evicted")
	}
}

func TestIdleTTL(t *testing.T) {
	l := mustNew(t, Config{Identity: PerSecond(1, 1), IdleTTL: time.Minute})
	for i := 0; i < 100; i++ {
		l.AllowAt(t0.Add(time.Duration(i)*time.Second/10), fmt.Sprint(i), "", "")
	}
	if l.Len() != 100 {
		t.Fatalf("Len = %d", l.Len())
	}
	// Identity i was used at i/10 s. At 65s, the buckets unused for a
	// minute or more (used at 0.0s..5.0s) are gone.
	l.AllowAt(t0.Add(65*time.Second), "new", "", "")
	if n := l.Len(); n != 49+1 {
		t.Errorf("Len after 65s = %d, want 50 (ids used at 5.1s..9.9s, and new)", n)
	}
	l.AllowAt(t0.Add(2*time.Hour), "later", "", "")
	if n := l.Len(); n != 1 {
		t.Errorf("Len after 2h = %d, want 1", n)
	}
	// An evicted bucket comes back full: nothing was lost, since it had
	// refilled long before the TTL.
	run(t, l, []call{{2 * time.Hour, "0", "", "", true, 0, ""}})
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Identity: Limit{Rate: 1}}, "per identity: burst 0"},
		{Config{Persona: Limit{Burst: 1}}, "per persona: rate 0"},
		{Config{Tool: Limit{Rate: -1, Burst: 1}}, "per tool: rate -1"},
		{Config{Tools: map[string]Limit{"x": {Rate: 1}}}, `for tool "x": burst 0`},
		{Config{Personas: map[string]Limit{"p": {Burst: 2}}}, `for persona "p"`},
		{Config{Identities: map[string]Limit{"i": {Rate: 1, Burst: -1}}}, `for identity "i"`},
		{Config{MaxBuckets: -1}, "max buckets"},
		{Config{IdleTTL: -time.Second}, "idle TTL"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error saying %q", c.cfg, err, c.want)
		}
	}
}

func TestConcurrentAllow(t *testing.T) {
	// Ten tokens in all, a frozen clock, 8 goroutines hammering: exactly
	// ten calls succeed, whatever the interleaving.
	l := mustNew(t, Config{Persona: PerSecond(1, 10), Identity: PerSecond(1, 1000), MaxBuckets: 4, Now: func() time.Time { return t0 }})
	var allowed atomic.Int32
	testwait.Concurrently(t, 8, 200, func(_, i int) error {
		if ok, _, _ := l.Allow(fmt.Sprint("id", i%3), "p", ""); ok {
			allowed.Add(1)
		}
		return nil
	})
	if allowed := allowed.Load(); allowed != 10 {
		t.Errorf("%d calls allowed, want 10", allowed)
	}
}
