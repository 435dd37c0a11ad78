package streamable

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/internal/limits"
)

// Errors an EventStore returns from After.
var (
	// ErrUnknownEvent: the event id names no stream of this session.
	ErrUnknownEvent = errors.New("streamable: unknown event id")
	// ErrEventsLost: events after the id were evicted, so the stream cannot
	// be replayed without a gap.
	ErrEventsLost = errors.New("streamable: events after this id are no longer stored")
)

// Event is one stored SSE event. Data is nil for a priming event, which only
// marks a position in its stream.
type Event struct {
	ID   string
	Data []byte
}

// EventStore keeps the events of 2025-era SSE streams so that a client whose
// stream dropped can resume it with Last-Event-ID. Implementations must be
// safe for concurrent use and should bound what they keep.
type EventStore interface {
	// Append records data as the next event of a session's stream and
	// returns the new event's id.
	Append(session, stream string, data []byte) (id string, err error)
	// After returns the stream that event id belongs to and the events of
	// that stream stored after it, oldest first.
	After(session, id string) (stream string, events []Event, err error)
	// DropStream forgets one stream (its response was delivered).
	DropStream(session, stream string)
	// DropSession forgets every stream of a session.
	DropSession(session string)
}

// Defaults of the event store's Limits (MaxEventsPerStream,
// MaxEventBytesPerSession, MaxEventBytes).
const (
	DefaultMaxEventsPerStream = 1024
	DefaultMaxBytesPerSession = 8 << 20 // 8 MiB
	// DefaultMaxBytes is 64 MiB of event data for the whole store: eight
	// sessions at their full DefaultMaxBytesPerSession, or thousands with
	// the small events (progress, list changes) streams mostly carry, so that
	// many sessions each within its own bound cannot add up to an unbounded
	// heap.
	DefaultMaxBytes        = 64 << 20
	memoryEventIDSeparator = "_"
)

// MemoryEventStoreOption configures NewMemoryEventStore. Options apply in
// order, so a later one overrides an earlier one; nil options are ignored.
type MemoryEventStoreOption interface{ applyMemoryEventStore(*memoryLimits) }

type memoryLimits struct {
	maxEventsPerStream int
	maxBytesPerSession int
	maxBytes           int
}

// MemoryEventStore is a bounded in-memory EventStore. Event ids have the
// form "<stream>_<seq>". It bounds the events per stream, the event data
// per session and the event data of all sessions together; what a bound
// evicts first is the oldest event in its scope.
type MemoryEventStore struct {
	lim      memoryLimits
	mu       sync.Mutex
	sessions map[string]*memSession
	bytes    int         // event data held, all sessions
	live     int         // events held
	age      []*memEvent // events in the order appended; removed ones linger until skipped or compacted
}

type memSession struct {
	streams map[string]*memStream
	bytes   int
}

type memStream struct {
	ms     *memSession
	next   uint64      // sequence number of the next event
	events []*memEvent // oldest first; removals only ever take the oldest, or all
	bytes  int
}

// memEvent is one stored event, both in its stream and in the store's age
// order.
type memEvent struct {
	seq  uint64
	data []byte
	st   *memStream // nil once removed
}

// NewMemoryEventStore returns an empty store bounded by opts
// (Limits.MaxEventsPerStream, Limits.MaxEventBytesPerSession, Limits.MaxEventBytes).
func NewMemoryEventStore(opts ...MemoryEventStoreOption) *MemoryEventStore {
	var l memoryLimits
	for _, o := range opts {
		if o != nil {
			o.applyMemoryEventStore(&l)
		}
	}
	limits.Default(&l.maxEventsPerStream, DefaultMaxEventsPerStream)
	limits.Default(&l.maxBytesPerSession, DefaultMaxBytesPerSession)
	limits.Default(&l.maxBytes, DefaultMaxBytes)
	return &MemoryEventStore{lim: l, sessions: map[string]*memSession{}}
}

