package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolwire/toolwire/internal/testenv"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

const discoverResult = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern-fake","version":"2"}}}`

// modernFake answers server/discover and tools/list like a 2026 server.
func modernFake(t *testing.T, tools string, call func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request)) *fake {
	f := newFake(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		switch req.Method {
		case "server/discover":
			writeResult(w, req.ID, discoverResult)
		case "tools/list":
			writeResult(w, req.ID, `{"resultType":"complete","tools":`+tools+`,"ttlMs":60000,"cacheScope":"public"}`)
		case "tools/call":
			call(w, r, req)
		default:
			return false
		}
		return true
	}
	return f
}

const headerTools = `[{"name":"sql","inputSchema":{"type":"object","properties":{
  "region":{"type":"string","x-mcp-header":"Region"},
  "count":{"type":"integer","x-mcp-header":"Count"},
  "dry":{"type":"boolean","x-mcp-header":"Dry-Run"},
  "opt":{"type":"string","x-mcp-header":"Opt"},
  "nested":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
  "query":{"type":"string"}}}},
 {"name":"bad-space","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Has Space"}}}},
 {"name":"bad-object","inputSchema":{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"Obj"}}}},
 {"name":"bad-dup","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}},
 {"name":"bad-empty","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}}]`

func TestModernHeadersAndMeta(t *testing.T) {
	f := modernFake(t, headerTools, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeResult(w, req.ID, `{"resultType":"complete","content":[]}`)
	})
	c := connect(t, f.transport(), client.WithClientInfo(mcp.Implementation{Name: "tester", Version: "9"}))
	if c.Era() != mcp.EraModern || c.ServerInfo().Name != "modern-fake" {
		t.Fatalf("era %v server %+v", c.Era(), c.ServerInfo())
	}
	ctx := context.Background()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "sql" {
		t.Fatalf("tools with invalid x-mcp-header were not dropped: %d tools", len(tools))
	}
	args := json.RawMessage(`{"region":"Hello, 世界","count":42,"dry":false,"opt":null,"nested":{"zone":" padded "},"query":"SELECT 1"}`)
	if _, err := c.CallTool(ctx, "sql", args); err != nil {
		t.Fatal(err)
	}
	for _, s := range f.requests() {
		if s.Method != "POST" {
			continue
		}
		if s.Header.Get("MCP-Protocol-Version") != "2026-07-28" || s.Header.Get("Mcp-Method") != s.RPC {
			t.Errorf("%s: headers %v", s.RPC, s.Header)
		}
		var body struct {
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(s.Body, &body)
		m := body.Params.Meta
		if string(m["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` || string(m["io.modelcontextprotocol/clientCapabilities"]) != `{}` ||
			!strings.Contains(string(m["io.modelcontextprotocol/clientInfo"]), `"tester"`) {
			t.Errorf("%s: _meta %s", s.RPC, s.Body)
		}
	}
	call := f.calls("tools/call")[0]
	want := map[string]string{
		"Mcp-Name":          "sql",
		"Mcp-Param-Region":  "=?base64?SGVsbG8sIOS4lueVjA==?=",
		"Mcp-Param-Count":   "42",
		"Mcp-Param-Dry-Run": "false",
		"Mcp-Param-Zone":    "=?base64?IHBhZGRlZCA=?=",
	}
	for k, v := range want {
		if got := call.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"Mcp-Param-Opt", "Mcp-Param-Query"} {
		if _, ok := call.Header[k]; ok {
			t.Errorf("%s sent for a null or unannotated argument", k)
		}
	}
	if !strings.Contains(string(call.Body), `"arguments":{"region":"Hello, 世界","count":42`) {
		t.Errorf("arguments not sent as given: %s", call.Body)
	}
}

func TestModernRetriesWithSupportedVersion(t *testing.T) {
	f := newFake(t)
	var first atomic.Bool
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if !first.Swap(true) {
			writeJSON(w, 400, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"x"}}}`, req.ID))
			return true
		}
		if req.Method == "server/discover" {
			writeResult(w, req.ID, discoverResult)
			return true
		}
		return false
	}
	c := connect(t, f.transport(), client.WithEra(mcp.EraModern))
	if c.Era() != mcp.EraModern {
		t.Fatal("not modern")
	}
	if n := len(f.calls("server/discover")); n != 2 {
		t.Errorf("%d discover requests, want 2 (one retry)", n)
	}
}

func TestModernOutputValidation(t *testing.T) {
	tools := `[{"name":"weather","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"temp":{"type":"number"},"city":{"type":"string"}},"required":["temp","city"]}},
	{"name":"list","inputSchema":{"type":"object"},"outputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":{"type":"integer"}}}]`
	var reply atomic.Value
	f := modernFake(t, tools, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeResult(w, req.ID, reply.Load().(string))
	})
	c := connect(t, f.transport())
	ctx := context.Background()

	reply.Store(`{"resultType":"complete","content":[],"structuredContent":{"temp":21.5,"city":"Oslo"}}`)
	if _, err := c.CallTool(ctx, "weather", nil); err != nil {
		t.Fatalf("valid structured content rejected: %v", err)
	}
	reply.Store(`{"resultType":"complete","content":[],"structuredContent":{"temp":"warm","city":"Oslo"}}`)
	_, err := c.CallTool(ctx, "weather", nil)
	var pe *client.ProtocolError
	if !errors.As(err, &pe) || pe.Path != "/temp" {
		t.Fatalf("mismatch: err = %v", err)
	}
	if _, err := c.CallTool(ctx, "weather", nil, client.WithOutputValidation(false)); err != nil {
		t.Fatalf("validation not switched off: %v", err)
	}
	reply.Store(`{"resultType":"complete","content":[]}`)
	if _, err := c.CallTool(ctx, "weather", nil); client.CodeOf(err) != client.CodeProtocol {
		t.Fatalf("missing structuredContent: err = %v", err)
	}
	reply.Store(`{"resultType":"complete","content":[],"structuredContent":[1,2,"three"]}`)
	if _, err := c.CallTool(ctx, "list", nil); !errors.As(err, &pe) || pe.Path != "/2" {
		t.Fatalf("draft-07 array schema: err = %v", err)
	}
	type out struct {
		Temp float64 `json:"temp"`
		City string  `json:"city"`
	}
	reply.Store(`{"resultType":"complete","content":[],"structuredContent":{"temp":3,"city":"Bergen"}}`)
	got, err := client.CallToolAs[out](ctx, c, "weather", map[string]any{})
	if err != nil || got.City != "Bergen" || got.Temp != 3 {
		t.Fatalf("CallToolAs = %+v, %v", got, err)
	}
	if n := len(f.calls("tools/list")); n != 1 {
		t.Errorf("tools/list sent %d times; the cache should serve every call", n)
	}
	c2 := connect(t, f.transport(), client.WithOutputValidation(false))
	reply.Store(`{"resultType":"complete","content":[],"structuredContent":{"temp":"warm"}}`)
	if _, err := c2.CallTool(ctx, "weather", nil); err != nil {
		t.Fatalf("client-wide WithOutputValidation(false): %v", err)
	}
}

func TestListChangedDropsCache(t *testing.T) {
	f := newFake(t)
	var version atomic.Int32
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		switch req.Method {
		case "server/discover":
			legacyOnly(w, r, req)
		case "tools/list":
			typ := "string"
			if version.Load() > 0 {
				typ = "number"
			}
			writeResult(w, req.ID, `{"tools":[{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"v":{"type":"`+typ+`"}}}}]}`)
		case "tools/call":
			if version.Load() == 0 {
				writeResult(w, req.ID, `{"content":[],"structuredContent":{"v":"s"}}`)
				return true
			}
			writeSSE(w, sseData(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`),
				sseData(`{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":{"content":[],"structuredContent":{"v":1}}}`))
		default:
			return false
		}
		return true
	}
	c := connect(t, f.transport())
	ctx := context.Background()
	if _, err := c.CallTool(ctx, "t", nil); err != nil {
		t.Fatal(err)
	}
	version.Store(1)
	// The reply carries list_changed before it: the stale schema is dropped
	// and the new one fetched, so {"v":1} validates.
	if _, err := c.CallTool(ctx, "t", nil); err != nil {
		t.Fatalf("after list_changed: %v", err)
	}
	if n := len(f.calls("tools/list")); n != 2 {
		t.Errorf("%d tools/list requests, want 2", n)
	}
}

