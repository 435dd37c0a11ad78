package streamable

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/internal/smallmap"
	"github.com/toolwire/toolwire/jsonrpc"
)

// standaloneStream is the id of a session's GET stream.
const standaloneStream = "g"

// legacySession is a 2025-era session: opened by initialize, named by
// Mcp-Session-Id, ended by DELETE or by idling past the TTL.
type legacySession struct {
	h     *Handler
	id    string
	owner string // auth.Principal.Key of whoever opened it; "" for anonymous
	sess  jsonrpc.Session

	mu         sync.Mutex
	prime      bool // the negotiated revision knows priming events (2025-11-25+)
	closed     bool
	used       atomic.Bool // a request named it since initialize
	next       int32       // POST streams opened, for their ids
	busy       int32       // requests running and connections attached
	inFlight   int32       // requests running, for WithMaxInFlightPerSession
	lastActive time.Time
	// The GET stream and the channel closed when the session ends are
	// made when first needed, and POST streams answered one at a time need
	// no map, so an idle session stays small (BENCHMARKS.md measures it).
	standalone *stream
	done       chan struct{}
	streams    smallmap.Map[string, *stream]
	retired    []string // streams answered live, kept for a late resume

	// What a SessionStore or a SessionBus needs, made on first use.
	shared *sharedSession
}

// sharedSession is the part of a session only replicas sharing it use.
type sharedSession struct {
	// With a SessionStore: the state revision of sess last stored or
	// applied, and the stored state that revision matches.
	stateRev uint64
	state    []byte
	syncMu   sync.Mutex // one store update at a time

	// With a SessionBus: the clients following, here, POST streams whose
	// requests run on another replica (sessionbus.go).
	followers map[string]map[*follower]struct{}
}

// sharedLocked returns the session's shared part, making it. ls.mu is held.
func (ls *legacySession) sharedLocked() *sharedSession {
	if ls.shared == nil {
		ls.shared = &sharedSession{}
	}
	return ls.shared
}

// getStandalone returns the GET stream, nil if none was ever needed.
func (ls *legacySession) getStandalone() *stream {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.standalone
}

// standaloneLocked returns the GET stream, making it. ls.mu is held.
func (ls *legacySession) standaloneLocked() *stream {
	if ls.standalone == nil {
		ls.standalone = ls.h.newStream(ls, standaloneStream, false)
	}
	return ls.standalone
}

// ended returns a channel closed when the session ends.
func (ls *legacySession) ended() <-chan struct{} {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.done == nil {
		ls.done = make(chan struct{})
		if ls.closed {
			close(ls.done)
		}
	}
	return ls.done
}

// Send implements jsonrpc.Sender for the messages of the session that
// belong to no request: they go out on the GET stream. A session whose
// client never opened one (here or, with a SessionBus, elsewhere) has no
// stream to carry them, and they are dropped, as on a GET stream not
// attached and never resumable.
func (ls *legacySession) Send(_ context.Context, m jsonrpc.Message) error {
	st := ls.getStandalone()
	if ls.h.bused() && (st == nil || !st.attached()) {
		// The GET stream, if any, is held elsewhere: pass the message
		// on (list changes each replica tells its clients itself).
		if !listChanged(m) {
			if b, err := jsonrpc.Encode(m); err == nil {
				ls.publish(busMessage{Kind: busOut, Msg: b})
			}
		}
		return nil
	}
	if st == nil {
		return nil
	}
	return st.send(m, false)
}

// applied records state as what the session's copy here matches.
func (ls *legacySession) applied(state []byte) {
	st, ok := ls.sess.(jsonrpc.StatefulSession)
	if !ok {
		return
	}
	ls.mu.Lock()
	sh := ls.sharedLocked()
	sh.state, sh.stateRev = state, st.StateRevision()
	ls.mu.Unlock()
}

// applyStored brings this replica's copy up to the stored state, when a
// request served elsewhere changed it.
func (ls *legacySession) applyStored(state []byte) {
	ls.mu.Lock()
	same := ls.shared != nil && bytes.Equal(state, ls.shared.state)
	ls.mu.Unlock()
	st, ok := ls.sess.(jsonrpc.StatefulSession)
	if same || !ok {
		return
	}
	if err := st.ApplySnapshot(state); err != nil {
		ls.h.o.logger.Warn("stored session state not applied", "session", ls.id, "error", err)
		return
	}
	ls.applied(state)
}

