package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolwire/toolwire/gateway/ratelimit"
)

// Limiter is a rate limiter whose token buckets live in Redis, so that
// every replica sharing the Redis server and prefix draws on the same
// budget. It has the semantics of ratelimit.Limiter (the same Config,
// scopes, overrides and all-or-nothing Allow) and implements the gateway's
// Limiter interface. It is safe for concurrent use.
//
// Each bucket is a small hash (tokens, time of the last take) whose key
// expires after the time the bucket takes to refill from empty: Burst/Rate,
// rounded up to whole seconds, at least 1s and at most MaxLimiterTTL. An
// idle bucket therefore vanishes once it would be full anyway, which
// replaces Config.MaxBuckets and Config.IdleTTL (those bound the fallback
// only); the whole is bounded by Redis's maxmemory. A bucket that Redis
// evicts early (a maxmemory-policy other than noeviction) comes back full.
// Names longer than MaxNameLen bytes are keyed by their SHA-256, so that no
// caller-chosen name makes a key longer than that. The keys have no hash
// tag: the client talks to one Redis server, not a cluster.
//
// Allow is one round trip: a Lua script that refills each applicable
// bucket by Rate × elapsed time up to Burst and takes one token from every
// bucket only if none is empty; otherwise it changes nothing. Time is
// Redis's clock (TIME) unless WithLimiterClock gives one, so replicas with
// skewed clocks agree.
//
// While Redis is unavailable (an error, or the client is not Healthy),
// Allow falls back to an in-process ratelimit.Limiter built from the same
// Config: the limits then apply per replica, and Degraded is true. A Redis
// error alone never refuses a call.
type Limiter struct {
	c      *Client
	prefix string           // the client's prefix and "rl:"
	clock  func() time.Time // nil: Redis's TIME
	log    *slog.Logger
	scopes [3]scopeLimits // identity, persona, tool

	fallback *ratelimit.Limiter

	mu       sync.Mutex // serialises changes of degraded, so their log lines come in order
	degraded atomic.Bool
}

// MaxLimiterTTL bounds the expiry of a bucket's key: a bucket whose refill
// from empty takes longer (Burst/Rate above a year) is forgotten after a
// year idle and comes back full.
const MaxLimiterTTL = 365 * 24 * time.Hour

// LimiterOption configures Client.Limiter. Options apply in order (a later
// one wins) and nil options are ignored.
type LimiterOption interface{ applyLimiter(*limiterConfig) }

type limiterConfig struct {
	clock func() time.Time
	log   *slog.Logger
}

type limiterOption func(*limiterConfig)

func (f limiterOption) applyLimiter(c *limiterConfig) { f(c) }

// WithLimiterClock makes the limiter take the time from now instead of
// Redis's clock (also for its fallback), for tests that need exact times.
// Replicas must then have synchronised clocks: a bucket never goes back in
// time, so a replica whose clock lags refills nothing until it catches up.
// Redis keeps the time to the microsecond; nil means Redis's clock.
func WithLimiterClock(now func() time.Time) LimiterOption {
	return limiterOption(func(c *limiterConfig) { c.clock = now })
}

// WithLimiterLogger sets where the limiter reports falling back to
// in-process limits and serving from Redis again (default: the client's
// logger, see WithLogger). nil means the default.
func WithLimiterLogger(l *slog.Logger) LimiterOption {
	return limiterOption(func(c *limiterConfig) { c.log = l })
}

// scopeLimits is one scope's limits as the script takes them.
type scopeLimits struct {
	name string // ratelimit.ScopeIdentity, ...
	def  bucketArgs
	over map[string]bucketArgs
}

// bucketArgs is a Limit formatted for the script once, at construction:
// unlimited, or the rate (tokens per second, exact), burst and key TTL in
// seconds.
type bucketArgs struct {
	unlimited        bool
	rate, burst, ttl string
}

func newBucketArgs(l ratelimit.Limit) bucketArgs {
	if l.Unlimited() {
		return bucketArgs{unlimited: true}
	}
	return bucketArgs{
		rate:  strconv.FormatFloat(l.Rate, 'g', -1, 64),
		burst: strconv.Itoa(l.Burst),
		ttl:   strconv.FormatInt(int64(bucketTTL(l)/time.Second), 10),
	}
}

// bucketTTL is how long a bucket of l takes to refill from empty, rounded
// up to whole seconds, at least 1s and at most MaxLimiterTTL: idle that
// long, it is full, so forgetting it loses nothing.
func bucketTTL(l ratelimit.Limit) time.Duration {
	s := math.Ceil(float64(l.Burst) / l.Rate)
	if !(s <= MaxLimiterTTL.Seconds()) { // also NaN
		return MaxLimiterTTL
	}
	return max(time.Duration(s)*time.Second, time.Second)
}

