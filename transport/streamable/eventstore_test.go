package streamable

import (
	"errors"
	"fmt"
	"testing"
)

func TestMemoryEventStore(t *testing.T) {
	s := NewMemoryEventStore(WithLimits(Limits{MaxEventsPerStream: 3, MaxEventBytesPerSession: 10}))
	var ids []string
	for i := range 3 {
		id, err := s.Append("s1", "p1", []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := s.Append("s2", "p1", []byte("other")); err != nil {
		t.Fatal(err)
	}
	stream, evs, err := s.After("s1", ids[0])
	if err != nil || stream != "p1" || len(evs) != 2 || string(evs[0].Data) != "1" || evs[1].ID != ids[2] {
		t.Fatalf("After(first) = %q %v %v", stream, evs, err)
	}
	// Another session's streams are its own: s2's p1 holds one event only.
	if _, evs, err := s.After("s2", ids[0]); err != nil || len(evs) != 0 {
		t.Fatalf("session s2 after %s: %v %v", ids[0], evs, err)
	}
	if _, _, err := s.After("s1", "nope"); !errors.Is(err, ErrUnknownEvent) {
		t.Fatalf("bad id: %v", err)
	}
	if _, _, err := s.After("s1", "p1_99"); !errors.Is(err, ErrUnknownEvent) {
		t.Fatalf("future id: %v", err)
	}

	// A fourth event evicts the first; resuming after it would leave a gap.
	if _, err := s.Append("s1", "p1", []byte("3")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.After("s1", ids[0]); err != nil {
		t.Fatalf("after id 0 the next event (1) is still stored: %v", err)
	}
	if _, err := s.Append("s1", "p1", []byte("4")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.After("s1", ids[0]); !errors.Is(err, ErrEventsLost) {
		t.Fatalf("after eviction: %v, want ErrEventsLost", err)
	}

	// The byte bound evicts across streams.
	big := NewMemoryEventStore(WithLimits(Limits{MaxEventBytesPerSession: 8}))
	a, _ := big.Append("s", "a", []byte("12345"))
	big.Append("s", "b", []byte("12345"))
	if big.Len() != 1 {
		t.Fatalf("byte bound: %d events kept, want 1", big.Len())
	}
	if _, _, err := big.After("s", a); err != nil {
		// a's only event is gone but it was the last one: nothing after it is lost.
		t.Fatalf("after evicted last event: %v", err)
	}

	s.DropStream("s1", "p1")
	if _, _, err := s.After("s1", ids[2]); !errors.Is(err, ErrUnknownEvent) {
		t.Fatalf("after DropStream: %v", err)
	}
	s.DropSession("s2")
	if s.Len() != 0 {
		t.Fatalf("%d events left", s.Len())
	}
	if _, err := s.Append("s1", "bad_stream", nil); err == nil {
		t.Fatal("stream id with the separator accepted")
	}
}

// TestMemoryEventStoreMaxBytes: the global bound holds the event data of
// every session together, evicting the oldest events first whichever
// session they belong to; a resume from before an evicted event gets
// ErrEventsLost, and Len and Bytes count what is held.
func TestMemoryEventStoreMaxBytes(t *testing.T) {
	s := NewMemoryEventStore(WithLimits(Limits{MaxEventBytes: 10}))
	a0, _ := s.Append("a", "p1", nil) // a priming event: no data
	a1, _ := s.Append("a", "p1", []byte("aaaa"))
	b0, _ := s.Append("b", "p1", []byte("bbbb"))
	if s.Len() != 3 || s.Bytes() != 8 {
		t.Fatalf("held %d events, %d bytes; want 3, 8", s.Len(), s.Bytes())
	}
	// 8 + 4 > 10: the oldest events go, a's priming event and its "aaaa",
	// though session c appended last.
	c0, _ := s.Append("c", "p1", []byte("cccc"))
	if s.Len() != 2 || s.Bytes() != 8 {
		t.Fatalf("held %d events, %d bytes; want 2, 8", s.Len(), s.Bytes())
	}
	if _, _, err := s.After("a", a0); !errors.Is(err, ErrEventsLost) {
		t.Fatalf("resume of a after its evicted event: %v, want ErrEventsLost", err)
	}
	if _, evs, err := s.After("a", a1); err != nil || len(evs) != 0 {
		// Nothing came after a1: nothing is lost.
		t.Fatalf("resume of a after its last event: %v %v", evs, err)
	}
	if _, evs, err := s.After("b", b0); err != nil || len(evs) != 0 {
		t.Fatalf("resume of b: %v %v", evs, err)
	}
	// Dropping frees room without evicting anything else.
	s.DropSession("b")
	if _, err := s.Append("c", "p1", []byte("cc")); err != nil {
		t.Fatal(err)
	}
	if _, evs, err := s.After("c", c0); err != nil || len(evs) != 1 || string(evs[0].Data) != "cc" {
		t.Fatalf("resume of c: %v %v", evs, err)
	}
	if s.Len() != 2 || s.Bytes() != 6 {
		t.Fatalf("held %d events, %d bytes; want 2, 6", s.Len(), s.Bytes())
	}
	// One event past the bound on its own is evicted at once.
	d0, _ := s.Append("d", "p1", nil)
	if _, err := s.Append("d", "p1", make([]byte, 11)); err != nil {
		t.Fatal(err)
	}
	if s.Bytes() > 10 {
		t.Fatalf("held %d bytes, past the bound of 10", s.Bytes())
	}
	if _, _, err := s.After("d", d0); !errors.Is(err, ErrEventsLost) {
		t.Fatalf("resume before an oversized event: %v, want ErrEventsLost", err)
	}
}

// TestMemoryEventStoreAgeOrderStaysSmall: events that come and go behind
// one old event that stays do not pile up in the store's age order.
func TestMemoryEventStoreAgeOrderStaysSmall(t *testing.T) {
	s := NewMemoryEventStore()
	if _, err := s.Append("old", "g", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	for i := range 100_000 {
		stream := fmt.Sprintf("p%d", i)
		if _, err := s.Append("busy", stream, []byte("x")); err != nil {
			t.Fatal(err)
		}
		s.DropStream("busy", stream)
	}
	s.mu.Lock()
	n := len(s.age)
	s.mu.Unlock()
	if s.Len() != 1 || n > 2*s.Len()+64 {
		t.Fatalf("%d events held, age order of %d entries", s.Len(), n)
	}
}
