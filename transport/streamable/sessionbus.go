package streamable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// A SessionBus carries a shared session's messages between the replicas
// that hold copies of it (see SessionStore), for what a request served on
// one replica means for work running on another:
//
//   - a notifications/cancelled (or progress) the client sent to B reaches
//     the request it names, running on A;
//   - the client's answer, posted to B, to a request A sent it (sampling,
//     elicitation, roots) reaches the handler waiting on A;
//   - a message A's copy sends outside any request (a log message, a
//     resource update, a request to the client) reaches the client on the
//     GET stream B holds (list_changed notifications are not forwarded:
//     every replica sees its catalog change and tells the client itself);
//   - the events of a POST stream, after its client dropped it on A, reach
//     the client that resumed it on B (with Last-Event-ID), after those the
//     shared EventStore replays.
//
// Delivery is at most once and unordered between kinds; a message for a
// session a replica does not hold is ignored there.
type SessionBus interface {
	// Publish sends msg to every replica subscribed.
	Publish(ctx context.Context, session string, msg []byte) error
	// Subscribe calls fn with every message published for any session, by
	// any replica (this one too), until stop is called. fn must not block
	// for long.
	Subscribe(fn func(session string, msg []byte)) (stop func(), err error)
}

// busMessage is what replicas send each other.
type busMessage struct {
	From   string          `json:"from"` // the sending handler
	Kind   string          `json:"kind"` // busNotification, busResponse, busOut, busEvent
	Msg    json.RawMessage `json:"msg"`
	Stream string          `json:"stream,omitempty"` // busEvent: the POST stream
	ID     string          `json:"id,omitempty"`     // busEvent: the event id
	Final  bool            `json:"final,omitempty"`  // busEvent: the stream's reply
}

const (
	busNotification = "notification"
	busResponse     = "response"
	busOut          = "out"
	busEvent        = "event"
	busEnd          = "end" // the session was deleted
)

// shared reports whether the handler's 2025-era sessions live in a
// SessionStore, shared with other replicas.
func (h *Handler) shared() bool { return h.o.sessionStore != nil }

// bused reports whether shared sessions' messages pass between replicas:
// a SessionBus with a SessionStore (the bus alone does nothing).
func (h *Handler) bused() bool { return h.o.sessionStore != nil && h.o.sessionBus != nil }

// newReplicaID names a handler on the bus.
func newReplicaID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// publish sends m for the session, logging (not returning) a failure: the
// bus is best effort, like the notifications it carries.
func (ls *legacySession) publish(m busMessage) {
	if !ls.h.bused() {
		return
	}
	bus := ls.h.o.sessionBus
	m.From = ls.h.replica
	b, err := json.Marshal(&m)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), busPublishTimeout)
		err = bus.Publish(ctx, ls.id, b)
		cancel()
	}
	if err != nil {
		ls.h.o.logger.Warn("session message not passed to the other replicas", "session", ls.id, "kind", m.Kind, "error", err)
	}
}

// busPublishTimeout bounds one publish.
const busPublishTimeout = 2 * time.Second

// onBus handles a message another replica published, read by the strict
// reader: one naming a member twice is dropped, not read as either.
func (h *Handler) onBus(session string, raw []byte) {
	var m busMessage
	if wirejson.Unmarshal(raw, &m) != nil || m.From == h.replica {
		return
	}
	ls := h.lookup(session)
	if ls == nil {
		return
	}
	switch m.Kind {
	case busNotification:
		if msg, _, err := jsonrpc.Decode(m.Msg); err == nil {
			if n, ok := msg.(*jsonrpc.Notification); ok {
				ls.sess.HandleNotification(context.Background(), n)
			}
		}
	case busResponse:
		if msg, _, err := jsonrpc.Decode(m.Msg); err == nil {
			if r, ok := msg.(*jsonrpc.Response); ok {
				if d, ok := ls.sess.(jsonrpc.ResponseDeliverer); ok {
					d.DeliverResponse(context.Background(), r)
				}
			}
		}
	case busOut:
		if st := ls.getStandalone(); st != nil && st.attached() {
			if msg, _, err := jsonrpc.Decode(m.Msg); err == nil {
				_ = st.send(msg, false)
			}
		}
	case busEvent:
		ls.followersOf(m.Stream, func(f *follower) { f.offer(m) })
	case busEnd:
		h.endSession(ls)
	}
}

// forwards reports whether a notification the client sent this replica
// concerns work that may run on another: a cancellation or progress.
func forwards(method string) bool {
	return method == mcp.NotificationCancelled || method == mcp.NotificationProgress
}

// listChanged reports whether m is a list_changed notification, which
// every replica sends its own clients and none forwards.
func listChanged(m jsonrpc.Message) bool {
	n, ok := m.(*jsonrpc.Notification)
	return ok && strings.HasSuffix(n.Method, "/list_changed")
}