// Limiter validates cfg as ratelimit.New does and returns a limiter keeping
// its buckets in Redis under the client's prefix. Limiters of clients with
// the same prefix share their buckets, so replicas should have the same
// Config. cfg.MaxBuckets, cfg.IdleTTL and cfg.Now apply to the in-process
// fallback only (WithLimiterClock replaces cfg.Now).
func (c *Client) Limiter(cfg ratelimit.Config, opts ...LimiterOption) (*Limiter, error) {
	lc := limiterConfig{log: c.log}
	for _, o := range opts {
		if o != nil {
			o.applyLimiter(&lc)
		}
	}
	if lc.log == nil {
		lc.log = c.log
	}
	if lc.clock != nil {
		cfg.Now = lc.clock
	}
	fb, err := ratelimit.New(cfg)
	if err != nil {
		return nil, err
	}
	l := &Limiter{c: c, prefix: c.prefix + "rl:", clock: lc.clock, log: lc.log, fallback: fb}
	for i, s := range []struct {
		name string
		def  ratelimit.Limit
		over map[string]ratelimit.Limit
	}{
		{ratelimit.ScopeIdentity, cfg.Identity, cfg.Identities},
		{ratelimit.ScopePersona, cfg.Persona, cfg.Personas},
		{ratelimit.ScopeTool, cfg.Tool, cfg.Tools},
	} {
		sl := scopeLimits{name: s.name, def: newBucketArgs(s.def), over: make(map[string]bucketArgs, len(s.over))}
		for n, lim := range s.over {
			sl.over[n] = newBucketArgs(lim)
		}
		l.scopes[i] = sl
	}
	return l, nil
}

// key returns the key of a bucket: the prefix, "rl:", the scope, then ":"
// and the name, or "#" and the hex SHA-256 of a name longer than
// MaxNameLen. Scopes hold neither ":" nor "#", so no two buckets share a
// key; names travel as KEYS, never as script text.
func (l *Limiter) key(scope, name string) string {
	if len(name) > MaxNameLen {
		sum := sha256.Sum256([]byte(name))
		return l.prefix + scope + "#" + hex.EncodeToString(sum[:])
	}
	return l.prefix + scope + ":" + name
}

// limiterScript takes one token from every bucket in KEYS, or none.
//
// ARGV[1] is the time in microseconds since the Unix epoch, or "" for
// Redis's TIME; then per key i, ARGV[3i-1], ARGV[3i], ARGV[3i+1] are its
// rate (tokens per second), burst and TTL in seconds. A bucket's hash holds
// t (tokens, a float written exactly with %.17g) and l (the time of its
// last take, in microseconds: below 2^53, so exact in Lua's doubles); a
// missing bucket is full.
//
// The arithmetic is golang.org/x/time/rate's, in the same order, so that
// both agree to the last bit on the same times: elapsed seconds as whole
// seconds plus a fraction, the wait as (1 - tokens) / rate × 1e9
// nanoseconds, truncated (2^63 and above mean rate's InfDuration). A bucket whose wait truncates to 0 is not short
// (its tokens may then dip below 0 by less than a nanosecond's refill).
//
// Returns {1} when taken, else {0, wait in nanoseconds (%.17g), i} where
// bucket i has the longest wait (the first of equal ones).
var limiterScript = redis.NewScript(`
if redis.replicate_commands then redis.replicate_commands() end
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[1])
end
local tokens, lasts = {}, {}
local wait, which = 0, 0
for i = 1, #KEYS do
  local rate = tonumber(ARGV[3 * i - 1])
  local burst = tonumber(ARGV[3 * i])
  local st = redis.call('HMGET', KEYS[i], 't', 'l')
  local tok, last = burst, now
  if st[1] and st[2] then
    tok, last = tonumber(st[1]), tonumber(st[2])
    if now > last then
      local us = now - last
      local frac = math.fmod(us, 1000000)
      tok = tok + ((us - frac) / 1000000 + frac / 1000000) * rate
      if tok > burst then tok = burst end
      last = now
    end
  end
  tokens[i], lasts[i] = tok, last
  if tok - 1 < 0 then
    local w = ((1 - tok) / rate) * 1000000000
    if w > 9223372036854775807 then w = 9223372036854775808 end -- also inf
    w = w - math.fmod(w, 1)
    if w > wait then wait, which = w, i end
  end
end
if which > 0 then
  return {0, string.format('%.17g', wait), which}
end
for i = 1, #KEYS do
  redis.call('HSET', KEYS[i], 't', string.format('%.17g', tokens[i] - 1), 'l', string.format('%.17g', lasts[i]))
  redis.call('EXPIRE', KEYS[i], ARGV[3 * i + 1])
end
return {1}
`)

