package redisstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/transport/streamable"
)

// A randomised run of Append, After, DropStream and DropSession gives the
// same results as the memory store with the same bounds: the same errors,
// streams, events and data, position for position. Bytes are bounded with
// one stream per session, where the store choosing which stream to evict
// from is the same.
func TestEventStoreMatchesMemory(t *testing.T) {
	c := openRedis(t)
	for _, cfg := range []struct {
		name               string
		maxEvents, maxByte int
		streams            int
	}{
		{"event bound", 5, 1 << 20, 3},
		{"byte bound", 1000, 40, 1},
		{"both", 4, 30, 1},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(cfg.name))))
			mem := streamable.NewMemoryEventStore(streamable.WithLimits(streamable.Limits{
				MaxEventsPerStream:      cfg.maxEvents,
				MaxEventBytesPerSession: cfg.maxByte,
				MaxEventBytes:           1 << 30,
			}))
			red := c.EventStore(WithLimits(Limits{MaxEventsPerStream: cfg.maxEvents, MaxBytesPerSession: cfg.maxByte}))
			type pos struct {
				session, stream string
				seq             uint64
			}
			var issued []pos           // positions of the current incarnation of each session
			redIDs := map[pos]string{} // position → the Redis store's id
			sessionOf := func(i int) string { return fmt.Sprintf("%s-s%d", cfg.name, i) }
			outcomes := map[string]int{} // what the Afters returned, so the run is known to cover each
			for op := range 3000 {
				session := sessionOf(r.IntN(3))
				stream := fmt.Sprintf("p%d", r.IntN(cfg.streams))
				switch k := r.IntN(100); {
				case k < 55:
					var data []byte
					if r.IntN(5) > 0 {
						data = make([]byte, r.IntN(15))
						for i := range data {
							data[i] = byte(r.Uint32())
						}
					}
					mid, err1 := mem.Append(session, stream, data)
					rid, err2 := red.Append(session, stream, data)
					if err1 != nil || err2 != nil {
						t.Fatalf("op %d: Append: %v / %v", op, err1, err2)
					}
					_, seqStr, _ := strings.Cut(mid, "_")
					var seq uint64
					fmt.Sscan(seqStr, &seq)
					p := pos{session, stream, seq}
					if want := formatEventID(stream, epochOf(t, rid), seq); rid != want {
						t.Fatalf("op %d: Redis id %s, want position %d (%s)", op, rid, seq, want)
					}
					issued = append(issued, p)
					redIDs[p] = rid
				case k < 90 && len(issued) > 0:
					p := issued[r.IntN(len(issued))]
					mstream, mevs, err1 := mem.After(p.session, fmt.Sprintf("%s_%d", p.stream, p.seq))
					rstream, revs, err2 := red.After(p.session, redIDs[p])
					if !errors.Is(err2, err1) || (err1 == nil) != (err2 == nil) || mstream != rstream || len(mevs) != len(revs) {
						t.Fatalf("op %d: After %v: memory %q %d events %v; Redis %q %d events %v",
							op, p, mstream, len(mevs), err1, rstream, len(revs), err2)
					}
					switch {
					case errors.Is(err1, streamable.ErrEventsLost):
						outcomes["lost"]++
					case err1 != nil:
						outcomes["other error"]++
					case len(mevs) > 0:
						outcomes["events"]++
					default:
						outcomes["none"]++
					}
					for i := range mevs {
						_, seqStr, _ := strings.Cut(mevs[i].ID, "_")
						var seq uint64
						fmt.Sscan(seqStr, &seq)
						want := redIDs[pos{p.session, p.stream, seq}]
						if revs[i].ID != want || !bytes.Equal(mevs[i].Data, revs[i].Data) || (mevs[i].Data == nil) != (revs[i].Data == nil) {
							t.Fatalf("op %d: After %v event %d: memory %s %x; Redis %s %x", op, p, i, mevs[i].ID, mevs[i].Data, revs[i].ID, revs[i].Data)
						}
					}
				case k < 96:
					mem.DropStream(session, stream)
					red.DropStream(session, stream)
					kept := issued[:0]
					for _, p := range issued {
						if p.session != session || p.stream != stream {
							kept = append(kept, p)
						}
					}
					issued = kept
				default:
					mem.DropSession(session)
					red.DropSession(session)
					kept := issued[:0]
					for _, p := range issued {
						if p.session != session {
							kept = append(kept, p)
						}
					}
					issued = kept
				}
			}
			for i := range 3 {
				checkAccounts(t, red, sessionOf(i))
			}
			if outcomes["lost"] == 0 || outcomes["events"] == 0 || outcomes["none"] == 0 {
				t.Errorf("the run did not cover every outcome of After: %v", outcomes)
			}
			t.Logf("outcomes of After: %v", outcomes)
		})
	}
}

// checkAccounts checks a session's counters against its stored events: per
// stream, f <= n, n-f events held under consecutive numbers, b their bytes;
// B the sum of the b.
func checkAccounts(t *testing.T, s *EventStore, session string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	meta, err := s.c.rdb.HGetAll(ctx, s.keys(session)[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.c.rdb.HGetAll(ctx, s.keys(session)[1]).Result()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	for k, v := range meta {
		if k == "E" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("session %s: counter %s = %q", session, k, v)
		}
		m[k] = n
	}
	var total int64
	held := 0
	for k, n := range m {
		stream, ok := strings.CutPrefix(k, "n:")
		if !ok {
			continue
		}
		f, b := m["f:"+stream], m["b:"+stream]
		if f > n {
			t.Errorf("session %s stream %s: first %d past next %d", session, stream, f, n)
		}
		var bytes int64
		for seq := f; seq < n; seq++ {
			v, ok := d[fmt.Sprintf("%s:%d", stream, seq)]
			if !ok {
				t.Errorf("session %s stream %s: event %d of %d..%d missing", session, stream, seq, f, n-1)
				continue
			}
			bytes += int64(len(v) - 1)
			held++
		}
		if bytes != b {
			t.Errorf("session %s stream %s: counts %d bytes, holds %d", session, stream, b, bytes)
		}
		total += b
	}
	if held != len(d) {
		t.Errorf("session %s: %d events stored, %d accounted for", session, len(d), held)
	}
	if len(m) > 0 && m["B"] != total {
		t.Errorf("session %s: counts %d bytes, its streams %d", session, m["B"], total)
	}
}

// A stream longer than the scripts' batches of 1000 fields is read and
// dropped whole.
func TestEventStoreLongStream(t *testing.T) {
	const n = 2500
	s, _ := newStore(t, WithLimits(Limits{MaxEventsPerStream: n}))
	first := mustAppend(t, s, "s", "p", nil)
	for i := 1; i < n; i++ {
		mustAppend(t, s, "s", "p", []byte(fmt.Sprint(i)))
	}
	_, evs, err := s.After("s", first)
	if err != nil || len(evs) != n-1 || string(evs[n-2].Data) != fmt.Sprint(n-1) {
		t.Fatalf("After(first) = %d events, %v", len(evs), err)
	}
	checkAccounts(t, s, "s")
	mustAppend(t, s, "s", "q", []byte("other stream"))
	s.DropStream("s", "p")
	if got := do(t, s.c, "HLEN", s.keys("s")[1]).Val(); got != int64(1) {
		t.Fatalf("%v events left after DropStream, want the other stream's 1", got)
	}
	checkAccounts(t, s, "s")
}
