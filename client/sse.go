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

// readLine reads one line ending in "\n", "\r\n" or "\r"-less EOF, bounded
// by the event limit so a stream without newlines cannot exhaust memory.
func (s *sseReader) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(buf)+len(chunk) > s.maxEvent+16 {
			return nil, &errSSETooLarge{s.maxEvent}
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			buf = buf[:len(buf)-1]
			return bytes.TrimSuffix(buf, []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(buf) > 0 {
				return nil, io.EOF // an unterminated line ends an unterminated event
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}
