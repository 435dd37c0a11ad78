package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// allLevels are the eight levels, least severe first.
var allLevels = []mcp.LoggingLevel{mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning,
	mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency}

// logServer has a tool "chatty" that logs once at each level (data: the
// level's rank) and a tool "quiet" that logs nothing. After the call, the
// request is kept in *saved.
func logServer(t *testing.T, saved **server.CallRequest, opts ...server.Option) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "logsrv", Version: "1"}, opts...)
	var mu sync.Mutex
	err := server.AddTool(s, &mcp.Tool{Name: "chatty"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		for _, l := range allLevels {
			if err := req.Log(ctx, l, "chatty", map[string]any{"rank": l.Rank()}); err != nil {
				return "", err
			}
		}
		if saved != nil {
			mu.Lock()
			*saved = req
			mu.Unlock()
		}
		return "done", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "quiet"}, func(_ context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		if saved != nil {
			mu.Lock()
			*saved = req
			mu.Unlock()
		}
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// pending drains the notifications already received, without waiting: the
// transport delivers in order, so once a response has arrived every
// notification sent ahead of it is here.
func (p *peer) pending() []*jsonrpc.Notification {
	var out []*jsonrpc.Notification
	for {
		select {
		case n := <-p.notes:
			out = append(out, n)
		default:
			return out
		}
	}
}

// logLevels decodes notifications/message and returns their levels in order.
func logLevels(t *testing.T, notes []*jsonrpc.Notification) []mcp.LoggingLevel {
	t.Helper()
	var out []mcp.LoggingLevel
	for _, n := range notes {
		if n.Method != mcp.NotificationMessage {
			t.Fatalf("unexpected notification %s %s", n.Method, n.Params)
		}
		var p mcp.LoggingMessageParams
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatalf("notifications/message params %s: %v", n.Params, err)
		}
		out = append(out, p.Level)
	}
	return out
}

func levelsFrom(min mcp.LoggingLevel) []mcp.LoggingLevel {
	var out []mcp.LoggingLevel
	for _, l := range allLevels {
		if l.AtLeast(min) {
			out = append(out, l)
		}
	}
	return out
}

// callChatty calls the chatty tool and returns the levels of the messages
// that arrived ahead of the response.
func callChatty(t *testing.T, p *peer, params map[string]any) []mcp.LoggingLevel {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["name"] = "chatty"
	r := p.call("tools/call", params)
	if got := text(t, callResult(t, r)); got != "done" {
		t.Fatalf("result %q", got)
	}
	return logLevels(t, p.pending())
}

func TestLoggingCapabilityDeclared(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "bare", Version: "1"})
	if s.Capabilities().Logging == nil {
		t.Fatal("logging capability not declared")
	}
	p := connect(t, s)
	if res := p.initialize("2025-11-25"); res.Capabilities.Logging == nil {
		t.Fatal("initialize result declares no logging capability")
	}
}

// After logging/setLevel, only messages at or above the level arrive, in
// order, ahead of the response.
func TestSetLevelFiltersRequestLogs(t *testing.T) {
	s := logServer(t, nil)
	p := connect(t, s)
	p.initialize("2025-11-25")
	for _, lvl := range []mcp.LoggingLevel{mcp.LevelWarning, mcp.LevelDebug, mcp.LevelEmergency, mcp.LevelNotice} {
		r := p.call(mcp.MethodSetLevel, map[string]any{"level": lvl})
		if r.Error != nil || string(r.Result) != "{}" {
			t.Fatalf("setLevel %s: result %s error %v", lvl, r.Result, r.Error)
		}
		got := callChatty(t, p, nil)
		if want := levelsFrom(lvl); !reflect.DeepEqual(got, want) {
			t.Errorf("level %s: got %v, want %v", lvl, got, want)
		}
	}
}

