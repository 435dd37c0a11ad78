package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/toolwire/toolwire/transport/streamable"
)

// EventStore is a streamable.EventStore kept in Redis: every replica
// sharing the Redis server and prefix sees the same streams, so a client
// can resume a stream on a replica other than the one it started on.
//
// Each session has two keys, both expiring Limits.EventTTL after its last
// Append: a small hash of per-stream counters and a hash of the events
// themselves. Append and After are one round trip each (a Lua script).
//
// Event ids have the form "<stream>_<epoch>.<seq>": the stream, so that
// After goes straight to it; the session's epoch, a random number drawn
// when the session's first event is stored, so that an id of another
// session, or of this session before DropSession, expiry or a loss of
// Redis's data, is ErrUnknownEvent rather than a position in a new stream;
// and the event's sequence number in its stream.
//
// The interface has no context: each call is bounded by the client's
// timeout. A call that fails because Redis is unavailable returns an error
// (Append, After) or does nothing (DropStream, DropSession: the keys expire
// on their own), and the client's Healthy turns false.
type EventStore struct {
	c   *Client
	lim eventLimits
}

var _ streamable.EventStore = (*EventStore)(nil)

// Bounds of event ids.
const (
	epochLen = 16        // hex digits of the 64-bit epoch
	maxSeq   = 1<<53 - 1 // Lua's numbers are doubles: integers are exact up to 2^53
	// maxIDLen is the longest id After looks up: the longest stream id
	// and the longest epoch and sequence number.
	maxIDLen = MaxNameLen + 1 + epochLen + 1 + 16
)

// idSeparator separates an event id's stream from its epoch and sequence
// number, as in the memory store; stream ids must not contain it.
const idSeparator = "_"

// Marks before each stored event's data: nil (a priming event) and not.
const (
	markNil  = 0
	markData = 1
)

// EventStore returns the client's event store, bounded by opts
// (Limits.MaxEventsPerStream, Limits.MaxBytesPerSession, Limits.EventTTL). Stores
// made with the same bounds on clients with the same prefix share their
// events; the bounds are applied by each Append, so replicas should agree
// on them.
func (c *Client) EventStore(opts ...EventStoreOption) *EventStore {
	l := eventLimits{
		maxEventsPerStream: DefaultMaxEventsPerStream,
		maxBytesPerSession: DefaultMaxBytesPerSession,
		ttl:                DefaultEventTTL,
	}
	for _, o := range opts {
		if o != nil {
			o.applyEventStore(&l)
		}
	}
	return &EventStore{c: c, lim: l}
}

// keys returns the session's counter hash and event hash. The session sits
// between braces, Redis Cluster's hash tag, so both land in one slot, and
// between a fixed prefix and suffix, so no two sessions share a key.
func (s *EventStore) keys(session string) []string {
	base := s.c.prefix + "ev:{" + session + "}:"
	return []string{base + "m", base + "d"}
}

// The session's counter hash holds, per stream S, "n:S" (the next sequence
// number), "f:S" (the first one still held; equal to n:S when none is) and
// "b:S" (bytes of data held); and "E" (the epoch), "B" (the session's bytes
// of data). The event hash holds "S:<seq>" = a mark byte and the data.
//
// appendScript: KEYS = counter hash, event hash; ARGV = stream, mark and
// data, max events per stream, max bytes per session, TTL in ms, a fresh
// epoch. Returns {epoch, seq}.
var appendScript = redis.NewScript(`
local m, d = KEYS[1], KEYS[2]
local stream, data = ARGV[1], ARGV[2]
local maxEvents, maxBytes = tonumber(ARGV[3]), tonumber(ARGV[4])
local function str(n) return string.format('%d', n) end
if redis.call('HSETNX', m, 'E', ARGV[6]) == 1 then
  -- A new session (or its counters were lost): no stale events may stay.
  redis.call('DEL', d)
end
local epoch = redis.call('HGET', m, 'E')
local seq = redis.call('HINCRBY', m, 'n:' .. stream, 1) - 1
if seq == 0 then redis.call('HSET', m, 'f:' .. stream, 0, 'b:' .. stream, 0) end
redis.call('HSET', d, stream .. ':' .. str(seq), data)
local size = #data - 1
redis.call('HINCRBY', m, 'b:' .. stream, size)
local total = redis.call('HINCRBY', m, 'B', size)

-- evict drops the oldest event held of stream s, given its first and next
-- sequence numbers, and returns the new first.
local function evict(s, first)
  local field = s .. ':' .. str(first)
  local n = redis.call('HSTRLEN', d, field) - 1
  redis.call('HDEL', d, field)
  redis.call('HSET', m, 'f:' .. s, str(first + 1))
  if n > 0 then
    redis.call('HINCRBY', m, 'b:' .. s, -n)
    total = redis.call('HINCRBY', m, 'B', -n)
  end
  return first + 1, n
end

local first = tonumber(redis.call('HGET', m, 'f:' .. stream))
while seq + 1 - first > maxEvents do
  first = evict(stream, first)
end

if total > maxBytes then
  -- The session's streams, to evict from the one holding the most bytes.
  local streams = {}
  local flat = redis.call('HGETALL', m)
  for i = 1, #flat, 2 do
    local k, v = flat[i], flat[i + 1]
    local kind, s = string.sub(k, 1, 2), string.sub(k, 3)
    if kind == 'n:' or kind == 'f:' or kind == 'b:' then
      streams[s] = streams[s] or {}
      streams[s][kind] = tonumber(v)
    end
  end
  while total > maxBytes do
    local victim, most = nil, -1
    for s, st in pairs(streams) do
      if st['f:'] < st['n:'] and (st['b:'] > most or (st['b:'] == most and s < victim)) then
        victim, most = s, st['b:']
      end
    end
    if victim == nil then break end
    local st = streams[victim]
    local n
    st['f:'], n = evict(victim, st['f:'])
    if n > 0 then st['b:'] = st['b:'] - n end
  end
end
redis.call('PEXPIRE', m, ARGV[5])
redis.call('PEXPIRE', d, ARGV[5])
return {epoch, seq}
`)