// Allow implements the gateway's Limiter: one token from each bucket that
// applies to a call of tool by identity under persona (an empty persona or
// tool skips that scope), all or none, as ratelimit.Limiter.Allow does. It
// costs one round trip to Redis, bounded by the client's timeout (two
// when Redis lost its script cache: EVALSHA, then EVAL), and none when
// every scope is unlimited or while the client is not Healthy (then the
// fallback decides).
func (l *Limiter) Allow(identity, persona, tool string) (ok bool, retryAfter time.Duration, which string) {
	var (
		keys   [3]string
		scopes [3]string
		args   [1 + 3*3]any
		n      int
	)
	for i, name := range [...]string{identity, persona, tool} {
		if name == "" {
			continue
		}
		s := &l.scopes[i]
		b, found := s.over[name]
		if !found {
			b = s.def
		}
		if b.unlimited {
			continue
		}
		keys[n], scopes[n] = l.key(s.name, name), s.name
		args[1+3*n], args[2+3*n], args[3+3*n] = b.rate, b.burst, b.ttl
		n++
	}
	if n == 0 {
		return true, 0, ""
	}
	if !l.c.Healthy() {
		return l.fallBack(l.c.Err(), identity, persona, tool)
	}
	args[0] = ""
	if l.clock != nil {
		args[0] = strconv.FormatInt(l.clock().UnixMicro(), 10)
	}
	ctx, cancel := l.c.opContext()
	res, err := limiterScript.Run(ctx, l.c.rdb, keys[:n], args[:1+3*n]...).Slice()
	cancel()
	err = l.c.observe(context.Background(), err)
	var idx int
	if err == nil {
		ok, retryAfter, idx, err = parseLimiterReply(res, n)
	}
	if err != nil {
		return l.fallBack(err, identity, persona, tool)
	}
	l.setDegraded(nil)
	if ok {
		return true, 0, ""
	}
	return false, retryAfter, scopes[idx-1]
}

// parseLimiterReply reads limiterScript's reply for n buckets: ok, or the
// longest wait and the (1-based) index of its bucket. Anything else is an
// error, so that a reply Redis did not get from the script never refuses
// a call.
func parseLimiterReply(res []any, n int) (ok bool, retryAfter time.Duration, which int, err error) {
	bad := func() (bool, time.Duration, int, error) {
		return false, 0, 0, fmt.Errorf("redisstore: rate limit script: unexpected reply %.100v", res)
	}
	code, isInt := firstInt(res)
	switch {
	case !isInt:
		return bad()
	case code == 1 && len(res) == 1:
		return true, 0, 0, nil
	case code != 0 || len(res) != 3:
		return bad()
	}
	ws, _ := res[1].(string)
	w, perr := strconv.ParseFloat(ws, 64)
	idx, _ := res[2].(int64)
	if perr != nil && !errors.Is(perr, strconv.ErrRange) || !(w >= 1) || idx < 1 || idx > int64(n) {
		return bad()
	}
	d := time.Duration(math.MaxInt64) // rate's InfDuration, for waits past it
	if w < float64(math.MaxInt64) {
		d = time.Duration(w)
	}
	return false, d, int(idx), nil
}

// fallBack decides a call in process because Redis failed with err (nil:
// the client turned healthy again between Healthy and Err).
func (l *Limiter) fallBack(err error, identity, persona, tool string) (bool, time.Duration, string) {
	if err == nil {
		err = errors.New("redis unavailable")
	}
	l.setDegraded(err)
	return l.fallback.Allow(identity, persona, tool)
}

// setDegraded records whether the latest decision fell back (err non-nil)
// and logs a change.
func (l *Limiter) setDegraded(err error) {
	if l.degraded.Load() == (err != nil) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.degraded.Load() == (err != nil) {
		return
	}
	l.degraded.Store(err != nil)
	if err != nil {
		l.log.Warn("redisstore: rate limits now apply per replica (Redis unavailable)", "err", err.Error())
	} else {
		l.log.Info("redisstore: rate limits shared through Redis again")
	}
}

// Degraded reports whether Allow decides in process, so that limits apply
// per replica: the client is not Healthy, or the latest Allow failed on
// Redis.
func (l *Limiter) Degraded() bool { return l.degraded.Load() || !l.c.Healthy() }
