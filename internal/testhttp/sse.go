package testhttp

import (
	"bufio"
	"io"
	"strings"
)

// SSEEvent is one server-sent event as a test looks at it: its id, its
// retry field as sent, and its data lines joined.
type SSEEvent struct {
	ID    string
	Retry string
	Data  string
}

// SSEReader reads the events of a text/event-stream body as they arrive,
// for tests of what a Streamable HTTP endpoint streams. Lines up to 1 MiB
// are read.
type SSEReader struct {
	sc *bufio.Scanner
}

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &SSEReader{sc: sc}
}

// Next returns the next event, skipping comments and empty events; ok is
// false when the stream ends (or cannot be read) before another event.
func (s *SSEReader) Next() (e SSEEvent, ok bool) {
	seen := false
	for s.sc.Scan() {
		line := s.sc.Text()
		if line == "" {
			if seen {
				return e, true
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		seen = true
		switch k {
		case "id":
			e.ID = v
		case "retry":
			e.Retry = v
		case "data":
			e.Data += v
		}
	}
	return e, false
}