// afterScript: KEYS = counter hash, event hash; ARGV = stream, epoch, seq.
// Returns {-1} for an unknown event, {-2} when events after it were
// evicted, else {0, first seq returned, mark and data...}.
var afterScript = redis.NewScript(`
local m, d = KEYS[1], KEYS[2]
local stream = ARGV[1]
local meta = redis.call('HMGET', m, 'E', 'n:' .. stream, 'f:' .. stream)
if meta[1] ~= ARGV[2] or not meta[2] then return {-1} end
local n, first, seq = tonumber(meta[2]), tonumber(meta[3]), tonumber(ARGV[3])
if seq >= n then return {-1} end
if seq + 1 < n and first > seq + 1 then return {-2} end
local from = math.max(seq + 1, first)
local out = {0, from}
local fields = {}
for i = from, n - 1 do
  fields[#fields + 1] = stream .. ':' .. string.format('%d', i)
  if #fields == 1000 or i == n - 1 then
    local vals = redis.call('HMGET', d, unpack(fields))
    for j = 1, #vals do out[#out + 1] = vals[j] end
    fields = {}
  end
end
return out
`)

// dropStreamScript: KEYS = counter hash, event hash; ARGV = stream.
var dropStreamScript = redis.NewScript(`
local m, d = KEYS[1], KEYS[2]
local stream = ARGV[1]
local meta = redis.call('HMGET', m, 'n:' .. stream, 'f:' .. stream, 'b:' .. stream)
if not meta[1] then return 0 end
local n, first, bytes = tonumber(meta[1]), tonumber(meta[2]), tonumber(meta[3])
local fields = {}
for i = first, n - 1 do
  fields[#fields + 1] = stream .. ':' .. string.format('%d', i)
  if #fields == 1000 or i == n - 1 then
    redis.call('HDEL', d, unpack(fields))
    fields = {}
  end
end
redis.call('HDEL', m, 'n:' .. stream, 'f:' .. stream, 'b:' .. stream)
redis.call('HINCRBY', m, 'B', -bytes)
return 1
`)

// Append implements streamable.EventStore: one round trip that stores the
// event, evicts past the bounds and refreshes the session's TTL.
func (s *EventStore) Append(session, stream string, data []byte) (string, error) {
	if err := checkName("session", session); err != nil {
		return "", err
	}
	if err := checkName("stream", stream); err != nil {
		return "", err
	}
	if strings.Contains(stream, idSeparator) {
		return "", errors.New("redisstore: stream id must not contain " + strconv.Quote(idSeparator))
	}
	stored := make([]byte, 1+len(data))
	stored[0] = markNil
	if data != nil {
		stored[0] = markData
		copy(stored[1:], data)
	}
	ctx, cancel := s.c.opContext()
	defer cancel()
	res, err := appendScript.Run(ctx, s.c.rdb, s.keys(session),
		stream, stored, s.lim.maxEventsPerStream, s.lim.maxBytesPerSession,
		max(s.lim.ttl.Milliseconds(), 1), formatEpoch(rand.Uint64())).Slice()
	if err = s.c.observe(context.Background(), err); err != nil {
		return "", fmt.Errorf("redisstore: appending an event: %w", err)
	}
	if len(res) != 2 {
		return "", fmt.Errorf("redisstore: appending an event: unexpected reply %v", res)
	}
	epoch, _ := res[0].(string)
	seq, ok := res[1].(int64)
	if !validEpoch(epoch) || !ok || seq < 0 || seq > maxSeq {
		return "", fmt.Errorf("redisstore: appending an event: unexpected reply %v", res)
	}
	return formatEventID(stream, epoch, uint64(seq)), nil
}

