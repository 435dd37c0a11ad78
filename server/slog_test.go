package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// readySession returns a 2025-era session, initialized and ready, whose
// unsolicited messages go to out.
func readySession(s *Server, out jsonrpc.Sender) *Session {
	ss := s.NewSession(out)
	ss.mu.Lock()
	ss.initialized, ss.ready, ss.version = true, true, mcp.LatestLegacyVersion
	ss.mu.Unlock()
	return ss
}

// logSink keeps the notifications it is sent.
type logSink struct {
	mu    sync.Mutex
	notes []*jsonrpc.Notification
}

func (k *logSink) Send(_ context.Context, m jsonrpc.Message) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.notes = append(k.notes, m.(*jsonrpc.Notification))
	return nil
}

func (k *logSink) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.notes)
}

func sending(ss *Session) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.logsSending
}

// A client that does not read never blocks the logging goroutine: its
// session's queue is bounded, one goroutine waits on it, and what does not
// fit is dropped and counted. A healthy session beside it gets every record
// at or above its level, in order.
func TestSlogHandlerStuckClientIsBounded(t *testing.T) {
	s := New(mcp.Implementation{Name: "stuck", Version: "1"})
	stuck := &blockingSender{release: make(chan struct{})}
	stuckSS := readySession(s, stuck)
	sink := &logSink{}
	healthy := readySession(s, sink)
	healthy.mu.Lock()
	healthy.logs.level = mcp.LevelWarning
	healthy.mu.Unlock()

	const records, queue = 200, 4
	h := s.SlogHandler(&SlogOptions{QueueSize: queue})
	l := slog.New(h)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range records {
			l.Info("info", "i", i) // the healthy session filters these out
			l.Warn("warn", "i", i)
		}
	}()
	testwait.Closed(t, done, "logging to finish beside a client that does not read")
	stuckSS.mu.Lock()
	queued := len(stuckSS.logs.queue)
	stuckSS.mu.Unlock()
	if queued > queue {
		t.Errorf("%d records queued for the stuck session, bound %d", queued, queue)
	}
	// At most one batch (QueueSize) is in the sender's hands and QueueSize
	// wait; the rest of the 2*records were dropped.
	if d := h.Dropped(); d < 2*records-2*queue {
		t.Errorf("Dropped() = %d, want at least %d", d, 2*records-2*queue)
	}
	// The sender may not have reached the client yet when logging returns.
	testwait.WaitFor(t, "the stuck session's sender reaches its client", func() bool { return stuck.peak.Load() > 0 })
	if p := stuck.peak.Load(); p != 1 {
		t.Errorf("%d sends at once to one session, want 1", p)
	}

	// The healthy session read everything it wanted, in order (the queue
	// of 4 may have overflowed there too: whatever arrived is in order).
	testwait.WaitFor(t, "the healthy session is drained", func() bool { return !sending(healthy) })
	sink.mu.Lock()
	last := -1
	for _, n := range sink.notes {
		var p struct {
			Level mcp.LoggingLevel
			Data  struct{ I int }
		}
		if err := json.Unmarshal(n.Params, &p); err != nil || p.Level != mcp.LevelWarning || p.Data.I <= last {
			t.Fatalf("healthy session: %s after i=%d", n.Params, last)
		}
		last = p.Data.I
	}
	got := len(sink.notes)
	sink.mu.Unlock()
	if got == 0 {
		t.Fatal("the healthy session got nothing")
	}

	// Once the client reads again, what was queued goes out and the
	// goroutine ends; sent plus dropped is everything.
	close(stuck.release)
	testwait.WaitFor(t, "the stuck session is drained", func() bool { return !sending(stuckSS) })
	if sent, dropped := uint64(stuck.sends.Load())+uint64(got), h.Dropped(); sent+dropped != 3*records {
		t.Errorf("sent %d + dropped %d != %d", sent, dropped, 3*records)
	}
}

// With the default queue a reading client gets every record, in order.
func TestSlogHandlerDeliversInOrder(t *testing.T) {
	s := New(mcp.Implementation{Name: "order", Version: "1"})
	sink := &logSink{}
	ss := readySession(s, sink)
	h := s.SlogHandler(nil)
	l := slog.New(h)
	for i := range DefaultLogQueue {
		l.Info("m", "i", i)
	}
	testwait.WaitFor(t, "all delivered", func() bool { return sink.len() == DefaultLogQueue })
	for i, n := range sink.notes {
		var p struct{ Data struct{ I int } }
		if err := json.Unmarshal(n.Params, &p); err != nil || p.Data.I != i {
			t.Fatalf("record %d: %s", i, n.Params)
		}
	}
	testwait.WaitFor(t, "the sender ends", func() bool { return !sending(ss) })
	if h.Dropped() != 0 {
		t.Errorf("Dropped() = %d", h.Dropped())
	}
}

// failingSender refuses every send.
type failingSender struct{ sends atomic.Int32 }

func (f *failingSender) Send(context.Context, jsonrpc.Message) error {
	f.sends.Add(1)
	return errors.New("gone")
}

// A send that fails drops its batch: counted, never retried forever. In a
// synctest bubble, once every goroutine is blocked, nothing more is sent.
func TestSlogHandlerFailedSendDrops(t *testing.T) { synctest.Test(t, testSlogHandlerFailedSendDrops) }

func testSlogHandlerFailedSendDrops(t *testing.T) {
	s := New(mcp.Implementation{Name: "fail", Version: "1"})
	out := &failingSender{}
	ss := readySession(s, out)
	h := s.SlogHandler(nil)
	for range 10 {
		slog.New(h).Error("x")
	}
	testwait.WaitFor(t, "the sender ends", func() bool { return !sending(ss) })
	if d := h.Dropped(); d != 10 {
		t.Errorf("Dropped() = %d, want 10", d)
	}
	if n := out.sends.Load(); n < 1 || n > 10 {
		t.Errorf("%d sends", n)
	}
	// A closed session is no longer reached.
	ss.Close()
	before := out.sends.Load()
	slog.New(h).Error("after close")
	synctest.Wait()
	if out.sends.Load() != before || h.Dropped() != 10 {
		t.Error("a closed session was sent to")
	}
}