// Append implements EventStore.
func (s *MemoryEventStore) Append(session, stream string, data []byte) (string, error) {
	if strings.Contains(stream, memoryEventIDSeparator) {
		return "", errors.New("streamable: stream id must not contain " + strconv.Quote(memoryEventIDSeparator))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.sessions[session]
	if ms == nil {
		ms = &memSession{streams: map[string]*memStream{}}
		s.sessions[session] = ms
	}
	st := ms.streams[stream]
	if st == nil {
		st = &memStream{ms: ms}
		ms.streams[stream] = st
	}
	e := &memEvent{seq: st.next, data: data, st: st}
	st.next++
	st.events = append(st.events, e)
	st.bytes += len(data)
	ms.bytes += len(data)
	s.bytes += len(data)
	s.live++
	s.age = append(s.age, e)
	for len(st.events) > s.lim.maxEventsPerStream {
		s.removeOldest(st)
	}
	for ms.bytes > s.lim.maxBytesPerSession && s.evictInSession(ms) {
	}
	for s.bytes > s.lim.maxBytes && s.evictOldest() {
	}
	s.compact()
	return stream + memoryEventIDSeparator + strconv.FormatUint(e.seq, 10), nil
}

// removeOldest removes the first event of st.
func (s *MemoryEventStore) removeOldest(st *memStream) {
	e := st.events[0]
	st.events[0] = nil
	st.events = st.events[1:]
	s.forget(e)
}

// forget takes a removed event out of the counts.
func (s *MemoryEventStore) forget(e *memEvent) {
	n := len(e.data)
	e.st.bytes -= n
	e.st.ms.bytes -= n
	s.bytes -= n
	s.live--
	e.st, e.data = nil, nil
}

// evictInSession drops the first event of the session's stream holding the
// most bytes.
func (s *MemoryEventStore) evictInSession(ms *memSession) bool {
	var victim *memStream
	for _, st := range ms.streams {
		if len(st.events) > 0 && (victim == nil || st.bytes > victim.bytes) {
			victim = st
		}
	}
	if victim == nil {
		return false
	}
	s.removeOldest(victim)
	return true
}

// evictOldest drops the oldest event of the store. Streams append in the
// store's order and remove only their oldest events, so the oldest event
// still held is the first of its stream.
func (s *MemoryEventStore) evictOldest() bool {
	for len(s.age) > 0 && s.age[0].st == nil {
		s.age[0] = nil
		s.age = s.age[1:]
	}
	if len(s.age) == 0 {
		return false
	}
	st := s.age[0].st
	s.age[0] = nil
	s.age = s.age[1:]
	s.removeOldest(st)
	return true
}

// compact drops removed events from the age order once they outnumber the
// events held, so that the order costs O(events held) however many events
// come and go behind an old one.
func (s *MemoryEventStore) compact() {
	if len(s.age) <= 2*s.live+64 {
		return
	}
	kept := make([]*memEvent, 0, 2*s.live+1)
	for _, e := range s.age {
		if e.st != nil {
			kept = append(kept, e)
		}
	}
	s.age = kept
}

// After implements EventStore.
func (s *MemoryEventStore) After(session, id string) (string, []Event, error) {
	i := strings.LastIndex(id, memoryEventIDSeparator)
	if i < 0 {
		return "", nil, ErrUnknownEvent
	}
	stream := id[:i]
	seq, err := strconv.ParseUint(id[i+1:], 10, 64)
	if err != nil {
		return "", nil, ErrUnknownEvent
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.sessions[session]
	if ms == nil {
		return "", nil, ErrUnknownEvent
	}
	st := ms.streams[stream]
	if st == nil || seq >= st.next {
		return "", nil, ErrUnknownEvent
	}
	if seq+1 < st.next && (len(st.events) == 0 || st.events[0].seq > seq+1) {
		return "", nil, ErrEventsLost
	}
	var out []Event
	for _, e := range st.events {
		if e.seq > seq {
			out = append(out, Event{ID: stream + memoryEventIDSeparator + strconv.FormatUint(e.seq, 10), Data: e.data})
		}
	}
	return stream, out, nil
}

// DropStream implements EventStore.
func (s *MemoryEventStore) DropStream(session, stream string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.sessions[session]
	if ms == nil {
		return
	}
	if st := ms.streams[stream]; st != nil {
		s.dropStreamLocked(ms, stream, st)
	}
	s.compact()
}

func (s *MemoryEventStore) dropStreamLocked(ms *memSession, name string, st *memStream) {
	for _, e := range st.events {
		s.forget(e)
	}
	st.events = nil
	delete(ms.streams, name)
}

// DropSession implements EventStore.
func (s *MemoryEventStore) DropSession(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.sessions[session]
	if ms == nil {
		return
	}
	for name, st := range ms.streams {
		s.dropStreamLocked(ms, name, st)
	}
	delete(s.sessions, session)
	s.compact()
}

// Len returns how many events the store holds, for tests and metrics.
func (s *MemoryEventStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// Bytes returns how many bytes of event data the store holds, every session
// together: the figure Limits.MaxEventBytes bounds.
func (s *MemoryEventStore) Bytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}
