package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Logging to the client (notifications/message) works in both eras, with
// different rules for who decides what is sent:
//
//   - 2025-era sessions: the client sets the session's level with
//     logging/setLevel; until it does, the server sends messages at or above
//     WithLogLevel (default DefaultLogLevel, "info"), as the 2025-11-25 spec
//     lets it choose. Messages tied to a request go on that request's
//     stream; server-wide ones (SlogHandler) on the session's own.
//   - 2026-07-28 requests: each request names its level in
//     _meta["io.modelcontextprotocol/logLevel"]; without one nothing is sent
//     for it. There is no logging/setLevel and no session, so server-wide
//     records reach no 2026-07-28 client.
//
// Every server declares the logging capability and serves logging/setLevel
// (2025-era only).

// DefaultLogLevel is the level a 2025-era session gets messages at or above
// before its client sends logging/setLevel (see WithLogLevel).
const DefaultLogLevel = mcp.LevelInfo

// ErrLogDone is returned by Request.Log once the request has been answered:
// nothing tied to a request may follow its response.
var ErrLogDone = errors.New("server: log message after the request was answered")

// logConfig is the server's logging configuration (WithLogLevel,
// WithLogName); its zero value is the default.
type logConfig struct {
	level mcp.LoggingLevel // "" means DefaultLogLevel
	off   bool             // WithLogLevel(""): nothing before setLevel
	name  string           // the logger member; "" means the server's name
}

// WithLogLevel sets the level a 2025-era session receives log messages at or
// above until its client sends logging/setLevel (default DefaultLogLevel,
// "info"). The empty level means none: nothing is sent to a session before
// its client asks. A level that is not one of the eight is ignored. It has
// no effect on 2026-07-28 requests, which name their own level or get
// nothing.
func WithLogLevel(level mcp.LoggingLevel) Option {
	return serverOption(func(c *config) {
		switch {
		case level == "":
			c.logging.level, c.logging.off = "", true
		case level.Valid():
			c.logging.level, c.logging.off = level, false
		}
	})
}

// WithLogName sets the logger member of the notifications/message sent by
// Request.Logger and SlogHandler (default: the server's implementation
// name). It is not the server's own diagnostics logger (WithLogger).
func WithLogName(name string) Option {
	return serverOption(func(c *config) { c.logging.name = name })
}

// defaultLevel is what a 2025-era session gets before logging/setLevel; ""
// for nothing.
func (s *Server) defaultLevel() mcp.LoggingLevel {
	switch {
	case s.cfg.logging.off:
		return ""
	case s.cfg.logging.level != "":
		return s.cfg.logging.level
	}
	return DefaultLogLevel
}

// logName is the logger member of records bridged from log/slog.
func (s *Server) logName() string {
	if s.cfg.logging.name != "" {
		return s.cfg.logging.name
	}
	return s.info.Name
}

// setLevelParams are logging/setLevel's params, the level raw so that any
// wrong value gets the same answer.
type setLevelParams struct {
	Level json.RawMessage `json:"level"`
	Meta  mcp.Meta        `json:"_meta"`
}

// setLevel serves logging/setLevel (2025-era sessions): a level that is
// missing or not one of the eight is -32602 naming them.
func (s *Server) setLevel(_ context.Context, r *Request, p *setLevelParams) (*mcp.EmptyResult, error) {
	level, err := parseLogLevel(p.Level)
	if err != nil || level == "" {
		got := "none"
		if p.Level != nil {
			got = string(p.Level)
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			`invalid logging/setLevel params: "level" must be one of debug, info, notice, warning, error, critical, alert, emergency; got %s`, got)
	}
	ss := r.session
	ss.mu.Lock()
	if ss.logs.level != level {
		ss.logs.level = level
		ss.stateRev.Add(1)
	}
	ss.mu.Unlock()
	return &mcp.EmptyResult{}, nil
}

// LogLevel returns the level a 2025-era session receives log messages at or
// above: the one its client set with logging/setLevel, or the server's
// default (WithLogLevel); "" for none.
func (ss *Session) LogLevel() mcp.LoggingLevel {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.logLevelLocked()
}

func (ss *Session) logLevelLocked() mcp.LoggingLevel {
	if ss.logs.level != "" {
		return ss.logs.level
	}
	return ss.srv.defaultLevel()
}

// sessionLogs is a session's logging state, guarded by the session's mu:
// its level and the server-wide records waiting to go out (slog.go; the
// session's logsSending tells whether a goroutine drains them).
type sessionLogs struct {
	level mcp.LoggingLevel        // set by logging/setLevel; "" until then
	queue []*jsonrpc.Notification // server-wide records not yet sent
}

// requestLog is the logging state of one request, made when it first logs.
// Its messages go out ahead of the request's response and none after
// (untilAnswered; end closes it).
type requestLog struct {
	untilAnswered
	read  bool             // level has been read from _meta (2026-07-28)
	level mcp.LoggingLevel // the request's _meta level; "" for none
}

// answeredLog stands for the logging state of a request answered before it
// ever logged: nothing more is sent for it.
var answeredLog = &requestLog{untilAnswered: untilAnswered{done: true}}

// endLogsLocked is called under the session's mu as the request is
// answered: it returns the request's logging state, for end, and makes sure
// a message logged from now on is refused.
func (r *Request) endLogsLocked() *requestLog {
	lg := r.logs
	if lg == nil {
		r.logs = answeredLog
	}
	return lg
}

// end stops the request's log messages and waits for one being sent; it is
// called (with a nil receiver for a request that never logged) before the
// response is sent.
func (lg *requestLog) end() {
	if lg == nil {
		return
	}
	lg.close()
}

