package redisstore

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/transport/streamable"
)

// newStore starts a Redis server and returns an event store on it.
func newStore(t testing.TB, opts ...EventStoreOption) (*EventStore, *testenv.RedisServer) {
	t.Helper()
	srv := testenv.Redis(t)
	return open(t, srv.URL()).EventStore(opts...), srv
}

func mustAppend(t testing.TB, s *EventStore, session, stream string, data []byte) string {
	t.Helper()
	id, err := s.Append(session, stream, data)
	if err != nil {
		t.Fatalf("Append(%q, %q): %v", session, stream, err)
	}
	return id
}

// epochOf returns the epoch in id.
func epochOf(t testing.TB, id string) string {
	t.Helper()
	_, epoch, _, ok := parseEventID(id)
	if !ok {
		t.Fatalf("Append returned id %q that After cannot parse", id)
	}
	return epoch
}

// The memory store's test (transport/streamable), against Redis: events
// after an id, oldest first, per session; unknown and future ids; the
// per-stream bound evicting the oldest and a resume from before it losing
// events; the byte bound evicting across streams; DropStream, DropSession
// and the separator check.
func TestEventStore(t *testing.T) {
	s, _ := newStore(t, WithLimits(Limits{MaxEventsPerStream: 3, MaxBytesPerSession: 10}))
	var ids []string
	for i := range 3 {
		ids = append(ids, mustAppend(t, s, "s1", "p1", []byte(fmt.Sprint(i))))
	}
	if !strings.HasPrefix(ids[0], "p1_") || !strings.HasSuffix(ids[0], ".0") || !strings.HasSuffix(ids[2], ".2") {
		t.Fatalf("ids %v, want p1_<epoch>.0 to .2", ids)
	}
	s2id := mustAppend(t, s, "s2", "p1", []byte("other"))
	stream, evs, err := s.After("s1", ids[0])
	if err != nil || stream != "p1" || len(evs) != 2 || string(evs[0].Data) != "1" || evs[0].ID != ids[1] || evs[1].ID != ids[2] {
		t.Fatalf("After(first) = %q %v %v", stream, evs, err)
	}
	// Each session has its own epoch: the same position in another
	// session's stream of the same name is not this session's event.
	if epochOf(t, s2id) == epochOf(t, ids[0]) {
		t.Fatalf("two sessions share epoch %s", epochOf(t, s2id))
	}
	if _, _, err := s.After("s2", ids[0]); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Fatalf("session s2 after s1's %s: %v, want ErrUnknownEvent", ids[0], err)
	}
	if _, evs, err := s.After("s2", s2id); err != nil || len(evs) != 0 {
		t.Fatalf("session s2 after its own last event: %v %v", evs, err)
	}
	if _, _, err := s.After("s1", "nope"); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Fatalf("bad id: %v", err)
	}
	if _, _, err := s.After("s1", formatEventID("p1", epochOf(t, ids[0]), 99)); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Fatalf("future id: %v", err)
	}

	// A fourth event evicts the first; resuming after it would leave a gap.
	mustAppend(t, s, "s1", "p1", []byte("3"))
	if _, _, err := s.After("s1", ids[0]); err != nil {
		t.Fatalf("after id 0 the next event (1) is still stored: %v", err)
	}
	mustAppend(t, s, "s1", "p1", []byte("4"))
	if _, _, err := s.After("s1", ids[0]); !errors.Is(err, streamable.ErrEventsLost) {
		t.Fatalf("after eviction: %v, want ErrEventsLost", err)
	}
	if held := do(t, s.c, "HLEN", s.keys("s1")[1]).Val(); held != int64(3) {
		t.Fatalf("%v events held in Redis, want 3", held)
	}

	// The byte bound evicts across streams.
	big := s.c.EventStore(WithLimits(Limits{MaxBytesPerSession: 8}))
	a := mustAppend(t, big, "s", "a", []byte("12345"))
	mustAppend(t, big, "s", "b", []byte("12345"))
	if n := do(t, s.c, "HLEN", big.keys("s")[1]).Val(); n != int64(1) {
		t.Fatalf("byte bound: %v events kept, want 1", n)
	}
	if _, _, err := big.After("s", a); err != nil {
		// a's only event is gone but it was the last one: nothing after it is lost.
		t.Fatalf("after evicted last event: %v", err)
	}

	s.DropStream("s1", "p1")
	if _, _, err := s.After("s1", ids[2]); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Fatalf("after DropStream: %v", err)
	}
	if n := do(t, s.c, "HLEN", s.keys("s1")[1]).Val(); n != int64(0) {
		t.Fatalf("%v events of s1 left after DropStream", n)
	}
	s.DropSession("s2")
	if n := do(t, s.c, "EXISTS", s.keys("s2")[0], s.keys("s2")[1]).Val(); n != int64(0) {
		t.Fatalf("%v keys of s2 left after DropSession", n)
	}
	if _, err := s.Append("s1", "bad_stream", nil); err == nil {
		t.Fatal("stream id with the separator accepted")
	}
}