// syncState stores the session's state when a message served here changed
// it, so that every replica serves the session as its client left it.
func (ls *legacySession) syncState(ctx context.Context) {
	if !ls.h.shared() {
		return
	}
	st, ok := ls.sess.(jsonrpc.StatefulSession)
	if !ok {
		return
	}
	ls.mu.Lock()
	sh := ls.sharedLocked()
	ls.mu.Unlock()
	sh.syncMu.Lock()
	defer sh.syncMu.Unlock()
	rev := st.StateRevision()
	ls.mu.Lock()
	same := rev == sh.stateRev
	ls.mu.Unlock()
	if same {
		return
	}
	snap, err := st.Snapshot()
	if err != nil {
		return
	}
	if err := ls.h.o.sessionStore.Update(context.WithoutCancel(ctx), ls.id, snap, ls.h.o.sessionIdleTimeout); err != nil {
		if !errors.Is(err, ErrSessionNotFound) {
			ls.h.storeFailed("update", err)
		}
		return
	}
	ls.mu.Lock()
	sh.state, sh.stateRev = snap, rev
	ls.mu.Unlock()
}

// touch records activity.
func (ls *legacySession) touch() {
	ls.mu.Lock()
	ls.lastActive = ls.h.now()
	ls.mu.Unlock()
}

// beginCall counts a request against the session's in-flight limit; false
// when the session already has WithMaxInFlightPerSession requests running.
// A request counts until its handler returns, whether or not its client is
// still connected.
func (ls *legacySession) beginCall() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if int(ls.inFlight) >= ls.h.o.maxPerSession {
		return false
	}
	ls.inFlight++
	return true
}

// endCall releases a slot taken by beginCall.
func (ls *legacySession) endCall() {
	ls.mu.Lock()
	ls.inFlight--
	ls.mu.Unlock()
}

// release marks the end of a request or a connection.
func (ls *legacySession) release() {
	ls.mu.Lock()
	ls.busy--
	ls.lastActive = ls.h.now()
	ls.mu.Unlock()
}

// addStream opens the response stream of a POST; nil if the session ended.
func (ls *legacySession) addStream(c *conn, reqID jsonrpc.ID) *stream {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.closed {
		return nil
	}
	ls.next++
	st := ls.h.newStream(ls, "p"+strconv.Itoa(int(ls.next)), true)
	st.c = c
	st.reqID = reqID
	st.prime = ls.prime
	ls.streams.Put(st)
	ls.busy++
	ls.lastActive = ls.h.now()
	return st
}

// attachStandalone makes c the live standalone stream; nil if one is open.
func (ls *legacySession) attachStandalone(c *conn) *stream {
	ls.mu.Lock()
	st := ls.standaloneLocked()
	st.prime = ls.prime
	ls.busy++
	ls.lastActive = ls.h.now()
	ls.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.c != nil {
		ls.release()
		return nil
	}
	st.c = c
	if err := st.startLocked(); err != nil {
		st.detachLocked()
	}
	return st
}

