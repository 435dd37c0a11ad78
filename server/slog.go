package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// slog levels for the MCP levels log/slog does not name. A record's level
// maps to an MCP level by range: below LevelInfo debug; up to SlogNotice
// info; up to LevelWarn notice; up to LevelError warning; then error,
// critical, alert, and emergency for SlogEmergency and above.
const (
	SlogNotice    = slog.LevelInfo + 2
	SlogCritical  = slog.LevelError + 1
	SlogAlert     = slog.LevelError + 2
	SlogEmergency = slog.LevelError + 3
)

// mcpLevel maps a slog level to an MCP logging level.
func mcpLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return mcp.LevelDebug
	case l < SlogNotice:
		return mcp.LevelInfo
	case l < slog.LevelWarn:
		return mcp.LevelNotice
	case l < slog.LevelError:
		return mcp.LevelWarning
	case l < SlogCritical:
		return mcp.LevelError
	case l < SlogAlert:
		return mcp.LevelCritical
	case l < SlogEmergency:
		return mcp.LevelAlert
	}
	return mcp.LevelEmergency
}

// Logger returns a log/slog logger whose records go to the client as
// notifications/message tied to this request, exactly as Log sends them:
// only at or above the request's level (LogLevel), never after the
// response. The level maps as slog Debug→debug, Info→info, Warn→warning,
// Error→error (see SlogNotice and SlogCritical for the others); data is an
// object with "msg" and the record's attributes, groups nested; the logger
// member is WithLogName's (default the server's name). A record whose
// context has no deadline is given up after five seconds if the client does
// not read it.
func (r *Request) Logger() *slog.Logger {
	name := ""
	if r.session != nil {
		name = r.session.srv.logName()
	}
	return slog.New(&requestHandler{r: r, attrs: attrTree{name: name}})
}

// requestHandler is the slog.Handler of Request.Logger.
type requestHandler struct {
	r     *Request
	attrs attrTree
}

func (h *requestHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.r.logEnabled(mcpLevel(l))
}

func (h *requestHandler) Handle(ctx context.Context, rec slog.Record) error {
	level := mcpLevel(rec.Level)
	if ctx == nil || ctx.Done() == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctxOr(ctx)), notifyTimeout)
		defer cancel()
	}
	return h.r.sendLog(ctx, level, func() (*jsonrpc.Notification, error) {
		return logNotification(level, h.attrs.name, h.attrs.data(rec))
	})
}

func (h *requestHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &requestHandler{r: h.r, attrs: h.attrs.withAttrs(as)}
}

func (h *requestHandler) WithGroup(name string) slog.Handler {
	return &requestHandler{r: h.r, attrs: h.attrs.withGroup(name)}
}