// The memory store's byte-bound cases: priming events hold no bytes, the
// oldest events of the largest stream go first, and an event larger than
// the bound on its own is evicted at once (a resume from before it loses
// it).
func TestEventStoreMaxBytes(t *testing.T) {
	s, _ := newStore(t, WithLimits(Limits{MaxBytesPerSession: 10}))
	a0 := mustAppend(t, s, "a", "p1", nil) // a priming event: no data
	a1 := mustAppend(t, s, "a", "p1", []byte("aaaaaa"))
	b0 := mustAppend(t, s, "a", "p2", []byte("b"))
	// 7 + 4 > 10: p1 holds the most (6 bytes to p2's 5), its oldest events
	// go: the priming event, which frees nothing, then "aaaaaa".
	mustAppend(t, s, "a", "p2", []byte("bbbb"))
	if _, _, err := s.After("a", a0); !errors.Is(err, streamable.ErrEventsLost) {
		t.Fatalf("resume after p1's evicted priming event: %v, want ErrEventsLost", err)
	}
	if _, evs, err := s.After("a", a1); err != nil || len(evs) != 0 {
		t.Fatalf("resume after p1's last event: %v %v", evs, err)
	}
	if _, evs, err := s.After("a", b0); err != nil || len(evs) != 1 || string(evs[0].Data) != "bbbb" {
		t.Fatalf("resume of p2: %v %v", evs, err)
	}
	if got := do(t, s.c, "HGET", s.keys("a")[0], "B").Val(); got != "5" {
		t.Fatalf("session holds %v bytes, want 5", got)
	}
	// One event past the bound on its own is evicted at once.
	d0 := mustAppend(t, s, "d", "p1", nil)
	if _, err := s.Append("d", "p1", make([]byte, 11)); err != nil {
		t.Fatal(err)
	}
	if got := do(t, s.c, "HGET", s.keys("d")[0], "B").Val(); got != "0" {
		t.Fatalf("session d holds %v bytes, want 0", got)
	}
	if _, _, err := s.After("d", d0); !errors.Is(err, streamable.ErrEventsLost) {
		t.Fatalf("resume before an oversized event: %v, want ErrEventsLost", err)
	}
}

// Nil data (a priming event), empty data and every byte value come back
// as they went in, up to 1 MiB.
func TestEventStoreBinaryData(t *testing.T) {
	s, _ := newStore(t)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	huge := bytes.Repeat(all, 4096) // 1 MiB
	datas := [][]byte{nil, {}, {0}, {1}, all, []byte("ü✓\r\n\x00$-1\r\n"), huge}
	first := mustAppend(t, s, "bin", "p", nil)
	var ids []string
	for _, d := range datas {
		ids = append(ids, mustAppend(t, s, "bin", "p", d))
	}
	_, evs, err := s.After("bin", first)
	if err != nil || len(evs) != len(datas) {
		t.Fatalf("After = %d events, %v", len(evs), err)
	}
	for i, e := range evs {
		if e.ID != ids[i] || (e.Data == nil) != (datas[i] == nil) || !bytes.Equal(e.Data, datas[i]) {
			t.Errorf("event %d: id %s, %d bytes (nil %v); want id %s, %d bytes (nil %v)",
				i, e.ID, len(e.Data), e.Data == nil, ids[i], len(datas[i]), datas[i] == nil)
		}
	}
}