// follower receives, on the replica a client resumed a POST stream on, the
// events the replica running its request publishes after the replay.
type follower struct {
	ch chan busMessage
}

// followerBuffer bounds the events waiting for a follower's connection;
// past it the follower ends its stream (the client resumes again, from the
// event store).
const followerBuffer = 256

// offer queues m for the follower (the session's lock held).
func (f *follower) offer(m busMessage) {
	select {
	case f.ch <- m:
	default:
		close(f.ch) // too far behind: end the stream, the client resumes
		f.ch = nil
	}
}

// followersOf calls fn for the followers of a stream, under the session's
// lock.
func (ls *legacySession) followersOf(stream string, fn func(*follower)) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.shared == nil {
		return
	}
	for f := range ls.shared.followers[stream] {
		if f.ch != nil {
			fn(f)
		}
	}
}

// MemorySessionBus is a SessionBus within one process: for several handlers
// in one process, and for tests.
type MemorySessionBus struct {
	mu   sync.Mutex
	subs map[*func(string, []byte)]struct{}
}

// NewMemorySessionBus returns a bus with no subscribers.
func NewMemorySessionBus() *MemorySessionBus {
	return &MemorySessionBus{subs: map[*func(string, []byte)]struct{}{}}
}

// Publish implements SessionBus: subscribers get msg before it returns.
func (b *MemorySessionBus) Publish(_ context.Context, session string, msg []byte) error {
	b.mu.Lock()
	fns := make([]func(string, []byte), 0, len(b.subs))
	for f := range b.subs {
		fns = append(fns, *f)
	}
	b.mu.Unlock()
	for _, f := range fns {
		f(session, msg)
	}
	return nil
}

// Subscribe implements SessionBus.
func (b *MemorySessionBus) Subscribe(fn func(string, []byte)) (func(), error) {
	p := &fn
	b.mu.Lock()
	b.subs[p] = struct{}{}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.subs, p)
		b.mu.Unlock()
	}, nil
}

// followElsewhere is resume's answer for a POST stream this replica does
// not hold: follow it (follow).
const followElsewhere = -1

// follow serves a client resuming, here, a POST stream whose request runs
// (or ran) on another replica: the events the shared EventStore holds after
// last, then those the other replica publishes, once each, until the
// stream's reply, the client leaving, or the session ending.
func (ls *legacySession) follow(ctx context.Context, w http.ResponseWriter, c *conn, last string) {
	store := ls.h.o.eventStore
	streamID, _, err := store.After(ls.id, last)
	if err != nil {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "cannot resume after event %q: %v", last, err))
		return
	}
	// Listen before reading the store: an event published in between is
	// in one or the other (stored first, then published), and duplicates
	// are dropped by id.
	f := &follower{ch: make(chan busMessage, followerBuffer)}
	live := f.ch
	ls.mu.Lock()
	sh := ls.sharedLocked()
	if sh.followers == nil {
		sh.followers = map[string]map[*follower]struct{}{}
	}
	if sh.followers[streamID] == nil {
		sh.followers[streamID] = map[*follower]struct{}{}
	}
	sh.followers[streamID][f] = struct{}{}
	ls.busy++
	ls.mu.Unlock()
	defer func() {
		ls.mu.Lock()
		delete(sh.followers[streamID], f)
		if len(sh.followers[streamID]) == 0 {
			delete(sh.followers, streamID)
		}
		ls.mu.Unlock()
		ls.release()
	}()
	_, events, err := store.After(ls.id, last)
	if err != nil {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "cannot resume after event %q: %v", last, err))
		return
	}
	defer c.end()
	if c.startSSE() != nil {
		return
	}
	ended := ls.ended()
	seen := make(map[string]struct{}, len(events))
	for _, e := range events {
		seen[e.ID] = struct{}{}
		if e.Data == nil {
			continue
		}
		if c.event(e.ID, 0, e.Data) != nil || isReply(e.Data) {
			return
		}
	}
	for {
		select {
		case m, ok := <-live:
			if !ok {
				return // fell too far behind: the client resumes again
			}
			if _, dup := seen[m.ID]; dup {
				continue
			}
			seen[m.ID] = struct{}{}
			if c.event(m.ID, 0, m.Msg) != nil || m.Final {
				return
			}
		case <-c.done:
			return
		case <-ctx.Done():
			return
		case <-ended:
			return
		}
	}
}

// isReply reports whether an event's data is a JSON-RPC response: a POST
// stream's last event.
func isReply(data []byte) bool {
	m, _, err := jsonrpc.Decode(data)
	if err != nil {
		return false
	}
	_, ok := m.(*jsonrpc.Response)
	return ok
}
