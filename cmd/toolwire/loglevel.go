package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// checkLogLevel refuses a --log-level that is not one of the eight levels.
func (f *targetFlags) checkLogLevel() error {
	if f.logLevel == "" || mcp.LoggingLevel(f.logLevel).Valid() {
		return nil
	}
	return usageError{fmt.Sprintf("invalid --log-level %q: want debug, info, notice, warning, error, critical, alert or emergency", f.logLevel)}
}

// errOut is where the command writes to the user besides its result.
func (f *targetFlags) errOut() io.Writer {
	if f.stderr == nil {
		return os.Stderr
	}
	return f.stderr
}

// logOptions shows the server's log messages on stderr when --log-level
// asked for them; without it none are asked for, and any that come anyway
// are dropped.
func (f *targetFlags) logOptions() []client.Option {
	if f.logLevel == "" {
		return nil
	}
	threshold := mcp.LoggingLevel(f.logLevel)
	w := f.errOut()
	return []client.Option{client.WithLogHandler(func(m client.LogMessage) {
		// The server filters by the level it was given; a server that
		// ignores it is filtered here. A level outside the eight is shown.
		if m.Level.Valid() && !m.Level.AtLeast(threshold) {
			return
		}
		fmt.Fprintln(w, formatLog(m))
	})}
}

// applyLogLevel tells a freshly connected server the --log-level. A server
// that refuses it gets a warning, not a failure: the command can still do
// its work.
func (f *targetFlags) applyLogLevel(ctx context.Context, c *client.Client) {
	if f.logLevel == "" {
		return
	}
	if err := c.SetLogLevel(ctx, mcp.LoggingLevel(f.logLevel)); err != nil {
		fmt.Fprintf(f.errOut(), "toolwire: warning: the server did not take --log-level %s: %v\n", f.logLevel, err)
	}
}

// formatLog renders a log message as "[level] logger: data": data as
// compact JSON, a string as itself, and an object with a string "msg" as
// that message.
func formatLog(m client.LogMessage) string {
	line := "[" + string(m.Level) + "] "
	if m.Logger != "" {
		line += m.Logger + ": "
	}
	return line + logData(m.Data)
}

func logData(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if wirejson.Unmarshal(raw, &s) == nil {
			return s
		}
	case '{':
		var obj struct {
			Msg *string `json:"msg"`
		}
		if wirejson.Unmarshal(raw, &obj) == nil && obj.Msg != nil {
			return *obj.Msg
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// lockedWriter serializes writes from the goroutines that report to the
// user at once (log messages, progress, elicitation forms).
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func syncWriter(w io.Writer) io.Writer {
	if lw, ok := w.(lockedWriter); ok {
		return lw
	}
	return lockedWriter{mu: new(sync.Mutex), w: w}
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