// resume replays the stream an event belongs to after that event and, if the
// stream is still going, attaches c to it.
func (ls *legacySession) resume(c *conn, last string) (*stream, int, *jsonrpc.Error) {
	store := ls.h.o.eventStore
	streamID, _, err := store.After(ls.id, last)
	if err != nil {
		return nil, http.StatusBadRequest, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "cannot resume after event %q: %v", last, err)
	}
	ls.mu.Lock()
	st, _ := ls.streams.Get(streamID)
	if streamID == standaloneStream {
		st = ls.standaloneLocked()
	}
	if st != nil {
		ls.busy++
		ls.lastActive = ls.h.now()
	}
	ls.mu.Unlock()
	if st == nil && ls.h.bused() {
		return nil, followElsewhere, nil // its request runs, or ran, on another replica
	}
	if st == nil {
		return nil, http.StatusBadRequest, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "cannot resume after event %q: its stream has ended", last)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.c != nil {
		ls.release()
		return nil, http.StatusConflict, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "stream %q is already open on another connection", streamID)
	}
	// Read again under the stream's lock: nothing can be appended between
	// this replay and the attach below.
	_, events, err := store.After(ls.id, last)
	if err != nil {
		ls.release()
		return nil, http.StatusBadRequest, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "cannot resume after event %q: %v", last, err)
	}
	if err := c.startSSE(); err != nil {
		c.end()
		return st, 0, nil
	}
	for _, e := range events {
		if e.Data == nil {
			continue
		}
		if err := c.event(e.ID, 0, e.Data); err != nil {
			c.end()
			return st, 0, nil
		}
	}
	if st.finished {
		// The response was among the replayed events: the stream is done.
		c.end()
		st.dropLocked()
		return st, 0, nil
	}
	st.c = c
	return st, 0, nil
}

// endStandalone closes the live GET stream, if any (shutdown).
func (ls *legacySession) endStandalone() {
	st := ls.getStandalone()
	if st == nil {
		return
	}
	st.mu.Lock()
	st.detachLocked()
	st.mu.Unlock()
}

// append records an event unless the session has ended.
func (ls *legacySession) append(stream string, data []byte) (string, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.closed {
		return "", errSessionEnded
	}
	return ls.h.o.eventStore.Append(ls.id, stream, data)
}

var errSessionEnded = errors.New("streamable: session has ended")

// dropStream forgets a delivered POST stream.
func (ls *legacySession) dropStream(id string, stored bool) {
	if id == standaloneStream {
		return
	}
	ls.mu.Lock()
	ls.streams.Delete(id)
	closed := ls.closed
	ls.mu.Unlock()
	if !closed && stored {
		// Only a stream that stored events has any to forget: a reply sent
		// as plain JSON costs the event store nothing.
		ls.h.o.eventStore.DropStream(ls.id, id)
	}
}

// retainedStreams is how many answered streams a session keeps for clients
// that resume after a drop the server did not notice.
const retainedStreams = 16

// retire keeps an answered stream resumable for a while, forgetting the
// oldest one past retainedStreams.
func (ls *legacySession) retire(id string) {
	ls.mu.Lock()
	ls.retired = append(ls.retired, id)
	var old string
	if len(ls.retired) > retainedStreams {
		old = ls.retired[0]
		ls.retired = ls.retired[1:]
	}
	ls.mu.Unlock()
	if old != "" {
		ls.dropStream(old, true) // retired: its client got an event id
	}
}

// idleFor reports whether the session has been idle for longer than ttl,
// or than unused when no request has named it since initialize.
func (ls *legacySession) idleFor(now time.Time, ttl, unused time.Duration) bool {
	if !ls.used.Load() {
		ttl = min(ttl, unused)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.busy == 0 && now.Sub(ls.lastActive) > ttl
}

// close ends the session: requests are cancelled, streams closed, events
// forgotten.
func (ls *legacySession) close() { ls.closeLocal(true) }

// closeLocal ends this process's copy of the session; forget also drops
// its stored events, which a copy evicted while the session lives on in a
// SessionStore keeps for the replicas still serving it.
func (ls *legacySession) closeLocal(forget bool) {
	ls.mu.Lock()
	if ls.closed {
		ls.mu.Unlock()
		return
	}
	ls.closed = true
	streams := make([]*stream, 0, ls.streams.Len()+1)
	if ls.standalone != nil {
		streams = append(streams, ls.standalone)
	}
	for _, st := range ls.streams.All() {
		streams = append(streams, st)
	}
	ls.streams = smallmap.Map[string, *stream]{}
	done := ls.done
	ls.mu.Unlock()
	// Unanswered POSTs get their "session ended" error before the requests
	// are cancelled, so a cancelled request cannot end its POST first with
	// no response.
	for _, st := range streams {
		st.endSession()
	}
	if done != nil {
		close(done)
	}
	if ls.sess != nil {
		ls.sess.Close()
	}
	if forget {
		ls.h.o.eventStore.DropSession(ls.id)
	}
}