// After answers ErrUnknownEvent, never a panic or another session's events,
// for ids it did not issue to the session.
func TestEventStoreMalformedIDs(t *testing.T) {
	s, _ := newStore(t)
	id := mustAppend(t, s, "s", "p1", []byte("x"))
	mustAppend(t, s, "s", "p1", []byte("y"))
	other := mustAppend(t, s, "other", "p1", []byte("z"))
	mustAppend(t, s, "other", "p1", []byte("w"))
	epoch := epochOf(t, id)
	mib := strings.Repeat("a", 1<<20)
	for name, bad := range map[string]string{
		"empty":                     "",
		"no separator":              "p1",
		"separator only":            "_",
		"no epoch":                  "p1_",
		"memory-store id":           "p1_0",
		"no sequence number":        "p1_" + epoch + ".",
		"no dot":                    "p1_" + epoch + "0",
		"short epoch":               "p1_" + epoch[1:] + ".0",
		"upper-case epoch":          "p1_" + strings.ToUpper(epoch) + ".0",
		"other epoch":               "p1_0123456789abcdef.0",
		"negative":                  "p1_" + epoch + ".-1",
		"plus sign":                 "p1_" + epoch + ".+0",
		"leading zero":              "p1_" + epoch + ".00",
		"space":                     "p1_" + epoch + ". 0",
		"future":                    "p1_" + epoch + ".2",
		"past 2^53":                 "p1_" + epoch + ".9007199254740992",
		"past 2^64":                 "p1_" + epoch + ".18446744073709551616",
		"huge":                      "p1_" + epoch + "." + strings.Repeat("9", 1000),
		"unknown stream":            "p2_" + epoch + ".0",
		"other session's id":        other,
		"other session's stream":    "p1_" + epochOf(t, other) + ".0",
		"unicode":                   "ストリーム_" + epoch + ".0",
		"unicode digits":            "p1_" + epoch + ".٠",
		"NUL":                       "p1\x00_" + epoch + ".0",
		"invalid UTF-8":             "\xff\xfe_" + epoch + ".0",
		"1 MiB":                     mib,
		"1 MiB stream":              mib + "_" + epoch + ".0",
		"1 MiB sequence number":     "p1_" + epoch + "." + strings.Repeat("1", 1<<20),
		"Lua pattern in the stream": "%d.*_" + epoch + ".0",
		"key pattern in the stream": "*_" + epoch + ".0",
	} {
		stream, evs, err := s.After("s", bad)
		if !errors.Is(err, streamable.ErrUnknownEvent) || stream != "" || evs != nil {
			t.Errorf("%s: After(%.60q) = %q, %d events, %v; want ErrUnknownEvent", name, bad, stream, len(evs), err)
		}
	}
	if _, _, err := s.After(strings.Repeat("s", MaxNameLen+1), id); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Errorf("After with an over-long session id: %v, want ErrUnknownEvent", err)
	}
	// The valid id still works after all that.
	if _, evs, err := s.After("s", id); err != nil || len(evs) != 1 || string(evs[0].Data) != "y" {
		t.Fatalf("After(%s) = %v, %v", id, evs, err)
	}
}

// Append checks its names: over-long session and stream ids and the
// separator are refused, any other bytes (unicode, NUL, braces that Redis
// Cluster reads as a hash tag, key patterns) are names like any other and
// do not mix sessions up.
func TestEventStoreNames(t *testing.T) {
	s, _ := newStore(t)
	long := strings.Repeat("x", MaxNameLen+1)
	for _, c := range []struct{ session, stream string }{
		{long, "p"}, {"s", long}, {"s", "a_b"}, {"s", "_"},
	} {
		if id, err := s.Append(c.session, c.stream, []byte("d")); err == nil {
			t.Errorf("Append(%.20q, %.20q) = %s, want an error", c.session, c.stream, id)
		}
	}
	ok := strings.Repeat("x", MaxNameLen)
	names := []string{"", "ü✓ セッション", "a\x00b", "{x}", "}", "{", "a}:m", "*", "?", ok, "\xff"}
	ids := map[[2]string]string{}
	for i, session := range names {
		for j, stream := range names {
			ids[[2]string{session, stream}] = mustAppend(t, s, session, stream, []byte(fmt.Sprint(i, ",", j)))
		}
	}
	for _, session := range names {
		for _, stream := range names {
			first := mustAppend(t, s, session, stream, nil)
			got, evs, err := s.After(session, ids[[2]string{session, stream}])
			if err != nil || got != stream || len(evs) != 1 || evs[0].ID != first || evs[0].Data != nil {
				t.Errorf("session %q stream %q: After = %q %v %v", session, stream, got, evs, err)
			}
			if _, evs, err := s.After(session, first); err != nil || len(evs) != 0 {
				t.Errorf("session %q stream %q: After(its last event) = %v %v", session, stream, evs, err)
			}
		}
	}
	for _, session := range names {
		s.DropSession(session)
	}
	if n := do(t, s.c, "DBSIZE").Val(); n != int64(0) {
		t.Errorf("%v keys left after dropping every session", n)
	}
}