func TestToolPagesAndCursorLoop(t *testing.T) {
	f := newFake(t)
	loop := false
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method == "server/discover" {
			return legacyOnly(w, r, req)
		}
		if req.Method != "tools/list" {
			return false
		}
		var p struct {
			Cursor *string `json:"cursor"`
		}
		json.Unmarshal(req.Params, &p)
		switch {
		case p.Cursor == nil:
			writeResult(w, req.ID, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":""}`)
		case *p.Cursor == "" || loop:
			writeResult(w, req.ID, `{"tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"c2"}`)
		default:
			writeResult(w, req.ID, `{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}`)
		}
		return true
	}
	c := connect(t, f.transport())
	ctx := context.Background()
	var pages [][]string
	for page, err := range c.ToolPages(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range page.Tools {
			names = append(names, tl.Name)
		}
		pages = append(pages, names)
	}
	if fmt.Sprint(pages) != "[[a] [b] [c]]" {
		t.Fatalf("pages = %v (an empty cursor is a cursor, not the end)", pages)
	}
	all, err := c.ListTools(ctx)
	if err != nil || len(all) != 3 {
		t.Fatalf("ListTools = %d tools, %v", len(all), err)
	}
	loop = true
	if _, err := c.ListTools(ctx); client.CodeOf(err) != client.CodeProtocol || !strings.Contains(err.Error(), "repeats") {
		t.Fatalf("cursor loop: err = %v", err)
	}
}

