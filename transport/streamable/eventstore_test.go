package streamable

import (
	"errors"
	"fmt"
	"testing"
)

func TestMemoryEventStore(t *testing.T) {
	s := NewMemoryEventStore(WithMaxEventsPerStream(3), WithMaxBytesPerSession(10))
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
	big := NewMemoryEventStore(WithMaxBytesPerSession(8))
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