func ctxOr(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// SlogOptions configure a SlogHandler. The zero value is the default.
type SlogOptions struct {
	// Logger is the logger member of the notifications (default
	// WithLogName's, or the server's name).
	Logger string
	// Level is the least level handled at all (default: every record goes
	// on to the per-session filter).
	Level slog.Leveler
	// QueueSize bounds the records waiting to go to one session (default
	// DefaultLogQueue); a record that finds the queue full is dropped and
	// counted (Dropped).
	QueueSize int
}

// DefaultLogQueue is how many server-wide records may wait for one slow
// session before more are dropped.
const DefaultLogQueue = 256

// SlogHandler bridges log/slog to MCP logging: every record goes as
// notifications/message to each ready 2025-era session whose level it
// passes (logging/setLevel, or WithLogLevel before that), on the session's
// own stream (over HTTP the GET stream), level and data mapped as for
// Request.Logger. 2026-07-28 clients have no session and no way to ask for
// server-wide messages, so records reach none of them.
//
// Handle never waits for a client: each session has a queue of at most
// QueueSize records, drained by one goroutine that exists only while there
// is something to send; a record that finds its session's queue full is
// dropped, and so are the records queued behind a send that fails or takes
// longer than five seconds. Dropped counts them. The handler logs nothing
// about itself.
type SlogHandler struct {
	s       *Server
	level   slog.Leveler
	queue   int
	attrs   attrTree
	dropped *atomic.Uint64 // shared by the handlers WithAttrs derives
}

// SlogHandler returns a handler that sends log/slog records to the server's
// 2025-era sessions (see the type). opts may be nil.
func (s *Server) SlogHandler(opts *SlogOptions) *SlogHandler {
	h := &SlogHandler{s: s, queue: DefaultLogQueue, attrs: attrTree{name: s.logName()}, dropped: new(atomic.Uint64)}
	if opts != nil {
		if opts.Logger != "" {
			h.attrs.name = opts.Logger
		}
		h.level = opts.Level
		if opts.QueueSize > 0 {
			h.queue = opts.QueueSize
		}
	}
	return h
}

// Dropped returns how many records this handler (and those derived from it)
// queued for a session but could not deliver: the queue was full, or a send
// ahead of them failed.
func (h *SlogHandler) Dropped() uint64 { return h.dropped.Load() }

// Enabled reports whether the record passes Level; sessions filter further.
func (h *SlogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.level == nil || l >= h.level.Level()
}

// Handle queues the record for every session whose level it passes.
func (h *SlogHandler) Handle(_ context.Context, rec slog.Record) error {
	if !h.Enabled(context.Background(), rec.Level) {
		return nil
	}
	level := mcpLevel(rec.Level)
	s := h.s
	var n *jsonrpc.Notification
	for _, ss := range s.openSessions() {
		ss.mu.Lock()
		if !ss.ready || ss.closed || ss.out == nil || !level.AtLeast(ss.logLevelLocked()) {
			ss.mu.Unlock()
			continue
		}
		if n == nil {
			// Encoded once, outside any lock, for every session that wants it.
			ss.mu.Unlock()
			var err error
			if n, err = logNotification(level, h.attrs.name, h.attrs.data(rec)); err != nil {
				return err
			}
			ss.mu.Lock()
			if !ss.ready || ss.closed {
				ss.mu.Unlock()
				continue
			}
		}
		if len(ss.logs.queue) >= h.queue {
			ss.mu.Unlock()
			h.dropped.Add(1)
			continue
		}
		ss.logs.queue = append(ss.logs.queue, n)
		if !ss.logsSending {
			ss.logsSending = true
			go ss.sendLogs(h.dropped)
		}
		ss.mu.Unlock()
	}
	return nil
}

// sendLogs drains the session's queue of server-wide records, then exits.
// A send that fails (or outlasts notifyTimeout) drops the rest of its batch.
func (ss *Session) sendLogs(dropped *atomic.Uint64) {
	for {
		ss.mu.Lock()
		batch := ss.logs.queue
		ss.logs.queue = nil
		if len(batch) == 0 || ss.closed {
			ss.logsSending = false
			ss.mu.Unlock()
			if len(batch) > 0 {
				dropped.Add(uint64(len(batch)))
			}
			return
		}
		out := ss.out
		ss.mu.Unlock()
		for i, n := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			err := out.Send(ctx, n)
			cancel()
			if err != nil {
				dropped.Add(uint64(len(batch) - i))
				break
			}
		}
	}
}

// WithAttrs implements slog.Handler.
func (h *SlogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = h.attrs.withAttrs(as)
	return &c
}

// WithGroup implements slog.Handler.
func (h *SlogHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.attrs = h.attrs.withGroup(name)
	return &c
}

// attrTree is what a handler's WithAttrs and WithGroup calls have added:
// the attributes, each under the groups open when it was added, and the
// groups open now. It is immutable; each call makes a new one.
type attrTree struct {
	name   string      // the notifications' logger member
	groups []string    // the open groups, outermost first
	attrs  []slog.Attr // pre-set attributes, each wrapped in its groups
}

func (t attrTree) withAttrs(as []slog.Attr) attrTree {
	if len(as) == 0 {
		return t
	}
	nt := t
	nt.attrs = slices.Clip(t.attrs)
	for _, a := range as {
		for i := len(t.groups) - 1; i >= 0; i-- {
			a = slog.Attr{Key: t.groups[i], Value: slog.GroupValue(a)}
		}
		nt.attrs = append(nt.attrs, a)
	}
	return nt
}

