package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolwire/toolwire/taskstore"
)

// How the task store lays tasks out in Redis: keys, encodings and the Lua
// scripts that change a task and its indexes at once (taskstore.go uses
// them).

// Keys. All live under the client's prefix, in the "task:" namespace,
// except the lease.
func (s *TaskStore) taskKey(id string) string     { return s.c.prefix + "task:t:" + id }
func (s *TaskStore) allKey() string               { return s.c.prefix + "task:all" }
func (s *TaskStore) ownerKey(owner string) string { return s.c.prefix + "task:o:" + owner }
func (s *TaskStore) activeKey(r string) string    { return s.c.prefix + "task:a:" + r }
func (s *TaskStore) replicasKey() string          { return s.c.prefix + "task:replicas" }

// Times are stored as unix nanoseconds in 19 decimal digits, so that Lua
// compares them as strings (its numbers are doubles, inexact at this size).
const timeDigits = 19

func nanos19(n int64) string {
	n = max(n, 0)
	return fmt.Sprintf("%019d", n)
}

// expiryScore is the score of a task in the all-tasks index: its expiry in
// whole milliseconds (exact in a double), or +inf.
func expiryScore(exp int64) string {
	if exp == math.MaxInt64 {
		return "+inf"
	}
	return strconv.FormatInt(exp/int64(time.Millisecond), 10)
}

// allMember is a task's member in the all-tasks index: the length of its
// id, ":", the id, its creation time and its owner, so that Sweep can
// clean the owner's index of a task whose key Redis expired.
func allMember(r *taskstore.Record) string {
	return strconv.Itoa(len(r.ID)) + ":" + r.ID + nanos19(r.CreatedAt.UnixNano()) + r.Owner
}

// ownerMember is a task's member in its owner's index (all scored 0, so
// ordered by bytes): creation time, ":", id; newest first is the reverse.
func ownerMember(created int64, id string) string { return nanos19(created) + ":" + id }

// Lua helpers shared by the scripts. sweepMember deletes the task of an
// all-tasks index member if it expired at now19 (or its key is gone or now
// holds another task), with its index entries; it returns 1 if it deleted,
// 0 if the task is still alive.
const luaSweepMember = `
local function sweepMember(prefix, m, now19)
  local all = prefix .. 'task:all'
  local colon = string.find(m, ':', 1, true)
  local n = colon and tonumber(string.sub(m, 1, colon - 1))
  if not n then
    redis.call('ZREM', all, m)
    return 1
  end
  local id = string.sub(m, colon + 1, colon + n)
  local created = string.sub(m, colon + n + 1, colon + n + 19)
  local owner = string.sub(m, colon + n + 20)
  local key = prefix .. 'task:t:' .. id
  local h = redis.call('HMGET', key, 'x', 'c', 'o', 'r')
  if h[1] and h[2] == created and h[3] == owner then
    if h[1] > now19 then return 0 end
    redis.call('DEL', key)
    if h[4] then redis.call('SREM', prefix .. 'task:a:' .. h[4], id) end
  end
  redis.call('ZREM', all, m)
  redis.call('ZREM', prefix .. 'task:o:' .. owner, created .. ':' .. id)
  return 1
end
`

