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

// next returns the next event with data, io.EOF at the end of the stream.
// Events without data (such as a priming event that only sets id and retry)
// update the stream state and are skipped.
func (s *sseReader) next() (*sseEvent, error) {
	var (
		data    bytes.Buffer
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
			ev := &sseEvent{ID: s.lastID, HasID: sawID, Event: event, Data: bytes.TrimSuffix(data.Bytes(), []byte("\n"))}
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
			if data.Len()+len(value) > s.maxEvent {
				return nil, &errSSETooLarge{s.maxEvent}
			}
			data.Write(value)
			data.WriteByte('\n')
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
func (s *sseReader) readLine() ([]byte, error) {
	var buf []byte
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
		if len(buf)+end > s.maxEvent+16 {
			return nil, &errSSETooLarge{s.maxEvent}
		}
		if end == len(b) { // no line end buffered yet
			buf = append(buf, b...)
			s.r.Discard(len(b))
			continue
		}
		line := b[:end]
		if buf != nil {
			line = append(buf, line...)
		} else {
			line = append([]byte(nil), line...)
		}
		s.afterCR = b[end] == '\r'
		s.r.Discard(end + 1)
		return line, nil
	}
}
