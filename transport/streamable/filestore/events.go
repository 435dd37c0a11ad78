package filestore

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/toolwire/toolwire/transport/streamable"
)

// EventStore wraps the event store (in memory) of an endpoint whose
// sessions outlive the process, for what a restart does to their
// streams. Its event ids carry the process's epoch, drawn at start:
//
//   - an id from before a restart is never read as a position in a
//     stream of this process (a POST stream's id is reused from 1 by a
//     resumed session), so resuming a POST stream from one gets 400 (its
//     request ended with the process) rather than another request's events;
//   - resuming the session's GET stream from one opens that stream again,
//     with nothing to replay: what the process sent before it stopped
//     either reached the client or is lost, as with no event store at
//     all. A client keeps its GET stream, and with it its session (the Go
//     SDK's client ends a session whose GET stream cannot be resumed).
type EventStore struct {
	inner streamable.EventStore
	epoch string
}

var _ streamable.EventStore = (*EventStore)(nil)

// standaloneStream is the handler's name for a session's GET stream. The
// handler does not export it; TestSessionSurvivesRestart resumes a GET
// stream across a restart and fails should it change.
const standaloneStream = "g"

// epochLen is the hex digits of an epoch.
const epochLen = 16

// NewEventStore wraps inner with an epoch of its own.
func NewEventStore(inner streamable.EventStore) *EventStore {
	return &EventStore{inner: inner, epoch: fmt.Sprintf("%0*x", epochLen, rand.Uint64())}
}

// Event ids have the form "<stream>_<epoch>.<inner id>"; stream ids never
// hold the separator (the stores that parse ids need that too).

func (s *EventStore) wrap(stream, id string) string {
	return stream + "_" + s.epoch + "." + id
}

// parse splits an id; ok false for one not of that form.
func parse(id string) (stream, epoch, inner string, ok bool) {
	stream, rest, ok := strings.Cut(id, "_")
	if !ok || stream == "" || len(rest) < epochLen+2 || rest[epochLen] != '.' {
		return "", "", "", false
	}
	return stream, rest[:epochLen], rest[epochLen+1:], true
}

// Append implements streamable.EventStore.
func (s *EventStore) Append(session, stream string, data []byte) (string, error) {
	if strings.Contains(stream, "_") {
		return "", fmt.Errorf("filestore: stream id %q holds the separator _", stream)
	}
	id, err := s.inner.Append(session, stream, data)
	if err != nil {
		return "", err
	}
	return s.wrap(stream, id), nil
}

// After implements streamable.EventStore.
func (s *EventStore) After(session, id string) (string, []streamable.Event, error) {
	stream, epoch, inner, ok := parse(id)
	switch {
	case !ok:
		return "", nil, streamable.ErrUnknownEvent
	case epoch != s.epoch && stream == standaloneStream:
		return standaloneStream, nil, nil
	case epoch != s.epoch:
		return "", nil, streamable.ErrUnknownEvent
	}
	got, events, err := s.inner.After(session, inner)
	if err != nil {
		return "", nil, err
	}
	if got != stream {
		return "", nil, streamable.ErrUnknownEvent // not an id this store made
	}
	for i := range events {
		events[i].ID = s.wrap(stream, events[i].ID)
	}
	return stream, events, nil
}

// DropStream implements streamable.EventStore.
func (s *EventStore) DropStream(session, stream string) { s.inner.DropStream(session, stream) }

// DropSession implements streamable.EventStore.
func (s *EventStore) DropSession(session string) { s.inner.DropSession(session) }
