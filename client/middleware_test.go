package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// recorder is a middleware that records each request it sees and the
// result or error that came back.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) middleware(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		res, err := next(ctx, req)
		r.mu.Lock()
		defer r.mu.Unlock()
		entry := fmt.Sprintf("%s id-set=%v params=%s", req.Method, req.ID.IsValid(), req.Params)
		if raw, ok := res.(json.RawMessage); ok {
			entry += " result=" + string(raw)
		}
		if err != nil {
			entry += " error=" + err.Error()
		}
		r.seen = append(r.seen, entry)
		return res, err
	}
}

func (r *recorder) entries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// TestMiddlewareObserves: the middleware sees every request the client
// sends, negotiation included, with the caller's params (no id, no _meta
// the client adds) and the raw result.
func TestMiddlewareObserves(t *testing.T) {
	f := newFake(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		switch req.Method {
		case "server/discover":
			return legacyOnly(w, r, req)
		case "tools/call":
			writeResult(w, req.ID, textResult("done"))
			return true
		}
		return false
	}
	var rec recorder
	c := connect(t, f.transport(), client.WithMiddleware(rec.middleware))
	_, err := c.CallTool(context.Background(), "x", map[string]int{"a": 1}, client.WithOutputValidation(false), client.WithProgress(func(client.Progress) {}))
	if err != nil {
		t.Fatal(err)
	}
	got := rec.entries()
	if len(got) != 3 {
		t.Fatalf("middleware saw %d requests: %q", len(got), got)
	}
	for i, prefix := range []string{"server/discover id-set=false params= ", "initialize id-set=false params={", "tools/call id-set=false params={\"arguments\":{\"a\":1},\"name\":\"x\"} result=" + textResult("done")} {
		if !strings.HasPrefix(got[i], prefix) {
			t.Errorf("entry %d = %q, want prefix %q", i, got[i], prefix)
		}
	}
	if !strings.Contains(got[0], "error=server/discover: JSON-RPC error -32000") {
		t.Errorf("the failed probe's error was not seen: %q", got[0])
	}
	// What went out does carry the progress token the client added.
	if call := f.calls("tools/call"); len(call) != 1 || !bodyContains(call[0], `"progressToken"`) {
		t.Errorf("tools/call sent: %+v", call)
	}
}

// TestMiddlewareRewritesAndRefuses: a middleware can change a request's
// params before they are sent, replace a result, and refuse a request,
// in which case nothing is sent and the caller gets its error.
func TestMiddlewareRewritesAndRefuses(t *testing.T) {
	f := newFake(t)
	f.on("tools/call", func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		writeResult(w, req.ID, textResult("called with "+string(req.Params)))
	})
	errForbidden := errors.New("policy: tool forbidden")
	policy := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method != mcp.MethodCallTool {
				return next(ctx, req)
			}
			var p struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			}
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, err
			}
			switch p.Name {
			case "forbidden":
				return nil, errForbidden
			case "cached":
				return json.RawMessage(textResult("from the cache")), nil
			}
			p.Arguments["limit"] = 10 // clamp
			raw, _ := json.Marshal(p)
			r := *req
			r.Params = raw
			return next(ctx, &r)
		}
	}
	c := connect(t, f.transport(), client.WithEra(mcp.EraLegacy), client.WithMiddleware(policy))
	ctx := context.Background()

	res, err := c.CallTool(ctx, "search", map[string]any{"q": "go", "limit": 1000}, client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"arguments":{"limit":10,"q":"go"}`) {
		t.Errorf("server saw %s", text)
	}

	res, err = c.CallTool(ctx, "cached", nil, client.WithOutputValidation(false))
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "from the cache" {
		t.Fatalf("cached: %v %+v", err, res)
	}

	before := len(f.requests())
	_, err = c.CallTool(ctx, "forbidden", map[string]any{}, client.WithOutputValidation(false))
	if !errors.Is(err, errForbidden) {
		t.Fatalf("err = %v, want the middleware's error", err)
	}
	if n := len(f.requests()); n != before {
		t.Errorf("a refused request reached the server (%d requests, want %d)", n, before)
	}
	if n := len(f.calls("tools/call")); n != 1 {
		t.Errorf("%d tools/call requests sent, want 1", n)
	}
}

// TestMiddlewareOrder: the first middleware is the outermost.
func TestMiddlewareOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	mw := func(name string) jsonrpc.Middleware {
		return func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
			return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				mu.Lock()
				order = append(order, name+">"+req.Method)
				mu.Unlock()
				res, err := next(ctx, req)
				mu.Lock()
				order = append(order, name+"<")
				mu.Unlock()
				return res, err
			}
		}
	}
	c := connect(t, inProcess(t, serverRequestsServer(nil)), client.WithEra(mcp.EraModern), client.WithMiddleware(mw("outer"), mw("inner")))
	mu.Lock()
	order = nil
	mu.Unlock()
	if _, err := c.Call(context.Background(), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(order) != "[outer>tools/list inner>tools/list inner< outer<]" {
		t.Errorf("order %v", order)
	}
}

// TestReceivingMiddlewareRefuses: a receiving middleware can answer a
// server request with an error instead of the RequestHandler.
func TestReceivingMiddlewareRefuses(t *testing.T) {
	var handled atomic.Bool
	opts := []client.Option{
		client.WithEra(mcp.EraLegacy),
		client.WithCapabilities(mcp.ClientCapabilities{Roots: &mcp.ListChangedCapability{}}),
		client.WithRequestHandler(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			handled.Store(true)
			return mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
		}),
		client.WithReceivingMiddleware(func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
			return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				if req.Method == mcp.MethodListRoots {
					return nil, jsonrpc.NewError(-32001, "roots are private")
				}
				return next(ctx, req)
			}
		}),
	}
	c := connect(t, inProcess(t, serverRequestsServer(nil)), opts...)
	_, err := c.CallTool(context.Background(), "roots", nil)
	if !refusedByClient(err, -32001, "roots are private") {
		t.Fatalf("err = %v", err)
	}
	if handled.Load() {
		t.Error("the RequestHandler ran for a refused request")
	}
}

// TestReceivingMiddlewareSeesInputRequests: the inputRequests of an
// input_required result go through the receiving middleware, each as a
// request whose ID is its key.
func TestReceivingMiddlewareSeesInputRequests(t *testing.T) {
	var round atomic.Int32
	f := modernFake(t, `[]`, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		if round.Add(1) == 1 {
			writeResult(w, req.ID, `{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"name?"}}}}`)
			return
		}
		var p struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
		}
		json.Unmarshal(req.Params, &p)
		writeResult(w, req.ID, textResult("hello "+string(p.InputResponses["who"])))
	})
	var seen []string
	c := connect(t, f.transport(),
		client.WithCapabilities(mcp.ClientCapabilities{Elicitation: json.RawMessage(`{}`)}),
		client.WithReceivingMiddleware(func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
			return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				seen = append(seen, req.ID.String()+" "+req.Method+" "+string(req.Params))
				return map[string]any{"action": "accept", "content": map[string]string{"name": "Ada"}}, nil
			}
		}),
	)
	res, err := c.CallTool(context.Background(), "greet", nil, client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != `hello {"action":"accept","content":{"name":"Ada"}}` {
		t.Errorf("result %q", got)
	}
	if fmt.Sprint(seen) != `["who" elicitation/create {"message":"name?"}]` {
		t.Errorf("middleware saw %q", seen)
	}
}