var (
	// createTask: KEYS task, all, owner index, active set, replicas set;
	// ARGV prefix, max tasks, now ms, now19, pexpire ms (0: none), all
	// member, expiry score, owner member, replica, id, active (1/0), then
	// the hash's field/value pairs. 1 stored, 0 the id exists, -1 full.
	createTask = redis.NewScript(luaSweepMember + `
local key, all, own, act, reps = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if redis.call('EXISTS', key) == 1 then return 0 end
local maxTasks = tonumber(ARGV[2])
if redis.call('ZCARD', all) >= maxTasks then
  local cands = redis.call('ZRANGEBYSCORE', all, '-inf', ARGV[3], 'LIMIT', 0, ` + strconv.Itoa(sweepBatch) + `)
  for _, m in ipairs(cands) do sweepMember(ARGV[1], m, ARGV[4]) end
  if redis.call('ZCARD', all) >= maxTasks then return -1 end
end
redis.call('HSET', key, unpack(ARGV, 12))
if ARGV[5] ~= '0' then redis.call('PEXPIRE', key, ARGV[5]) end
redis.call('ZADD', all, ARGV[7], ARGV[6])
redis.call('ZADD', own, 0, ARGV[8])
if ARGV[11] == '1' then
  redis.call('SADD', act, ARGV[10])
  redis.call('SADD', reps, ARGV[9])
end
return 1`)

	// updateTask: KEYS task, all, active set of its replica; ARGV version
	// read, all member, expiry score, pexpire ms (0: none), terminal (1/0),
	// id, n, then n field/value arguments to set, then fields to delete.
	// 1 written, 0 the version changed (or the task is gone).
	updateTask = redis.NewScript(`
local key = KEYS[1]
if redis.call('HGET', key, 'v') ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[7])
redis.call('HSET', key, unpack(ARGV, 8, 7 + n))
if #ARGV > 7 + n then redis.call('HDEL', key, unpack(ARGV, 8 + n)) end
redis.call('HINCRBY', key, 'v', 1)
if ARGV[4] == '0' then redis.call('PERSIST', key) else redis.call('PEXPIRE', key, ARGV[4]) end
redis.call('ZADD', KEYS[2], 'XX', ARGV[3], ARGV[2])
if ARGV[5] == '1' then redis.call('SREM', KEYS[3], ARGV[6]) end
return 1`)

	// listTasks: KEYS owner index; ARGV prefix, upper bound (exclusive
	// "(member" or "+"), how many, now19, owner. The hashes (HGETALL) of
	// up to that many unexpired tasks, newest first; index entries whose
	// task is gone are removed.
	listTasks = redis.NewScript(`
local out, bound, want = {}, ARGV[2], tonumber(ARGV[3])
while #out < want do
  local ms = redis.call('ZREVRANGEBYLEX', KEYS[1], bound, '-', 'LIMIT', 0, ` + strconv.Itoa(listBatch) + `)
  if #ms == 0 then break end
  for _, m in ipairs(ms) do
    bound = '(' .. m
    local created, id = string.sub(m, 1, 19), string.sub(m, 21)
    local h = redis.call('HGETALL', ARGV[1] .. 'task:t:' .. id)
    local f = {}
    for i = 1, #h, 2 do f[h[i]] = h[i + 1] end
    if f['o'] ~= ARGV[5] or f['c'] ~= created then
      redis.call('ZREM', KEYS[1], m)
    elseif not f['x'] or f['x'] > ARGV[4] then
      out[#out + 1] = h
      if #out == want then break end
    end
  end
end
return out`)

	// sweepTasks: KEYS all; ARGV prefix, now ms, now19, offset. Deletes
	// the expired among up to sweepBatch candidates; returns {deleted,
	// kept, candidates}.
	sweepTasks = redis.NewScript(luaSweepMember + `
local cands = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', ARGV[4], ` + strconv.Itoa(sweepBatch) + `)
local deleted = 0
for _, m in ipairs(cands) do deleted = deleted + sweepMember(ARGV[1], m, ARGV[3]) end
return {deleted, #cands - deleted, #cands}`)

	// failOrphans: KEYS replicas set; ARGV prefix, own replica, include own
	// (1/0), message, now19, failed status, working and input_required
	// statuses. Fails the unfinished tasks of every replica whose lease is
	// gone (and of this one if asked); returns how many.
	failOrphans = redis.NewScript(`
local n = 0
for _, r in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local mine = r == ARGV[2]
  if (mine and ARGV[3] == '1') or (not mine and redis.call('EXISTS', ARGV[1] .. 'replica:' .. r) == 0) then
    local act = ARGV[1] .. 'task:a:' .. r
    for _, id in ipairs(redis.call('SMEMBERS', act)) do
      local key = ARGV[1] .. 'task:t:' .. id
      local h = redis.call('HMGET', key, 's', 'u', 'r')
      if (h[1] == ARGV[7] or h[1] == ARGV[8]) and h[3] == r then
        local u = ARGV[5]
        if h[2] and h[2] > u then u = h[2] end
        redis.call('HSET', key, 's', ARGV[6], 'm', ARGV[4], 'u', u)
        redis.call('HINCRBY', key, 'v', 1)
        n = n + 1
      end
    end
    redis.call('DEL', act)
    redis.call('SREM', KEYS[1], r)
  end
end
return n`)
)

// Hash fields of a stored task.
const (
	fID       = "id"
	fOwner    = "o"
	fStatus   = "s"
	fMessage  = "m"
	fCreated  = "c"
	fUpdated  = "u"
	fExpires  = "x"
	fTTL      = "t"
	fPoll     = "i"
	fProtocol = "pv"
	fMethod   = "me"
	fReplica  = "r"
	fVersion  = "v"
	// Raw JSON fields: absent when nil, so nil and empty stay apart.
	fParams   = "P"
	fResult   = "R"
	fError    = "E"
	fInputReq = "I"
)

// clock returns the store's time at nanosecond precision, without a
// monotonic reading, as the other stores stamp records.
func (s *TaskStore) clock() time.Time { return time.Unix(0, s.cfg.now().UnixNano()) }

func (s *TaskStore) check(ctx context.Context) error {
	if s.closed.Load() {
		return taskstore.ErrClosed
	}
	return ctx.Err()
}

// mutableFields are the field/value pairs of what Update may change, and
// the raw fields to delete because they are nil.
func mutableFields(r *taskstore.Record) (set []any, del []any) {
	set = []any{
		fStatus, string(r.Status), fMessage, r.StatusMessage,
		fUpdated, nanos19(r.UpdatedAt.UnixNano()), fExpires, nanos19(r.ExpiryNanos()),
		fTTL, strconv.FormatInt(int64(r.TTL), 10), fPoll, strconv.FormatInt(int64(r.PollInterval), 10),
		fProtocol, r.ProtocolVersion, fMethod, r.Method,
	}
	for _, f := range []struct {
		name string
		v    []byte
	}{{fParams, r.Params}, {fResult, r.Result}, {fError, r.Error}, {fInputReq, r.InputRequests}} {
		if f.v == nil {
			del = append(del, f.name)
		} else {
			set = append(set, f.name, []byte(f.v))
		}
	}
	return set, del
}

// checkRecord refuses a record the store cannot keep.
func checkRecord(r *taskstore.Record) error {
	if !r.Status.Valid() {
		return fmt.Errorf("redisstore: unknown task status %q", r.Status)
	}
	if r.TTL < 0 || r.PollInterval < 0 {
		return errors.New("redisstore: negative task ttl or poll interval")
	}
	n := len(r.ID) + len(r.Owner) + len(r.StatusMessage) + len(r.ProtocolVersion) + len(r.Method) +
		len(r.Params) + len(r.Result) + len(r.Error) + len(r.InputRequests)
	if n > MaxTaskBytes {
		return fmt.Errorf("redisstore: a task of %d bytes, more than %d", n, MaxTaskBytes)
	}
	return nil
}

// pexpire is the Redis TTL, in ms, of a task expiring at exp when it is
// now: "0" for none, at least 1.
func pexpire(exp int64, now time.Time) string {
	if exp == math.MaxInt64 {
		return "0"
	}
	d := time.Duration(exp - now.UnixNano())
	return strconv.FormatInt(max(d.Milliseconds()+1, 1), 10)
}