// Two replicas, each with its own Client and EventStore on one Redis, see
// each other's events; concurrent Appends from both to one stream get
// distinct, consecutive ids, all of which After returns in order.
func TestEventStoreReplicas(t *testing.T) {
	srv := testenv.Redis(t)
	a := open(t, srv.URL()).EventStore()
	b := open(t, srv.URL()).EventStore()
	first := mustAppend(t, a, "s", "p", nil)
	id := mustAppend(t, a, "s", "p", []byte("from a"))
	stream, evs, err := b.After("s", first)
	if err != nil || stream != "p" || len(evs) != 1 || evs[0].ID != id || string(evs[0].Data) != "from a" {
		t.Fatalf("replica b after a's priming event: %q %v %v", stream, evs, err)
	}
	id2 := mustAppend(t, b, "s", "p", []byte("from b"))
	if _, evs, err := a.After("s", id); err != nil || len(evs) != 1 || evs[0].ID != id2 {
		t.Fatalf("replica a after its own event: %v %v", evs, err)
	}

	const perReplica = 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]string{}
	for r, st := range []*EventStore{a, b} {
		for w := range 2 {
			wg.Go(func() {
				for i := range perReplica / 2 {
					data := fmt.Sprintf("r%d w%d %d", r, w, i)
					id, err := st.Append("s", "race", []byte(data))
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if prev, dup := got[id]; dup {
						t.Errorf("id %s issued twice: %q and %q", id, prev, data)
					}
					got[id] = data
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	mustAppend(t, a, "s", "race0", nil) // another stream: no effect on "race"
	// Resume from the first event of "race" on either replica.
	var firstID string
	for id := range got {
		if strings.HasSuffix(id, ".0") {
			firstID = id
		}
	}
	for _, st := range []*EventStore{a, b} {
		_, evs, err := st.After("s", firstID)
		if err != nil || len(evs) != 2*perReplica-1 {
			t.Fatalf("After(%s) = %d events, %v; want %d", firstID, len(evs), err, 2*perReplica-1)
		}
		for i, e := range evs {
			if want := formatEventID("race", epochOf(t, firstID), uint64(i+1)); e.ID != want || string(e.Data) != got[e.ID] {
				t.Fatalf("event %d: %s %q, want %s %q", i, e.ID, e.Data, want, got[want])
			}
		}
	}
}

// Every key a store writes starts with its client's prefix, and stores with
// different prefixes on one Redis share nothing.
func TestEventStorePrefix(t *testing.T) {
	srv := testenv.Redis(t)
	def := open(t, srv.URL())
	if def.prefix != DefaultPrefix {
		t.Fatalf("default prefix %q, want %q", def.prefix, DefaultPrefix)
	}
	a := open(t, srv.URL(), WithPrefix("tenant-a:")).EventStore()
	b := open(t, srv.URL(), WithPrefix("tenant-b:")).EventStore()
	ida := mustAppend(t, a, "s", "p", []byte("a"))
	mustAppend(t, a, "s", "p", []byte("a2"))
	idb := mustAppend(t, b, "s", "p", []byte("b"))
	if _, _, err := b.After("s", ida); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Errorf("prefix b reads prefix a's id: %v", err)
	}
	if _, evs, err := b.After("s", idb); err != nil || len(evs) != 0 {
		t.Errorf("prefix b after its own event: %v %v", evs, err)
	}
	b.DropSession("s")
	if _, evs, err := a.After("s", ida); err != nil || len(evs) != 1 {
		t.Errorf("prefix a after b dropped the session of the same id: %v %v", evs, err)
	}
	keys, err := do(t, def, "KEYS", "*").StringSlice()
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %q, %v; want prefix a's two", keys, err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "tenant-a:") {
			t.Errorf("key %q outside prefix tenant-a:", k)
		}
	}
}

// A session's keys expire WithEventTTL after its last Append, which
// refreshes it; after expiry its ids are unknown and Redis holds nothing.
func TestEventStoreTTL(t *testing.T) {
	c := openRedis(t)
	s := c.EventStore()
	mustAppend(t, s, "s", "p", []byte("x"))
	for _, k := range s.keys("s") {
		if ttl := do(t, c, "PTTL", k).Val().(int64); ttl <= 0 || ttl > DefaultEventTTL.Milliseconds() {
			t.Errorf("PTTL %s = %d ms, want within the default %v", k, ttl, DefaultEventTTL)
		}
	}
	// An Append refreshes the TTL of both keys.
	for _, k := range s.keys("s") {
		do(t, c, "PEXPIRE", k, 5000)
	}
	mustAppend(t, s, "s", "q", nil)
	for _, k := range s.keys("s") {
		if ttl := do(t, c, "PTTL", k).Val().(int64); ttl <= 5000 {
			t.Errorf("PTTL %s = %d ms after an Append, want refreshed", k, ttl)
		}
	}

	short := c.EventStore(WithLimits(Limits{EventTTL: 200 * time.Millisecond}))
	id := mustAppend(t, short, "gone", "p", nil)
	mustAppend(t, short, "gone", "p", []byte("x"))
	for _, k := range short.keys("gone") {
		if ttl := do(t, c, "PTTL", k).Val().(int64); ttl <= 0 || ttl > 200 {
			t.Errorf("PTTL %s = %d ms, want within 200", k, ttl)
		}
	}
	testwait.WaitFor(t, "the session's keys to expire", func() bool {
		return do(t, c, "EXISTS", short.keys("gone")[0], short.keys("gone")[1]).Val() == int64(0)
	})
	if _, _, err := short.After("gone", id); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Fatalf("After an expired session's id: %v, want ErrUnknownEvent", err)
	}
	// A new Append starts a new epoch: the old id stays unknown.
	id2 := mustAppend(t, short, "gone", "p", nil)
	if epochOf(t, id2) == epochOf(t, id) {
		t.Error("the session kept its epoch across expiry")
	}
	if _, _, err := short.After("gone", id); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Fatalf("After an expired session's id once it has new events: %v, want ErrUnknownEvent", err)
	}
}

