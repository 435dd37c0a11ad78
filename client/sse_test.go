package client

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// The event-stream standard ends a line with "\r\n", "\n" or a lone "\r";
// all three, mixed, must give the same events.
func TestSSELineEndings(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"LF", "data: a\ndata: b\n\ndata: c\n\n"},
		{"CRLF", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"},
		{"CR", "data: a\rdata: b\r\rdata: c\r\r"},
		{"mixed", "data: a\rdata: b\r\n\ndata: c\n\r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tc.in), 1<<10)
			var got []string
			for {
				ev, err := r.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(ev.Data))
			}
			if strings.Join(got, "|") != "a\nb|c" {
				t.Fatalf("events %q, want [\"a\\nb\" \"c\"]", got)
			}
		})
	}
}
