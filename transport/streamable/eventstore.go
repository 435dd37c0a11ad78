package streamable

import (
	"errors"
	"strconv"
	"strings"
	"sync"
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

// Defaults for the MemoryEventStoreOption constructors.
const (
	DefaultMaxEventsPerStream = 1024
	DefaultMaxBytesPerSession = 8 << 20 // 8 MiB
	memoryEventIDSeparator    = "_"
)

// MemoryEventStoreOption configures NewMemoryEventStore. Options apply in
// order, so a later one overrides an earlier one; nil options are ignored.
type MemoryEventStoreOption interface{ applyMemoryEventStore(*memoryLimits) }

type memoryLimits struct {
	maxEventsPerStream int
	maxBytesPerSession int
}

type memoryEventStoreOption func(*memoryLimits)

func (f memoryEventStoreOption) applyMemoryEventStore(l *memoryLimits) { f(l) }

// WithMaxEventsPerStream bounds the events kept per stream (default 1024);
// past it the stream's oldest events are evicted, and a client resuming
// from before them gets 400 (ErrEventsLost). Values below 1 mean the
// default.
func WithMaxEventsPerStream(n int) MemoryEventStoreOption {
	return memoryEventStoreOption(func(l *memoryLimits) { l.maxEventsPerStream = n })
}

// WithMaxBytesPerSession bounds the event data kept per session (default
// 8 MiB); past it the oldest events of the session's largest stream are
// evicted. Values below 1 mean the default.
func WithMaxBytesPerSession(n int) MemoryEventStoreOption {
	return memoryEventStoreOption(func(l *memoryLimits) { l.maxBytesPerSession = n })
}

// MemoryEventStore is a bounded in-memory EventStore. Event ids have the
// form "<stream>_<seq>".
type MemoryEventStore struct {
	lim      memoryLimits
	mu       sync.Mutex
	sessions map[string]*memSession
}

type memSession struct {
	streams map[string]*memStream
	bytes   int
}

type memStream struct {
	next   uint64 // sequence number of the next event
	events []storedEvent
}

type storedEvent struct {
	seq  uint64
	data []byte
}

// NewMemoryEventStore returns an empty store bounded by opts
// (WithMaxEventsPerStream, WithMaxBytesPerSession).
func NewMemoryEventStore(opts ...MemoryEventStoreOption) *MemoryEventStore {
	var l memoryLimits
	for _, o := range opts {
		if o != nil {
			o.applyMemoryEventStore(&l)
		}
	}
	if l.maxEventsPerStream <= 0 {
		l.maxEventsPerStream = DefaultMaxEventsPerStream
	}
	if l.maxBytesPerSession <= 0 {
		l.maxBytesPerSession = DefaultMaxBytesPerSession
	}
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
		st = &memStream{}
		ms.streams[stream] = st
	}
	seq := st.next
	st.next++
	st.events = append(st.events, storedEvent{seq: seq, data: data})
	ms.bytes += len(data)
	for len(st.events) > s.lim.maxEventsPerStream {
		ms.bytes -= len(st.events[0].data)
		st.events[0] = storedEvent{}
		st.events = st.events[1:]
	}
	for ms.bytes > s.lim.maxBytesPerSession && ms.evictOldest() {
	}
	return stream + memoryEventIDSeparator + strconv.FormatUint(seq, 10), nil
}

// evictOldest drops the first event of the stream holding the most bytes.
func (ms *memSession) evictOldest() bool {
	var victim *memStream
	most := -1
	for _, st := range ms.streams {
		n := 0
		for _, e := range st.events {
			n += len(e.data)
		}
		if len(st.events) > 0 && n > most {
			victim, most = st, n
		}
	}
	if victim == nil {
		return false
	}
	ms.bytes -= len(victim.events[0].data)
	victim.events[0] = storedEvent{}
	victim.events = victim.events[1:]
	return true
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
		for _, e := range st.events {
			ms.bytes -= len(e.data)
		}
		delete(ms.streams, stream)
	}
}

// DropSession implements EventStore.
func (s *MemoryEventStore) DropSession(session string) {
	s.mu.Lock()
	delete(s.sessions, session)
	s.mu.Unlock()
}

// Len returns how many events the store holds, for tests and metrics.
func (s *MemoryEventStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ms := range s.sessions {
		for _, st := range ms.streams {
			n += len(st.events)
		}
	}
	return n
}
