package streamable

import (
	"context"
	"net/http/httptest"
	"testing"
)

// TestBusMessageReadExactly: a message another replica published is read
// by the strict reader: one naming a member twice, or spelling one in
// another case, is dropped, not acted on as the reading a lenient decoder
// would take (here, ending the session).
func TestBusMessageReadExactly(t *testing.T) {
	bus := NewMemorySessionBus()
	f := newFixture(t)
	h := NewHandler(f.srv, WithSessionStore(NewMemorySessionStore()), WithEventStore(NewMemoryEventStore()), WithSessionBus(bus))
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	sid := initialize(t, ts.URL)
	ctx := context.Background()
	for _, msg := range []string{
		`{"from":"elsewhere","kind":"notification","kind":"end"}`,
		`{"from":"elsewhere","Kind":"end"}`,
		`{"from":"elsewhere","kind":"end","msg":{"a":1,"a":2}}`,
	} {
		if err := bus.Publish(ctx, sid, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if h.lookup(sid) == nil {
			t.Fatalf("the bus message %s ended the session", msg)
		}
	}
	// One every reader reads alike is acted on.
	if err := bus.Publish(ctx, sid, []byte(`{"from":"elsewhere","kind":"end"}`)); err != nil {
		t.Fatal(err)
	}
	if h.lookup(sid) != nil {
		t.Fatal("a valid end message did not end the session")
	}
}