func TestTimeoutCancelsModernByClosingStream(t *testing.T) {
	closed := make(chan struct{}, 1)
	f := modernFake(t, `[]`, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeSSE(w, sseData(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"started"}}`))
		<-r.Context().Done()
		closed <- struct{}{}
	})
	c := connect(t, f.transport())
	_, err := c.CallTool(context.Background(), "slow", nil, client.WithTimeout(200*time.Millisecond), client.WithOutputValidation(false))
	if client.CodeOf(err) != client.CodeTransport || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	testwait.Recv(t, closed, "the server to see the stream close")
	if n := len(f.calls("notifications/cancelled")); n != 0 {
		t.Errorf("modern HTTP sent %d notifications/cancelled; closing the stream is the cancellation", n)
	}
}

func TestCancelLegacyHTTPSendsCancelled(t *testing.T) {
	f := newFake(t)
	arrived := make(chan struct{}, 1)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeSSE(w, "id: 1\ndata: \n\n")
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	c := connect(t, f.transport(), legacy())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // cancelled once the server has the call
		select {
		case <-arrived:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer cancel()
	_, err := c.CallTool(ctx, "slow", nil, client.WithOutputValidation(false))
	if !errors.Is(err, context.Canceled) || client.CodeOf(err) != client.CodeTransport {
		t.Fatalf("err = %v", err)
	}
	callID := ""
	for _, s := range f.calls("tools/call") {
		var m struct{ ID json.RawMessage }
		json.Unmarshal(s.Body, &m)
		callID = string(m.ID)
	}
	got := f.calls("notifications/cancelled")
	if len(got) != 1 || !bodyContains(got[0], `"requestId":`+callID) {
		t.Fatalf("cancelled notifications: %+v", got)
	}
}

func TestStdioCancelSendsCancelled(t *testing.T) {
	var logs testenv.SyncBuffer
	c := connect(t, fakeCommand(t, "cancel"), client.WithEra(mcp.EraLegacy), client.WithLogger(newTextLogger(&logs)))
	_, err := c.CallTool(context.Background(), "work", nil, client.WithTimeout(100*time.Millisecond), client.WithOutputValidation(false))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	testwait.WaitFor(t, "the child to receive notifications/cancelled (its stderr says CANCELLED)", func() bool {
		return strings.Contains(logs.String(), "CANCELLED ")
	})
}

func TestInputRequiredRounds(t *testing.T) {
	var rounds atomic.Int32
	f := modernFake(t, `[]`, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		var p struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			RequestState   *string                    `json:"requestState"`
		}
		json.Unmarshal(req.Params, &p)
		switch rounds.Add(1) {
		case 1:
			writeResult(w, req.ID, `{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"name?"}}},"requestState":"s\u003c1\u003e"}`)
		default:
			if p.RequestState == nil || *p.RequestState != "s<1>" || string(p.InputResponses["who"]) != `{"action":"accept","content":{"name":"Ada"}}` {
				writeResult(w, req.ID, `{"resultType":"complete","isError":true,"content":[{"type":"text","text":"bad retry"}]}`)
				return
			}
			writeResult(w, req.ID, `{"resultType":"complete","content":[{"type":"text","text":"hello Ada"}]}`)
		}
	})
	c := connect(t, f.transport(),
		client.WithCapabilities(mcp.ClientCapabilities{Elicitation: json.RawMessage(`{}`)}),
		client.WithRequestHandler(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != "elicitation/create" {
				return nil, fmt.Errorf("unexpected %s", method)
			}
			return map[string]any{"action": "accept", "content": map[string]string{"name": "Ada"}}, nil
		}),
	)
	res, err := c.CallTool(context.Background(), "greet", nil, client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[0].(*mcp.TextContent).Text != "hello Ada" {
		t.Fatalf("result %+v", res)
	}
	calls := f.calls("tools/call")
	if len(calls) != 2 || string(calls[0].Body) == string(calls[1].Body) {
		t.Fatal("the retry must be a new request")
	}
}
