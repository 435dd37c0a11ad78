package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// sseEvent is one dispatched Server-Sent Event.
type sseEvent struct {
	ID    string // "" when the event set none
	HasID bool
	Event string // "" means "message"
	Data  []byte
}

// sseReader parses a text/event-stream body (WHATWG HTML §9.2): any number
// of events, each with data lines joined by "\n"; comments skipped; "id" and
// "retry" remembered across events. maxEvent bounds one event's data.
type sseReader struct {
	r        *bufio.Reader
	maxEvent int
	// line is the buffer readLine copies each line into, reused from line
	// to line while it is small (maxKeptLine).
	line     []byte
	lastID   string // the stream's last event id (persists across events)
	retry    time.Duration
	hasRetry bool
	afterCR  bool // the last line ended in "\r": a "\n" right after it belongs to it
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), maxEvent: maxEvent}
}

// errSSETooLarge reports an event over the size limit.
type errSSETooLarge struct{ limit int }

func (e *errSSETooLarge) Error() string {
	return fmt.Sprintf("SSE event larger than the %d-byte limit", e.limit)
}

// maxKeptLine bounds the line buffer an sseReader keeps between lines; a
// longer line's buffer is dropped once the line is read.
const maxKeptLine = 64 << 10

// grow returns b with room for n more bytes: its capacity at most doubles
// (from 512), and goes straight to limit once doubling would pass three
// quarters of it, rather than stopping just short of it and growing again;
// never past limit unless n needs more. A buffer grown in steps up to limit
// has so allocated at most 2.5 times limit in all.
func grow(b []byte, n, limit int) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	c := max(2*cap(b), 512)
	if c > limit-limit/4 {
		c = limit
	}
	nb := make([]byte, len(b), max(c, need))
	copy(nb, b)
	return nb
}

// next returns the next event with data, io.EOF at the end of the stream.
// Events without data (such as a priming event that only sets id and retry)
// update the stream state and are skipped. An event's data is a buffer of
// its own (the message decoded from it may keep parts of it).
func (s *sseReader) next() (*sseEvent, error) {
	var (
		data    []byte
		hasData bool
		event   string
		sawID   bool
	)
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				// An unterminated last event is discarded, as the standard says.
				return nil, io.EOF
			}
			return nil, err
		}
		if len(line) == 0 {
			if !hasData {
				event, sawID = "", false
				continue
			}
			ev := &sseEvent{ID: s.lastID, HasID: sawID, Event: event, Data: bytes.TrimSuffix(data, []byte("\n"))}
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			if len(data)+len(value) > s.maxEvent {
				return nil, &errSSETooLarge{s.maxEvent}
			}
			if data == nil {
				data = make([]byte, 0, len(value)+1) // one line, the usual event: allocated once
			}
			data = grow(data, len(value)+1, s.maxEvent+1)
			data = append(append(data, value...), '\n')
			hasData = true
		case "event":
			event = string(value)
		case "id":
			if !bytes.ContainsRune(value, 0) {
				s.lastID, sawID = string(value), true
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				s.retry, s.hasRetry = time.Duration(ms)*time.Millisecond, true
			}
		}
	}
}

// readLine reads one line, ended by "\r\n", "\n" or "\r" as the standard
// allows, bounded by the event limit so a stream without line ends cannot
// exhaust memory. A lone "\r" ends the line at once; the "\n" that may
// follow is dropped when the next line is read, so no read waits on it.
// The line is valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	if cap(s.line) > maxKeptLine {
		s.line = nil // a long line's buffer is not kept
	}
	buf := s.line[:0]
	limit := s.maxEvent + 16
	for {
		b, err := s.r.Peek(max(1, s.r.Buffered()))
		if len(b) == 0 {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF // an unterminated line ends an unterminated event
			}
			return nil, err
		}
		if s.afterCR {
			s.afterCR = false
			if b[0] == '\n' {
				s.r.Discard(1)
				continue
			}
		}
		end := bytes.IndexByte(b, '\n')
		if end < 0 {
			end = len(b)
		}
		if cr := bytes.IndexByte(b[:end], '\r'); cr >= 0 {
			end = cr
		}
		if len(buf)+end > limit {
			return nil, &errSSETooLarge{s.maxEvent}
		}
		if end == len(b) { // no line end buffered yet
			buf = append(grow(buf, len(b), limit), b...)
			s.line = buf
			s.r.Discard(len(b))
			continue
		}
		line := append(grow(buf, end, limit), b[:end]...)
		s.line = line
		s.afterCR = b[end] == '\r'
		s.r.Discard(end + 1)
		return line, nil
	}
}