func (t attrTree) withGroup(name string) attrTree {
	if name == "" {
		return t
	}
	nt := t
	nt.groups = append(slices.Clip(t.groups), name)
	return nt
}

// data encodes a record as the data of notifications/message: an object
// with "msg" first, then the handler's attributes and the record's (these
// under the open groups), groups as nested objects. slog's rules apply: an
// attribute with an empty key is dropped, a group with an empty key is
// inlined, an empty group is left out. A name given twice in one object
// keeps its first place and its last value (groups merge), so data never
// holds a name twice; "msg" is always the record's message.
func (t attrTree) data(rec slog.Record) json.RawMessage {
	root := &jsonObject{}
	root.set("msg", rec.Message)
	for _, a := range t.attrs {
		root.add(a)
	}
	if rec.NumAttrs() > 0 {
		obj := root
		for _, g := range t.groups {
			obj = obj.group(g)
		}
		rec.Attrs(func(a slog.Attr) bool {
			obj.add(a)
			return true
		})
	}
	root.set("msg", rec.Message)
	var buf bytes.Buffer
	root.encode(&buf)
	return buf.Bytes()
}

// jsonObject is an ordered JSON object under construction.
type jsonObject struct {
	names  []string
	values []any // string, bool, int64, uint64, float64, json.RawMessage or *jsonObject
}

func (o *jsonObject) index(name string) int {
	return slices.Index(o.names, name)
}

func (o *jsonObject) set(name string, v any) {
	if i := o.index(name); i >= 0 {
		o.values[i] = v
		return
	}
	o.names = append(o.names, name)
	o.values = append(o.values, v)
}

// group returns the member object name, making it (or replacing a
// non-object member) when needed.
func (o *jsonObject) group(name string) *jsonObject {
	if i := o.index(name); i >= 0 {
		if g, ok := o.values[i].(*jsonObject); ok {
			return g
		}
		g := &jsonObject{}
		o.values[i] = g
		return g
	}
	g := &jsonObject{}
	o.names = append(o.names, name)
	o.values = append(o.values, g)
	return g
}

// add adds one slog attribute.
func (o *jsonObject) add(a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		as := v.Group()
		if len(as) == 0 {
			return
		}
		dst := o
		if a.Key != "" {
			if !hasMember(as) {
				return
			}
			dst = o.group(a.Key)
		}
		for _, m := range as {
			dst.add(m)
		}
		return
	}
	if a.Key == "" {
		return
	}
	o.set(a.Key, jsonValue(v))
}

// hasMember reports whether a group's attributes would add anything.
func hasMember(as []slog.Attr) bool {
	for _, a := range as {
		v := a.Value.Resolve()
		if v.Kind() != slog.KindGroup {
			if a.Key != "" {
				return true
			}
		} else if hasMember(v.Group()) {
			return true
		}
	}
	return false
}

// jsonValue converts a resolved slog value that is not a group.
func jsonValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString:
		return v.String()
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprint(f)
		}
		return f
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return v.Time().Format(time.RFC3339Nano)
	}
	a := v.Any()
	switch x := a.(type) {
	case nil:
		return json.RawMessage("null")
	case json.RawMessage:
		if json.Valid(x) {
			return x
		}
	case json.Marshaler:
	case error:
		return x.Error()
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return fmt.Sprintf("%+v", a)
	}
	return json.RawMessage(raw)
}

func (o *jsonObject) encode(buf *bytes.Buffer) {
	buf.WriteByte('{')
	for i, name := range o.names {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeJSON(buf, name)
		buf.WriteByte(':')
		if g, ok := o.values[i].(*jsonObject); ok {
			g.encode(buf)
			continue
		}
		writeJSON(buf, o.values[i])
	}
	buf.WriteByte('}')
}

func writeJSON(buf *bytes.Buffer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte("null")
	}
	buf.Write(b)
}
