package filestore

import (
	"errors"
	"testing"

	"github.com/toolwire/toolwire/transport/streamable"
)

// TestEventStoreEpochs: within one process ids resume their stream as the
// wrapped store does; after a restart (a new EventStore) an id of a POST
// stream is unknown even where the new process has a stream of the same
// name, and an id of the GET stream resumes it with nothing to replay.
func TestEventStoreEpochs(t *testing.T) {
	before := NewEventStore(streamable.NewMemoryEventStore())
	p1, err := before.Append("s", "p1", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := before.Append("s", "p1", []byte("two"))
	g, _ := before.Append("s", standaloneStream, nil)
	stream, events, err := before.After("s", p1)
	if err != nil || stream != "p1" || len(events) != 1 || events[0].ID != p2 || string(events[0].Data) != "two" {
		t.Fatalf("After within the process: %q %+v %v", stream, events, err)
	}
	if _, _, err := before.After("other", p1); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Errorf("an id of another session: %v", err)
	}

	after := NewEventStore(streamable.NewMemoryEventStore())
	after.Append("s", "p1", []byte("a new request's event"))
	after.Append("s", "p1", []byte("and another"))
	if stream, events, err := after.After("s", p1); !errors.Is(err, streamable.ErrUnknownEvent) {
		t.Errorf("a POST stream's id of before the restart: %q %+v %v, want ErrUnknownEvent", stream, events, err)
	}
	if stream, events, err := after.After("s", g); err != nil || stream != standaloneStream || len(events) != 0 {
		t.Errorf("the GET stream's id of before the restart: %q %+v %v, want the stream with nothing to replay", stream, events, err)
	}
	for _, bad := range []string{"", "g", "g_0", "p1_3", "_" + before.epoch + ".p1_0", "g_" + before.epoch[1:] + ".x", "g_" + before.epoch + "x"} {
		if _, _, err := after.After("s", bad); !errors.Is(err, streamable.ErrUnknownEvent) {
			t.Errorf("After(%q): %v, want ErrUnknownEvent", bad, err)
		}
	}
	if _, err := after.Append("s", "a_b", nil); err == nil {
		t.Error("a stream id holding the separator was stored")
	}
}