// logState returns the request's logging state, made on first use, or nil
// when a 2025-era request's session level stops a message at level (pass
// "" to get it regardless).
func (r *Request) logState(level mcp.LoggingLevel) *requestLog {
	ss := r.session
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if level != "" && r.Peer.Era != mcp.EraModern && !level.AtLeast(ss.logLevelLocked()) {
		return nil
	}
	if r.logs == nil {
		r.logs = &requestLog{}
	}
	return r.logs
}

// LogLevel returns the level this request receives log messages at or
// above: for a 2026-07-28 request the one its _meta names, for a 2025-era
// request its session's; "" when nothing is sent (a 2026-07-28 request
// without _meta "io.modelcontextprotocol/logLevel").
func (r *Request) LogLevel() mcp.LoggingLevel {
	if r.session == nil {
		return ""
	}
	if r.Peer.Era != mcp.EraModern {
		return r.session.LogLevel()
	}
	lg := r.logState("")
	if lg == answeredLog {
		l, _ := metaLogLevel(r.Params)
		return l
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return lg.metaLevelLocked(r.Params)
}

func (lg *requestLog) metaLevelLocked(params json.RawMessage) mcp.LoggingLevel {
	if !lg.read {
		lg.level, _ = metaLogLevel(params)
		lg.read = true
	}
	return lg.level
}

// Log sends notifications/message with level, logger (may be empty) and
// data (any JSON value; a json.RawMessage is sent as is) tied to this
// request: over HTTP on its stream, ahead of its response. It is sent only
// when level passes the request's threshold (LogLevel): otherwise Log does
// nothing and returns nil. After the request has been answered it returns
// ErrLogDone; an unknown level is an error. Log is safe to call from
// several goroutines; the messages of one goroutine keep their order.
func (r *Request) Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	if !level.Valid() {
		return fmt.Errorf("server: unknown logging level %q", level)
	}
	return r.sendLog(ctx, level, func() (*jsonrpc.Notification, error) {
		raw, ok := data.(json.RawMessage)
		if !ok || !json.Valid(raw) {
			var err error
			if raw, err = json.Marshal(data); err != nil {
				return nil, fmt.Errorf("server: log data: %w", err)
			}
		}
		return logNotification(level, logger, raw)
	})
}

// sendLog sends the notification build makes when level passes the
// request's threshold; build runs only then.
func (r *Request) sendLog(ctx context.Context, level mcp.LoggingLevel, build func() (*jsonrpc.Notification, error)) error {
	if r.session == nil {
		return nil
	}
	lg := r.logState(level)
	if lg == nil {
		return nil // below the session's level
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if lg.done {
		return ErrLogDone
	}
	if r.Peer.Era == mcp.EraModern && !level.AtLeast(lg.metaLevelLocked(r.Params)) {
		return nil
	}
	if r.sender == nil {
		return ErrNoBackChannel
	}
	n, err := build()
	if err != nil {
		return err
	}
	// Sending under the lock keeps every message ahead of the response.
	return r.sender.Send(ctx, n)
}

// logEnabled reports whether a message at level would be sent now.
func (r *Request) logEnabled(level mcp.LoggingLevel) bool {
	return level.AtLeast(r.LogLevel())
}

// logNotification builds notifications/message.
func logNotification(level mcp.LoggingLevel, logger string, data json.RawMessage) (*jsonrpc.Notification, error) {
	params, err := json.Marshal(mcp.LoggingMessageParams{Level: level, Logger: logger, Data: data})
	if err != nil {
		return nil, err
	}
	return &jsonrpc.Notification{Method: mcp.NotificationMessage, Params: params}, nil
}

var logLevelMember = []string{mcp.MetaLogLevel}

// metaLogLevel reads _meta["io.modelcontextprotocol/logLevel"] from request
// params: "" when absent or null, an error when it is not one of the eight
// levels. The common shape is scanned without decoding.
func metaLogLevel(params json.RawMessage) (mcp.LoggingLevel, error) {
	if len(params) == 0 {
		return "", nil
	}
	var meta, raw []byte
	ok := jsonscan.Members(params, metaMember, func(_, v []byte) bool { meta = v; return true })
	if ok && meta != nil && string(meta) != "null" {
		ok = jsonscan.Members(meta, logLevelMember, func(_, v []byte) bool { raw = v; return true })
	}
	if !ok {
		var head struct {
			Meta *struct {
				LogLevel json.RawMessage `json:"io.modelcontextprotocol/logLevel"`
			} `json:"_meta"`
		}
		if err := wirejson.Unmarshal(params, &head); err != nil {
			return "", err
		}
		if head.Meta == nil {
			return "", nil
		}
		raw = head.Meta.LogLevel
	}
	return parseLogLevel(raw)
}

// parseLogLevel checks a raw _meta logLevel value: nil or null is none.
func parseLogLevel(raw []byte) (mcp.LoggingLevel, error) {
	if raw == nil || string(raw) == "null" {
		return "", nil
	}
	if v, ok := jsonscan.PlainString(raw); ok && mcp.LoggingLevel(v).Valid() {
		return mcp.LoggingLevel(v), nil
	}
	var l mcp.LoggingLevel
	if err := wirejson.Unmarshal(raw, &l); err != nil {
		return "", err
	}
	return l, nil
}

// checkLogLevel refuses a 2026-07-28 request whose _meta logLevel (raw, as
// the dispatch scanned it) is not a level: -32602.
func checkLogLevel(raw []byte) *jsonrpc.Error {
	if raw == nil {
		return nil
	}
	if _, err := parseLogLevel(raw); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: _meta %q: %v", mcp.MetaLogLevel, err)
	}
	return nil
}
