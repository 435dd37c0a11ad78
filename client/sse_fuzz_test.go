package client

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzSSEReader feeds arbitrary bytes to the SSE parser. Invariants: no
// panic; every event's data is within the limit; parsing stops with io.EOF,
// or a too-large error only when a line or event exceeds the limit; and a
// stream written from the events read is read back as the same events.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"id: 1\nretry: 0\ndata: \n\n",
		": keep-alive\n\ndata: a\ndata: b\n\n",
		"data:x\r\n\r\n", "id: a\x00b\ndata: 1\n\n", "retry: 99999999999\ndata: 1\n\n",
		"data: unterminated", "\n\n\n", "event: other\ndata: skip\n\n",
		"data: \r\r\n", "data: a\rdata: b\r\r", "data: c\r\n\r\n\n", "data: " + strings.Repeat("x", 300) + "\n\n",
	} {
		f.Add([]byte(s))
	}
	const limit = 256
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newSSEReader(bytes.NewReader(in), limit)
		var events []*sseEvent
		for range 10000 {
			ev, err := r.next()
			if err != nil {
				var tl *errSSETooLarge
				if !errors.Is(err, io.EOF) && !errors.As(err, &tl) {
					t.Fatalf("unexpected error %v", err)
				}
				if errors.As(err, &tl) && len(in) <= limit {
					t.Fatalf("too-large error on %d bytes of input", len(in))
				}
				break
			}
			if len(ev.Data) > limit {
				t.Fatalf("event data of %d bytes passed the %d-byte limit", len(ev.Data), limit)
			}
			events = append(events, ev)
		}
		// Write the events back as a well-formed stream and read them again.
		var out bytes.Buffer
		for _, ev := range events {
			if ev.Event != "" && !strings.ContainsAny(ev.Event, "\r\n") {
				out.WriteString("event: " + ev.Event + "\n")
			}
			for _, line := range bytes.Split(ev.Data, []byte("\n")) {
				out.WriteString("data: ")
				out.Write(line)
				out.WriteString("\n")
			}
			out.WriteString("\n")
		}
		again := newSSEReader(&out, limit*4)
		for i, ev := range events {
			got, err := again.next()
			if err != nil {
				t.Fatalf("event %d of %d not read back: %v (stream %q)", i, len(events), err, out.String())
			}
			if !bytes.Equal(got.Data, ev.Data) {
				t.Fatalf("event %d: data %q read back as %q", i, ev.Data, got.Data)
			}
		}
	})
}