// After DropSession a session's old ids are unknown, even once the session
// has new events at the same positions (the memory store would replay the
// new stream's events to a client of the old one).
func TestEventStoreDropSessionForgetsIDs(t *testing.T) {
	s, _ := newStore(t)
	old := mustAppend(t, s, "s", "p", nil)
	mustAppend(t, s, "s", "p", []byte("old"))
	s.DropSession("s")
	mustAppend(t, s, "s", "p", nil)
	mustAppend(t, s, "s", "p", []byte("new"))
	if _, evs, err := s.After("s", old); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Fatalf("After(an id from before DropSession) = %v, %v; want ErrUnknownEvent", evs, err)
	}
}

// Redis stopped: Append and After return an error (within the client's
// timeout; the test only checks that they return) and Healthy turns false
// with the reason in Err; DropStream and DropSession return too. Redis
// started again: Healthy turns true by the background check and the store
// works, its sessions' old ids unknown (Redis kept nothing).
func TestEventStoreRedisDown(t *testing.T) {
	srv := testenv.Redis(t)
	c := open(t, srv.URL(), WithLimits(Limits{CommandTimeout: upTimeout, HealthInterval: 50 * time.Millisecond}))
	s := c.EventStore()
	id := mustAppend(t, s, "s", "p", nil)
	if !c.Healthy() || c.Err() != nil {
		t.Fatalf("Healthy %v, Err %v with Redis up", c.Healthy(), c.Err())
	}
	srv.Stop()
	testwait.Returns(t, "Append with Redis down", func() {
		if _, err := s.Append("s", "p", []byte("x")); err == nil {
			t.Error("Append succeeded with Redis down")
		}
	})
	testwait.Returns(t, "After with Redis down", func() {
		if _, _, err := s.After("s", id); err == nil || errors.Is(err, streamable.ErrUnknownEvent) {
			t.Errorf("After with Redis down: %v, want a Redis error", err)
		}
	})
	testwait.Returns(t, "DropStream and DropSession with Redis down", func() {
		s.DropStream("s", "p")
		s.DropSession("s")
	})
	if c.Healthy() || c.Err() == nil {
		t.Fatalf("Healthy %v, Err %v after failures with Redis down", c.Healthy(), c.Err())
	}
	srv.Start()
	testwait.WaitFor(t, "Healthy after Redis is back", c.Healthy)
	if c.Err() != nil {
		t.Fatalf("Err %v once healthy", c.Err())
	}
	if _, _, err := s.After("s", id); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Fatalf("After an id Redis no longer holds: %v, want ErrUnknownEvent", err)
	}
	id = mustAppend(t, s, "s", "p", nil)
	mustAppend(t, s, "s", "p", []byte("back"))
	if _, evs, err := s.After("s", id); err != nil || len(evs) != 1 || string(evs[0].Data) != "back" {
		t.Fatalf("After once Redis is back: %v %v", evs, err)
	}

	// With no request running, the background check alone notices.
	srv.Stop()
	testwait.WaitFor(t, "Healthy false from the background check", func() bool { return !c.Healthy() })
	srv.Start()
	testwait.WaitFor(t, "Healthy again from the background check", c.Healthy)
}

