package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// stampServer has methods returning each kind of result.
func stampServer(t *testing.T) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "stamp", Version: "2"})
	type none struct{}
	must(t, server.AddTool(s, &mcp.Tool{Name: "plain"}, func(context.Context, *server.CallRequest, none) (string, error) { return "x", nil }))
	must(t, server.AddTool(s, &mcp.Tool{Name: "with-meta"}, func(context.Context, *server.CallRequest, none) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "m"}}, Meta: mcp.Meta{"example.com/k": "v"}}, nil
	}))
	must(t, server.AddMethod(s, server.MethodSpec{Name: "example/ask"}, func(context.Context, *server.Request, *none) (*mcp.InputRequiredResult, error) {
		return &mcp.InputRequiredResult{InputRequests: map[string]mcp.InputRequest{"q": {Method: "elicitation/create", Params: json.RawMessage(`{"message":"?"}`)}}, RequestState: "s1"}, nil
	}))
	created := time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)
	ttl := time.Minute
	must(t, server.AddMethod(s, server.MethodSpec{Name: "example/task"}, func(context.Context, *server.Request, *none) (*mcp.CreateTaskResult, error) {
		return &mcp.CreateTaskResult{Task: mcp.Task{TaskID: "t1", Status: mcp.TaskWorking, CreatedAt: created, LastUpdatedAt: created, TTL: &ttl}}, nil
	}))
	must(t, server.AddMethod(s, server.MethodSpec{Name: "example/raw", Cacheable: true}, func(context.Context, *server.Request, *none) (json.RawMessage, error) {
		return json.RawMessage(`{ "items" : [1], "ttlMs": 5 , "cacheScope":"private"}`), nil
	}))
	return s
}

func decodeMap(t *testing.T, r *jsonrpc.Response) map[string]any {
	t.Helper()
	var m map[string]any
	decodeResult(t, r, &m)
	return m
}

func TestModernStamps(t *testing.T) {
	p := connect(t, stampServer(t))
	modern := func(method string, params map[string]any) map[string]any {
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = modernMeta()
		return decodeMap(t, p.call(method, params))
	}
	info := map[string]any{"name": "stamp", "version": "2"}

	r := modern("tools/call", map[string]any{"name": "plain"})
	if r["resultType"] != "complete" || r["ttlMs"] != nil || r["cacheScope"] != nil || !sameAny(r["_meta"], map[string]any{mcp.MetaServerInfo: info}) {
		t.Errorf("tools/call: %v", r)
	}
	r = modern("tools/call", map[string]any{"name": "with-meta"})
	if !sameAny(r["_meta"], map[string]any{mcp.MetaServerInfo: info, "example.com/k": "v"}) || r["ttlMs"] != nil {
		t.Errorf("tools/call with _meta: %v", r)
	}
	r = modern("tools/list", nil)
	if r["resultType"] != "complete" || r["ttlMs"] != float64(60000) || r["cacheScope"] != "public" {
		t.Errorf("tools/list: %v", r)
	}
	r = modern("example/raw", nil)
	if r["ttlMs"] != float64(5) || r["cacheScope"] != "private" || r["resultType"] != "complete" || !sameAny(r["items"], []any{float64(1)}) {
		t.Errorf("handler's own cache hints must be kept: %v", r)
	}
	r = modern("example/ask", nil)
	if r["resultType"] != "input_required" || r["requestState"] != "s1" || r["inputRequests"] == nil {
		t.Errorf("input_required: %v", r)
	}
	r = modern("example/task", nil)
	if r["resultType"] != "task" || r["taskId"] != "t1" || r["status"] != "working" || r["ttlMs"] != float64(60000) || r["createdAt"] != "2026-11-23T05:00:00Z" || r["task"] != nil {
		t.Errorf("task (2026-07-28, flat): %v", r)
	}
}

// The stamps the server writes into a result are JSON strings whatever
// they hold: a cache scope with characters JSON escapes (and Go's
// strconv.Quote spells \v, \x7f) reads back as itself.
func TestStampedCacheScopeIsJSON(t *testing.T) {
	scope := mcp.CacheScope("private\v\x7f\x00\"\u2028")
	s := server.New(mcp.Implementation{Name: "stamp", Version: "2"}, server.WithListCaching(time.Second, scope))
	if err := server.AddTool(s, &mcp.Tool{Name: "plain"}, func(context.Context, *server.CallRequest, struct{}) (string, error) { return "x", nil }); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	r := decodeMap(t, p.call("tools/list", map[string]any{"_meta": modernMeta()}))
	if r["cacheScope"] != string(scope) || r["ttlMs"] != float64(1000) || r["resultType"] != "complete" {
		t.Errorf("tools/list: %v", r)
	}
}

func TestLegacyResultKinds(t *testing.T) {
	p := connect(t, stampServer(t))
	p.initialize("2025-11-25")
	r := decodeMap(t, p.call("tools/call", map[string]any{"name": "plain"}))
	if r["resultType"] != nil || r["_meta"] != nil {
		t.Errorf("a 2025 result carries 2026 stamps: %v", r)
	}
	task := decodeMap(t, p.call("example/task", nil))
	inner, _ := task["task"].(map[string]any)
	if task["resultType"] != nil || inner["taskId"] != "t1" || inner["ttl"] != float64(60000) {
		t.Errorf("task (2025-11-25, nested): %v", task)
	}
	// input_required does not exist in 2025-11-25: a server bug, not a
	// shape the client could misread.
	e := wantError(t, p.call("example/ask", nil), jsonrpc.CodeInternalError)
	if e.Message == "" {
		t.Error("no message")
	}
}

func sameAny(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