// After implements streamable.EventStore: one round trip. An id this store
// did not issue to the session is streamable.ErrUnknownEvent.
func (s *EventStore) After(session, id string) (string, []streamable.Event, error) {
	stream, epoch, seq, ok := parseEventID(id)
	if !ok || checkName("session", session) != nil {
		return "", nil, streamable.ErrUnknownEvent
	}
	ctx, cancel := s.c.opContext()
	defer cancel()
	res, err := afterScript.Run(ctx, s.c.rdb, s.keys(session), stream, epoch, seq).Slice()
	if err = s.c.observe(context.Background(), err); err != nil {
		return "", nil, fmt.Errorf("redisstore: reading events: %w", err)
	}
	code, _ := firstInt(res)
	switch {
	case code == -1 && len(res) == 1:
		return "", nil, streamable.ErrUnknownEvent
	case code == -2 && len(res) == 1:
		return "", nil, streamable.ErrEventsLost
	case code != 0 || len(res) < 2:
		return "", nil, fmt.Errorf("redisstore: reading events: unexpected reply %.100v", res)
	}
	from, ok := res[1].(int64)
	if !ok || from < 0 {
		return "", nil, fmt.Errorf("redisstore: reading events: unexpected reply %.100v", res)
	}
	events := make([]streamable.Event, 0, len(res)-2)
	for i, v := range res[2:] {
		stored, ok := v.(string)
		if !ok || stored == "" {
			// Held events are never missing unless Redis evicted the
			// event hash alone (maxmemory): the stream has a gap.
			return "", nil, streamable.ErrEventsLost
		}
		e := streamable.Event{ID: formatEventID(stream, epoch, uint64(from)+uint64(i))}
		if stored[0] != markNil {
			e.Data = []byte(stored[1:])
		}
		events = append(events, e)
	}
	return stream, events, nil
}

// firstInt returns res[0] as an integer.
func firstInt(res []any) (int64, bool) {
	if len(res) == 0 {
		return 0, false
	}
	n, ok := res[0].(int64)
	return n, ok
}

// DropStream implements streamable.EventStore. If Redis is unavailable the
// stream's events stay until the session's keys expire.
func (s *EventStore) DropStream(session, stream string) {
	if checkName("session", session) != nil || checkName("stream", stream) != nil {
		return
	}
	ctx, cancel := s.c.opContext()
	defer cancel()
	err := dropStreamScript.Run(ctx, s.c.rdb, s.keys(session), stream).Err()
	if err = s.c.observe(context.Background(), err); err != nil {
		s.c.log.Debug("redisstore: dropping a stream's events", "err", err.Error())
	}
}

// DropSession implements streamable.EventStore. If Redis is unavailable the
// session's events stay until its keys expire.
func (s *EventStore) DropSession(session string) {
	if checkName("session", session) != nil {
		return
	}
	ctx, cancel := s.c.opContext()
	defer cancel()
	err := s.c.rdb.Del(ctx, s.keys(session)...).Err()
	if err = s.c.observe(context.Background(), err); err != nil {
		s.c.log.Debug("redisstore: dropping a session's events", "err", err.Error())
	}
}

// checkName bounds a session or stream id.
func checkName(what, name string) error {
	if len(name) > MaxNameLen {
		return fmt.Errorf("redisstore: %s id of %d bytes, longer than %d", what, len(name), MaxNameLen)
	}
	return nil
}

// formatEpoch writes a session's epoch as epochLen lowercase hex digits.
func formatEpoch(e uint64) string {
	const digits = "0123456789abcdef"
	var b [epochLen]byte
	for i := epochLen - 1; i >= 0; i-- {
		b[i] = digits[e&0xf]
		e >>= 4
	}
	return string(b[:])
}

// validEpoch reports whether s is an epoch as formatEpoch writes it.
func validEpoch(s string) bool {
	if len(s) != epochLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// formatEventID returns the id of event seq of stream in a session of epoch.
func formatEventID(stream, epoch string, seq uint64) string {
	return stream + idSeparator + epoch + "." + strconv.FormatUint(seq, 10)
}

// parseEventID splits an id formatEventID made for a stream id Append
// accepts; ok is false for anything else (no separator or more than one, a
// bad epoch, a sequence number with a sign, leading zeros or past maxSeq, a
// stream id past MaxNameLen), so that exactly the ids it accepts format back
// to themselves.
func parseEventID(id string) (stream, epoch string, seq uint64, ok bool) {
	if len(id) > maxIDLen {
		return "", "", 0, false
	}
	i := strings.Index(id, idSeparator)
	if i < 0 || i > MaxNameLen {
		return "", "", 0, false
	}
	stream, rest := id[:i], id[i+len(idSeparator):]
	if len(rest) < epochLen+2 || rest[epochLen] != '.' || !validEpoch(rest[:epochLen]) {
		return "", "", 0, false
	}
	epoch, num := rest[:epochLen], rest[epochLen+1:]
	if len(num) > 1 && num[0] == '0' {
		return "", "", 0, false
	}
	for i := 0; i < len(num); i++ {
		if num[i] < '0' || num[i] > '9' {
			return "", "", 0, false
		}
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil || seq > maxSeq {
		return "", "", 0, false
	}
	return stream, epoch, seq, true
}
