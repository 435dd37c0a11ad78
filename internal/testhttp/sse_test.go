package testhttp_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testhttp"
)

// Events come back with their id, retry and joined data; comments and
// blank runs are skipped, and an event cut off by the end is not returned.
func TestSSEReader(t *testing.T) {
	r := testhttp.NewSSEReader(strings.NewReader(": hello\n\nid: 1\nretry: 500\ndata:\n\n\n\nid: 2\ndata: a\ndata: b\n\ndata: cut"))
	want := []testhttp.SSEEvent{{ID: "1", Retry: "500"}, {ID: "2", Data: "ab"}}
	for i, w := range want {
		if e, ok := r.Next(); !ok || e != w {
			t.Fatalf("event %d: %+v, %v; want %+v", i, e, ok, w)
		}
	}
	if e, ok := r.Next(); ok {
		t.Fatalf("an event after the end: %+v", e)
	}
}
