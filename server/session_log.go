package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/mcp"
)

// ErrSessionClosed is returned by Session.Log once the session has closed.
var ErrSessionClosed = errSessionClosed

// Log sends a notifications/message with level, logger (may be "") and data
// (any JSON value; a json.RawMessage is sent as is) to a 2025-era session on
// its own stream (over HTTP the GET stream), outside any request. It is sent
// only when the session is ready (notifications/initialized received) and
// level passes the session's level (LogLevel): otherwise Log does nothing
// and returns nil. After Close it returns ErrSessionClosed; an unknown level
// is an error. Unlike SlogHandler, Log waits for the send (ctx bounds it).
func (ss *Session) Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	if !level.Valid() {
		return fmt.Errorf("server: unknown logging level %q", level)
	}
	ss.mu.Lock()
	closed, ready, out := ss.closed, ss.ready, ss.out
	pass := level.AtLeast(ss.logLevelLocked())
	ss.mu.Unlock()
	switch {
	case closed:
		return ErrSessionClosed
	case !ready || !pass:
		return nil
	case out == nil:
		return ErrNoBackChannel
	}
	raw, ok := data.(json.RawMessage)
	if !ok || !json.Valid(raw) {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return fmt.Errorf("server: log data: %w", err)
		}
	}
	n, err := logNotification(level, logger, raw)
	if err != nil {
		return err
	}
	return out.Send(ctx, n)
}

// Done returns a channel closed when the session closes, for goroutines
// that serve one session and must end with it.
func (ss *Session) Done() <-chan struct{} {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closing == nil {
		ss.closing = make(chan struct{})
		if ss.closed {
			close(ss.closing)
		}
	}
	return ss.closing
}