// Before setLevel a session gets the server's default: info, or
// WithLogLevel's; WithLogLevel("") sends nothing until the client asks.
func TestDefaultLogLevel(t *testing.T) {
	cases := []struct {
		name string
		opts []server.Option
		want []mcp.LoggingLevel
	}{
		{"default", nil, levelsFrom(server.DefaultLogLevel)},
		{"debug", []server.Option{server.WithLogLevel(mcp.LevelDebug)}, allLevels},
		{"error", []server.Option{server.WithLogLevel(mcp.LevelError)}, levelsFrom(mcp.LevelError)},
		{"off", []server.Option{server.WithLogLevel("")}, nil},
		{"unknown ignored", []server.Option{server.WithLogLevel("loud")}, levelsFrom(server.DefaultLogLevel)},
	}
	if server.DefaultLogLevel != mcp.LevelInfo {
		t.Fatalf("DefaultLogLevel = %s", server.DefaultLogLevel)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := logServer(t, nil, c.opts...)
			p := connect(t, s)
			p.initialize("2025-11-25")
			if got := callChatty(t, p, nil); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestSetLevelInvalid(t *testing.T) {
	s := logServer(t, nil)
	p := connect(t, s)
	p.initialize("2025-11-25")
	for name, params := range map[string]any{
		"unknown":   map[string]any{"level": "loud"},
		"number":    map[string]any{"level": 3},
		"missing":   map[string]any{},
		"no params": nil,
		"case":      map[string]any{"level": "WARNING"},
	} {
		e := wantError(t, p.call(mcp.MethodSetLevel, params), jsonrpc.CodeInvalidParams)
		if !strings.Contains(e.Message, "debug, info, notice, warning, error, critical, alert, emergency") {
			t.Errorf("%s: message does not name the levels: %s", name, e.Message)
		}
	}
	// The level is unchanged: the default still applies.
	if got := callChatty(t, p, nil); !reflect.DeepEqual(got, levelsFrom(server.DefaultLogLevel)) {
		t.Errorf("after refused setLevel: %v", got)
	}
}

// logging/setLevel does not exist in 2026-07-28.
func TestSetLevelModernNotFound(t *testing.T) {
	s := logServer(t, nil)
	p := connect(t, s)
	wantError(t, p.call(mcp.MethodSetLevel, map[string]any{"level": "debug", "_meta": modernMeta()}), jsonrpc.CodeMethodNotFound)
}

func modernLogMeta(level any) map[string]any {
	m := modernMeta()
	m[mcp.MetaLogLevel] = level
	return m
}

// A 2026-07-28 request names its own level; without one nothing is sent.
func TestModernRequestLogLevel(t *testing.T) {
	s := logServer(t, nil, server.WithLogLevel(mcp.LevelDebug)) // no effect on 2026-07-28
	p := connect(t, s)
	got := callChatty(t, p, map[string]any{"_meta": modernLogMeta("warning")})
	if want := levelsFrom(mcp.LevelWarning); !reflect.DeepEqual(got, want) {
		t.Errorf("logLevel warning: got %v, want %v", got, want)
	}
	if got := callChatty(t, p, map[string]any{"_meta": modernMeta()}); len(got) != 0 {
		t.Errorf("no logLevel: got %v, want nothing", got)
	}
	if got := callChatty(t, p, map[string]any{"_meta": modernLogMeta(nil)}); len(got) != 0 {
		t.Errorf("null logLevel: got %v, want nothing", got)
	}
	// The level is the request's alone: the next request without one gets
	// nothing again, and one at debug gets everything.
	if got := callChatty(t, p, map[string]any{"_meta": modernLogMeta("debug")}); !reflect.DeepEqual(got, allLevels) {
		t.Errorf("logLevel debug: got %v", got)
	}
	if got := callChatty(t, p, map[string]any{"_meta": modernMeta()}); len(got) != 0 {
		t.Errorf("no logLevel after debug: got %v", got)
	}
}

// An escaped member name takes the exact decoder's path, with the same
// outcome.
func TestModernLogLevelSlowPath(t *testing.T) {
	s := logServer(t, nil)
	p := connect(t, s)
	meta, _ := json.Marshal(modernMeta())
	raw := fmt.Sprintf(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"chatty","_meta":%s}}`,
		strings.Replace(string(meta), "{", `{"io.modelcontextprotocol/log\u004cevel":"error",`, 1))
	_, ch := p.startRaw(jsonrpc.StringID("slow"), raw)
	callResult(t, p.wait(ch))
	if got, want := logLevels(t, p.pending()), levelsFrom(mcp.LevelError); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	raw = strings.Replace(raw, `"error"`, `"loud"`, 1)
	raw = strings.Replace(raw, `"slow"`, `"slow2"`, 1)
	_, ch = p.startRaw(jsonrpc.StringID("slow2"), raw)
	wantError(t, p.wait(ch), jsonrpc.CodeInvalidParams)
}

func TestModernInvalidLogLevel(t *testing.T) {
	var saved *server.CallRequest
	s := logServer(t, &saved)
	p := connect(t, s)
	for _, bad := range []any{"loud", "", 4, true, map[string]any{}, "Warning"} {
		r := p.call("tools/call", map[string]any{"name": "chatty", "_meta": modernLogMeta(bad)})
		e := wantError(t, r, jsonrpc.CodeInvalidParams)
		if !strings.Contains(e.Message, mcp.MetaLogLevel) {
			t.Errorf("%v: message does not name the member: %s", bad, e.Message)
		}
		if n := p.pending(); len(n) != 0 {
			t.Errorf("%v: notifications sent: %v", bad, n)
		}
	}
	if saved != nil {
		t.Error("the tool ran for a request with an invalid logLevel")
	}
	// In a legacy session the member means nothing and is not checked.
	p.initialize("2025-11-25")
	got := callChatty(t, p, map[string]any{"_meta": map[string]any{mcp.MetaLogLevel: "loud"}})
	if want := levelsFrom(server.DefaultLogLevel); !reflect.DeepEqual(got, want) {
		t.Errorf("legacy: got %v, want %v", got, want)
	}
}

// Nothing is sent once the request has been answered, in either era.
func TestNoLogAfterResponse(t *testing.T) {
	eras := map[string]map[string]any{
		"2025-11-25": {},
		"2026-07-28": {"_meta": modernLogMeta("debug")},
	}
	for era, params := range eras {
		t.Run(era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var saved *server.CallRequest
				s := logServer(t, &saved, server.WithLogLevel(mcp.LevelDebug))
				p := connect(t, s)
				if era == "2025-11-25" {
					p.initialize(era)
				}
				if got := callChatty(t, p, params); len(got) != len(allLevels) {
					t.Fatalf("got %v", got)
				}
				if err := saved.Log(context.Background(), mcp.LevelEmergency, "late", "too late"); !errors.Is(err, server.ErrLogDone) {
					t.Errorf("Log after the response: %v, want ErrLogDone", err)
				}
				saved.Logger().Error("too late")
				// A request that never logged is closed all the same.
				params["name"] = "quiet"
				callResult(t, p.call("tools/call", params))
				if err := saved.Log(context.Background(), mcp.LevelEmergency, "late", "too late"); !errors.Is(err, server.ErrLogDone) {
					t.Errorf("Log after the response of a quiet call: %v, want ErrLogDone", err)
				}
				if got := saved.LogLevel(); got != mcp.LevelDebug {
					t.Errorf("LogLevel() after the response = %q", got)
				}
				saved.Logger().Error("too late")
				p.noNote()
			})
		})
	}
}

// Messages logged from another goroutine while the handler returns are
// either ahead of the response or not sent at all: each call's messages
// carry its number, and none turns up after its response.
func TestConcurrentLogsStayAheadOfResponse(t *testing.T) {
	synctest.Test(t, testConcurrentLogsStayAheadOfResponse)
}

func testConcurrentLogsStayAheadOfResponse(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "race", Version: "1"})
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	err := server.AddTool(s, &mcp.Tool{Name: "spawn"}, func(ctx context.Context, req *server.CallRequest, in struct {
		N int `json:"n"`
	}) (string, error) {
		started := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			close(started)
			for range 40 { // fewer than the test peer buffers
				if err := req.Log(context.Background(), mcp.LevelInfo, "bg", in.N); errors.Is(err, server.ErrLogDone) {
					return
				}
			}
		}()
		<-started
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	for n := range 20 {
		r := p.call("tools/call", map[string]any{"name": "spawn", "arguments": map[string]any{"n": n}, "_meta": modernLogMeta("info")})
		callResult(t, r)
		for _, note := range p.pending() {
			var m mcp.LoggingMessageParams
			if err := json.Unmarshal(note.Params, &m); err != nil || string(m.Data) != fmt.Sprint(n) {
				t.Fatalf("call %d: message %s arrived after its response or is malformed", n, note.Params)
			}
		}
	}
	wg.Wait()
	p.noNote()
}

// Request.Logger maps slog levels and turns attributes and groups into data.
func TestRequestLoggerData(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "slogsrv", Version: "1"})
	err := server.AddTool(s, &mcp.Tool{Name: "structured"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		l := req.Logger().With("tool", req.Name).WithGroup("req")
		l.InfoContext(ctx, "hello", "n", 1, slog.Group("sub", "ok", true, "d", 1500*time.Millisecond), slog.Group("empty"))
		l.With("id", 7).WithGroup("inner").Warn("nested", "x", "y")
		req.Logger().Debug("at debug")
		req.Logger().Info("dup", "msg", "attr loses", "k", 1, "k", 2, "", "ignored", slog.Group("", "inl", 3))
		req.Logger().Error("err", "error", errors.New("boom"), "raw", json.RawMessage(`{"a":[1]}`))
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	callResult(t, p.call("tools/call", map[string]any{"name": "structured", "_meta": modernLogMeta("debug")}))
	notes := p.pending()
	want := []string{
		`{"level":"info","logger":"slogsrv","data":{"msg":"hello","tool":"structured","req":{"n":1,"sub":{"ok":true,"d":"1.5s"}}}}`,
		`{"level":"warning","logger":"slogsrv","data":{"msg":"nested","tool":"structured","req":{"id":7,"inner":{"x":"y"}}}}`,
		`{"level":"debug","logger":"slogsrv","data":{"msg":"at debug"}}`,
		`{"level":"info","logger":"slogsrv","data":{"msg":"dup","k":2,"inl":3}}`,
		`{"level":"error","logger":"slogsrv","data":{"msg":"err","error":"boom","raw":{"a":[1]}}}`,
	}
	if len(notes) != len(want) {
		t.Fatalf("got %d notifications, want %d", len(notes), len(want))
	}
	for i, n := range notes {
		if string(n.Params) != want[i] {
			t.Errorf("message %d:\n got %s\nwant %s", i, n.Params, want[i])
		}
	}
}

// slog levels map onto the eight MCP levels; Enabled follows the request's
// level, so a 2026-07-28 request without one costs no encoding.
func TestRequestLoggerLevels(t *testing.T) {
	levels := []slog.Level{slog.LevelDebug - 4, slog.LevelDebug, slog.LevelInfo, server.SlogNotice, slog.LevelWarn,
		slog.LevelError, server.SlogCritical, server.SlogAlert, server.SlogEmergency, slog.LevelError + 10}
	want := []mcp.LoggingLevel{mcp.LevelDebug, mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning,
		mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency, mcp.LevelEmergency}
	s := server.New(mcp.Implementation{Name: "lv", Version: "1"})
	enabled := map[string][]bool{}
	var mu sync.Mutex
	err := server.AddTool(s, &mcp.Tool{Name: "levels"}, func(ctx context.Context, req *server.CallRequest, in struct {
		Tag string `json:"tag"`
	}) (string, error) {
		l := req.Logger()
		var en []bool
		for _, lv := range levels {
			en = append(en, l.Enabled(ctx, lv))
			l.Log(ctx, lv, "m")
		}
		mu.Lock()
		enabled[in.Tag] = en
		mu.Unlock()
		return string(req.LogLevel()), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	r := p.call("tools/call", map[string]any{"name": "levels", "arguments": map[string]any{"tag": "all"}, "_meta": modernLogMeta("debug")})
	if got := text(t, callResult(t, r)); got != "debug" {
		t.Errorf("LogLevel() = %q", got)
	}
	if got := logLevels(t, p.pending()); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	r = p.call("tools/call", map[string]any{"name": "levels", "arguments": map[string]any{"tag": "none"}, "_meta": modernMeta()})
	if got := text(t, callResult(t, r)); got != "" {
		t.Errorf("LogLevel() without logLevel = %q", got)
	}
	if n := p.pending(); len(n) != 0 {
		t.Errorf("sent without logLevel: %d", len(n))
	}
	for i, e := range enabled["none"] {
		if e {
			t.Errorf("Enabled(%v) without logLevel", levels[i])
		}
	}
	for i, e := range enabled["all"] {
		if !e {
			t.Errorf("Enabled(%v) at debug is false", levels[i])
		}
	}
}

// WithLogName names the logger of Request.Logger's messages.
func TestWithLogName(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "srv", Version: "1"}, server.WithLogName("custom"))
	if err := server.AddTool(s, &mcp.Tool{Name: "t"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		req.Logger().Info("x")
		return "", req.Log(ctx, mcp.LevelInfo, "", "plain string")
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	callResult(t, p.call("tools/call", map[string]any{"name": "t", "_meta": modernLogMeta("info")}))
	notes := p.pending()
	if len(notes) != 2 {
		t.Fatalf("got %d notifications", len(notes))
	}
	if got, want := string(notes[0].Params), `{"level":"info","logger":"custom","data":{"msg":"x"}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := string(notes[1].Params), `{"level":"info","data":"plain string"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestLogRefusesUnknownLevel(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "srv", Version: "1"})
	errs := make(chan error, 2)
	if err := server.AddTool(s, &mcp.Tool{Name: "t"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		errs <- req.Log(ctx, "loud", "", "x")
		errs <- req.Log(ctx, mcp.LevelInfo, "", func() {}) // not JSON
		return "", nil
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	callResult(t, p.call("tools/call", map[string]any{"name": "t", "_meta": modernLogMeta("debug")}))
	if err := <-errs; err == nil {
		t.Error("unknown level accepted")
	}
	if err := <-errs; err == nil {
		t.Error("unencodable data accepted")
	}
	if n := p.pending(); len(n) != 0 {
		t.Errorf("sent %d notifications", len(n))
	}
}

// A tool logs through its request; a 2026-07-28 client asks for messages
// at info and above with _meta "io.modelcontextprotocol/logLevel".
func ExampleRequest_Logger() {
	s := server.New(mcp.Implementation{Name: "weather", Version: "1.0.0"})
	err := server.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *server.CallRequest, in struct {
		City string `json:"city"`
	}) (string, error) {
		log := req.Logger().With("city", in.City)
		log.DebugContext(ctx, "cache miss") // below info: not sent
		log.InfoContext(ctx, "looking up", slog.Group("source", "name", "met", "attempt", 1))
		return "sunny", nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Serve one request on a session, as a transport would.
	ss := s.NewSession(nil)
	stream := jsonrpc.SenderFunc(func(_ context.Context, m jsonrpc.Message) error {
		n := m.(*jsonrpc.Notification)
		fmt.Println(n.Method, string(n.Params))
		return nil
	})
	params := `{"name":"forecast","arguments":{"city":"Utrecht"},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/logLevel":"info"}}`
	resp := ss.HandleRequest(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "tools/call", Params: json.RawMessage(params)}, stream)
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("result:", res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// notifications/message {"level":"info","logger":"weather","data":{"msg":"looking up","city":"Utrecht","source":{"name":"met","attempt":1}}}
	// result: sunny
}

// Server-wide records bridged from log/slog reach every ready 2025-era
// session at or above its level, on the session's own stream, and no
// 2026-07-28 client.
func TestSlogHandlerReachesLegacySessions(t *testing.T) {
	synctest.Test(t, testSlogHandlerReachesLegacySessions)
}

func testSlogHandlerReachesLegacySessions(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "bridge", Version: "1"})
	warnOnly := connect(t, s)
	warnOnly.initialize("2025-11-25")
	callOK := func(p *peer, m string, params any) {
		t.Helper()
		if r := p.call(m, params); r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	callOK(warnOnly, mcp.MethodSetLevel, map[string]any{"level": "warning"})
	byDefault := connect(t, s)
	byDefault.initialize("2025-11-25")
	modern := connect(t, s)
	callOK(modern, mcp.MethodDiscover, map[string]any{"_meta": modernMeta()})
	notReady := connect(t, s)
	callOK(notReady, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}}) // no notifications/initialized

	h := s.SlogHandler(nil)
	l := slog.New(h).With("component", "db")
	l.Debug("d")
	l.Info("i")
	l.WithGroup("g").Warn("w", "n", 1)

	wantW := `{"level":"warning","logger":"bridge","data":{"msg":"w","component":"db","g":{"n":1}}}`
	if n := warnOnly.note(); n.Method != mcp.NotificationMessage || string(n.Params) != wantW {
		t.Errorf("warning session got %s %s", n.Method, n.Params)
	}
	if n := byDefault.note(); string(n.Params) != `{"level":"info","logger":"bridge","data":{"msg":"i","component":"db"}}` {
		t.Errorf("default session first got %s", n.Params)
	}
	if n := byDefault.note(); string(n.Params) != wantW {
		t.Errorf("default session second got %s", n.Params)
	}
	for _, p := range []*peer{warnOnly, byDefault, modern, notReady} {
		p.noNote()
	}
	if h.Dropped() != 0 {
		t.Errorf("Dropped() = %d", h.Dropped())
	}

	// Options: a logger name, and a level below which records are not handled.
	h2 := s.SlogHandler(&server.SlogOptions{Logger: "audit", Level: slog.LevelError})
	if h2.Enabled(context.Background(), slog.LevelWarn) || !h2.Enabled(context.Background(), slog.LevelError) {
		t.Error("Enabled ignores SlogOptions.Level")
	}
	slog.New(h2).Warn("not handled")
	slog.New(h2).Error("handled")
	want := `{"level":"error","logger":"audit","data":{"msg":"handled"}}`
	for _, p := range []*peer{warnOnly, byDefault} {
		if n := p.note(); string(n.Params) != want {
			t.Errorf("got %s, want %s", n.Params, want)
		}
		p.noNote()
	}
}
