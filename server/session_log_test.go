package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// Session.Log sends to one ready session at or above its level, nothing
// below it or before the session is ready, and refuses after Close; Done
// closes with the session.
func TestSessionLog(t *testing.T) {
	s := New(mcp.Implementation{Name: "sl", Version: "1"})
	ctx := context.Background()

	early := &logSink{}
	notReady := s.NewSession(early)
	if err := notReady.Log(ctx, mcp.LevelEmergency, "x", "early"); err != nil || early.len() != 0 {
		t.Fatalf("before ready: err %v, %d sent", err, early.len())
	}

	sink := &logSink{}
	ss := readySession(s, sink)
	ss.mu.Lock()
	ss.logs.level = mcp.LevelWarning
	ss.mu.Unlock()
	if err := ss.Log(ctx, mcp.LevelInfo, "x", "below"); err != nil {
		t.Fatal(err)
	}
	if err := ss.Log(ctx, mcp.LevelError, "sim", map[string]any{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if err := ss.Log(ctx, "loud", "x", "bad level"); err == nil {
		t.Error("unknown level accepted")
	}
	if sink.len() != 1 {
		t.Fatalf("%d messages sent, want 1", sink.len())
	}
	var p mcp.LoggingMessageParams
	if err := json.Unmarshal(sink.notes[0].Params, &p); err != nil {
		t.Fatal(err)
	}
	if sink.notes[0].Method != mcp.NotificationMessage || p.Level != mcp.LevelError || p.Logger != "sim" || string(p.Data) != `{"n":1}` {
		t.Errorf("sent %s %s", sink.notes[0].Method, sink.notes[0].Params)
	}

	done := ss.Done()
	select {
	case <-done:
		t.Fatal("Done closed before Close")
	default:
	}
	ss.Close()
	<-done
	if err := ss.Log(ctx, mcp.LevelEmergency, "x", "after"); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("after Close: %v, want ErrSessionClosed", err)
	}
	// Done asked for after Close is closed already.
	closed := s.NewSession(&logSink{})
	closed.Close()
	<-closed.Done()
}