// Redis hung (SIGSTOP: connections open, no answers): Append and After
// still return, with a timeout error, and Healthy turns false; once Redis
// resumes, everything works again. The timeout, the subject, is short: an
// operation that must succeed is tried until it does, as a busy machine
// may make one outlast it.
func TestEventStoreRedisHung(t *testing.T) {
	srv := testenv.Redis(t)
	c := open(t, srv.URL(), WithLimits(Limits{CommandTimeout: 300 * time.Millisecond, HealthInterval: 50 * time.Millisecond}))
	s := c.EventStore()
	var id string
	testwait.WaitForNil(t, "an Append with Redis up", func() (err error) {
		id, err = s.Append("s", "p", nil)
		return err
	})
	pid := srv.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	defer resume()
	testwait.Returns(t, "Append with Redis hung", func() {
		if _, err := s.Append("s", "p", []byte("x")); err == nil {
			t.Error("Append succeeded with Redis hung")
		}
	})
	testwait.Returns(t, "After with Redis hung", func() {
		if _, _, err := s.After("s", id); err == nil {
			t.Error("After succeeded with Redis hung")
		}
	})
	if c.Healthy() {
		t.Fatal("Healthy with Redis hung")
	}
	resume()
	testwait.WaitFor(t, "Healthy once Redis resumes", c.Healthy)
	testwait.WaitForNil(t, "an Append once Redis resumes", func() error {
		_, err := s.Append("s", "p", []byte("y"))
		return err
	})
}

// Append, After, DropStream and DropSession are one round trip each once
// the scripts are cached (the first run of each script after a start of
// Redis costs a second: EVALSHA, then EVAL).
func TestEventStoreRoundTrips(t *testing.T) {
	s, _ := newStore(t)
	h := countRoundTrips(s.c)
	id := mustAppend(t, s, "s", "p", nil) // warms the connection and the script cache
	s.After("s", id)
	s.DropStream("s", "none")
	for _, c := range []struct {
		name string
		op   func()
	}{
		{"Append", func() { mustAppend(t, s, "s", "p", []byte("data")) }},
		{"After", func() { s.After("s", id) }},
		{"DropStream", func() { s.DropStream("s", "q") }},
		{"DropSession", func() { s.DropSession("other") }},
	} {
		before := h.count()
		const n = 50
		for range n {
			c.op()
		}
		if got := h.count() - before; got != n {
			t.Errorf("%s: %d round trips for %d calls, want %d", c.name, got, n, n)
		}
		t.Logf("%s: %.2f round trips per call", c.name, float64(h.count()-before)/n)
	}
	// Redis lost its script cache (a restart): the next Append costs two
	// round trips (EVALSHA refused, then EVAL), the ones after it one.
	do(t, s.c, "SCRIPT", "FLUSH")
	before := h.count()
	mustAppend(t, s, "s", "p", []byte("after flush"))
	if got := h.count() - before; got != 2 {
		t.Errorf("first Append after SCRIPT FLUSH: %d round trips, want 2", got)
	}
	before = h.count()
	mustAppend(t, s, "s", "p", []byte("cached again"))
	if got := h.count() - before; got != 1 {
		t.Errorf("second Append after SCRIPT FLUSH: %d round trips, want 1", got)
	}
	t.Logf("new connections while counting: %d", h.dials.Load())
}

// BenchmarkEventStoreAppend appends 256-byte events to a stream bounded at
// the default 1024 events, reporting round trips per Append.
func BenchmarkEventStoreAppend(b *testing.B) {
	s, _ := newStore(b)
	h := countRoundTrips(s.c)
	data := bytes.Repeat([]byte("x"), 256)
	mustAppend(b, s, "s", "p", data)
	before := h.count()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Append("s", "p", data); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(h.count()-before)/float64(b.N), "roundtrips/op")
}
