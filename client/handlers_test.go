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
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

func acceptAll(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
}

func echoModel(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	text := p.Messages[0].Content[0].(*mcp.TextContent).Text
	return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + text}}, Model: "echo-1", StopReason: "endTurn"}, nil
}

func TestCapabilitiesFollowHandlers(t *testing.T) {
	s := standInServer(t, map[string]standIn{
		"test/caps": func(_ context.Context, r *server.Request, _ json.RawMessage) (any, error) {
			return map[string]any{"caps": r.Peer.ClientCapabilities}, nil
		},
	})
	cases := []struct {
		name string
		opts []client.Option
		want string
	}{
		{"none", nil, `{}`},
		{"request handler alone", []client.Option{client.WithRequestHandler(func(context.Context, string, json.RawMessage) (any, error) { return nil, nil })}, `{}`},
		{"elicitation", []client.Option{client.WithElicitationHandler(acceptAll)}, `{"elicitation":{"form":{}}}`},
		{"elicitation with url", []client.Option{client.WithElicitationHandler(acceptAll, client.ElicitURLMode())}, `{"elicitation":{"form":{},"url":{}}}`},
		{"sampling", []client.Option{client.WithSamplingHandler(echoModel)}, `{"sampling":{}}`},
		{"sampling with tools", []client.Option{client.WithSamplingHandler(echoModel, client.SamplingTools())}, `{"sampling":{"tools":{}}}`},
		{"roots", []client.Option{client.WithRoots()}, `{"roots":{"listChanged":true}}`},
		{"all", []client.Option{client.WithRoots(mcp.Root{URI: "file:///w"}), client.WithSamplingHandler(echoModel), client.WithElicitationHandler(acceptAll)},
			`{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}}`},
		{"explicit wins", []client.Option{client.WithElicitationHandler(acceptAll, client.ElicitURLMode()),
			client.WithCapabilities(mcp.ClientCapabilities{Elicitation: json.RawMessage(`{}`)})}, `{"elicitation":{}}`},
		{"explicit merges", []client.Option{client.WithCapabilities(mcp.ClientCapabilities{Experimental: map[string]json.RawMessage{"x": json.RawMessage(`{}`)}}),
			client.WithSamplingHandler(echoModel)}, `{"sampling":{},"experimental":{"x":{}}}`},
	}
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		for _, tc := range cases {
			t.Run(era.String()+"/"+tc.name, func(t *testing.T) {
				c := connect(t, inProcess(t, s), append(tc.opts, client.WithEra(era))...)
				raw, err := c.Call(context.Background(), "test/caps", nil)
				if err != nil {
					t.Fatal(err)
				}
				var got struct{ Caps any }
				var want any
				json.Unmarshal(raw, &got)
				json.Unmarshal([]byte(tc.want), &want)
				if fmt.Sprint(got.Caps) != fmt.Sprint(want) {
					t.Errorf("declared %s, want %s", raw, tc.want)
				}
			})
		}
	}
}

// askServer has test/ask, which sends the client the request its params
// name (legacy: a server-to-client request) and answers with the client's
// answer, or with the client's error as {"code", "message"}. Params given
// as a string are sent as the raw JSON it holds.
func askServer(t *testing.T) *server.Server {
	return standInServer(t, map[string]standIn{
		"test/ask": func(ctx context.Context, r *server.Request, params json.RawMessage) (any, error) {
			var p struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			json.Unmarshal(params, &p)
			var raw string
			if json.Unmarshal(p.Params, &raw) == nil {
				p.Params = json.RawMessage(raw)
			}
			res, err := r.Call(ctx, p.Method, p.Params)
			var ce *server.ClientError
			if errors.As(err, &ce) {
				return map[string]any{"code": ce.Code, "message": ce.Message}, nil
			}
			if err != nil {
				return nil, err
			}
			return map[string]json.RawMessage{"answer": res}, nil
		},
	})
}

const (
	validForm   = `{"message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"x"}},"required":["name"]}}`
	nestedForm  = `{"message":"Who?","requestedSchema":{"type":"object","properties":{"who":{"type":"object","properties":{"n":{"type":"string"}}}}}}`
	urlRequest  = `{"mode":"url","message":"Pay","elicitationId":"e1","url":"https://pay.example/1"}`
	samplingReq = `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`
	toolsReq    = `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
)

func TestTypedHandlersLegacy(t *testing.T) {
	s := askServer(t)
	var elicited atomic.Int32
	var seenSchema atomic.Value
	elicit := func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		elicited.Add(1)
		seenSchema.Store(string(p.RequestedSchema))
		return acceptAll(ctx, p)
	}
	c := connect(t, inProcess(t, s), client.WithEra(mcp.EraLegacy),
		client.WithElicitationHandler(elicit), client.WithSamplingHandler(echoModel),
		client.WithRoots(mcp.Root{URI: "file:///work", Name: "work"}))
	ask := func(method, params string) string {
		t.Helper()
		raw, err := c.Call(context.Background(), "test/ask", json.RawMessage(`{"method":"`+method+`","params":`+params+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	if got := ask("elicitation/create", validForm); !strings.Contains(got, `"action":"accept"`) || !strings.Contains(got, `"name":"Ada"`) {
		t.Errorf("elicitation answer %s", got)
	}
	if s, _ := seenSchema.Load().(string); !strings.Contains(s, `"default":"x"`) {
		t.Errorf("the handler saw schema %s", s)
	}
	for name, params := range map[string]string{
		"nested schema":    nestedForm,
		"url not declared": urlRequest,
		"no schema":        `{"message":"Who?"}`,
		"duplicate member": `"{\"message\":\"a\",\"message\":\"b\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}"`,
	} {
		if got := ask("elicitation/create", params); !strings.Contains(got, `"code":-32602`) {
			t.Errorf("%s: answered %s, want -32602", name, got)
		}
	}
	if n := elicited.Load(); n != 1 {
		t.Errorf("the handler saw %d elicitations, want only the valid one", n)
	}

	if got := ask("sampling/createMessage", samplingReq); !strings.Contains(got, `"text":"echo: hi"`) || !strings.Contains(got, `"model":"echo-1"`) {
		t.Errorf("sampling answer %s", got)
	}
	if got := ask("sampling/createMessage", toolsReq); !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "sampling.tools") {
		t.Errorf("tools without sampling.tools: %s", got)
	}
	if got := ask("sampling/createMessage", `{"messages":[]}`); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("no maxTokens: %s", got)
	}
	if got := ask("roots/list", `{}`); !strings.Contains(got, `{"roots":[{"uri":"file:///work","name":"work"}]}`) {
		t.Errorf("roots answer %s", got)
	}
	if err := c.SetRoots(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ask("roots/list", `{}`); !strings.Contains(got, `{"roots":[]}`) {
		t.Errorf("roots after SetRoots() %s", got)
	}
}

func TestURLElicitation(t *testing.T) {
	var got *mcp.ElicitParams
	c := connect(t, inProcess(t, askServer(t)), client.WithEra(mcp.EraLegacy),
		client.WithElicitationHandler(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			got = p
			return &mcp.ElicitResult{Action: mcp.ActionAccept}, nil
		}, client.ElicitURLMode()))
	raw, err := c.Call(context.Background(), "test/ask", json.RawMessage(`{"method":"elicitation/create","params":`+urlRequest+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"action":"accept"`) || got == nil || got.URL != "https://pay.example/1" || got.ElicitationID != "e1" {
		t.Errorf("answer %s, handler saw %+v", raw, got)
	}
}

func TestSetRootsNotifiesLegacySession(t *testing.T) {
	f := newFake(t)
	f.handle = legacyOnly
	c := connect(t, f.transport(), client.WithEra(mcp.EraLegacy), client.WithRoots())
	if err := c.SetRoots(context.Background(), mcp.Root{URI: "file:///a"}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.calls("notifications/roots/list_changed")); n != 1 {
		t.Errorf("%d notifications/roots/list_changed, want 1", n)
	}
	if r := c.Roots(); len(r) != 1 || r[0].URI != "file:///a" {
		t.Errorf("roots %+v", r)
	}
	plain := connect(t, f.transport(), client.WithEra(mcp.EraLegacy))
	if err := plain.SetRoots(context.Background()); err == nil {
		t.Error("SetRoots without WithRoots succeeded")
	}
}

// mrtrFake is a 2026-07-28 server whose tools/call "ask" answers first with
// inputRequests (the JSON object given) and requestState, then with the
// inputResponses it received as text. Every tools/call body is kept.
func mrtrFake(t *testing.T, inputRequests, requestState string) (*fake, *[]string) {
	var mu sync.Mutex
	var bodies []string
	f := modernFake(t, `[]`, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		mu.Lock()
		bodies = append(bodies, string(req.Params))
		mu.Unlock()
		var p struct {
			InputResponses json.RawMessage `json:"inputResponses"`
		}
		json.Unmarshal(req.Params, &p)
		if p.InputResponses == nil {
			writeResult(w, req.ID, `{"resultType":"input_required","inputRequests":`+inputRequests+`,"requestState":`+requestState+`}`)
			return
		}
		writeResult(w, req.ID, textResult(string(p.InputResponses)))
	})
	return f, &bodies
}

func TestInputRequiredTypedHandlers(t *testing.T) {
	inputs := `{"who":{"method":"elicitation/create","params":` + validForm + `},
	  "draft":{"method":"sampling/createMessage","params":` + samplingReq + `},
	  "dirs":{"method":"roots/list"}}`
	state := `"st<1>&\u00e9 \/"`
	f, bodies := mrtrFake(t, inputs, state)
	c := connect(t, f.transport(), client.WithElicitationHandler(acceptAll), client.WithSamplingHandler(echoModel),
		client.WithRoots(mcp.Root{URI: "file:///w"}))
	res, err := c.CallTool(context.Background(), "ask", nil, client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	var answers map[string]json.RawMessage
	if err := json.Unmarshal([]byte(textOf(res)), &answers); err != nil {
		t.Fatalf("answers %s: %v", textOf(res), err)
	}
	if len(answers) != 3 ||
		!strings.Contains(string(answers["who"]), `"action":"accept"`) ||
		!strings.Contains(string(answers["draft"]), `"echo: hi"`) ||
		string(answers["dirs"]) != `{"roots":[{"uri":"file:///w"}]}` {
		t.Errorf("inputResponses %s", textOf(res))
	}
	if len(*bodies) != 2 || !strings.Contains((*bodies)[1], `"requestState":`+state) {
		t.Errorf("requestState not echoed byte for byte: %s", (*bodies)[len(*bodies)-1])
	}
}

func TestInputRequiredRefusals(t *testing.T) {
	t.Run("invalid schema", func(t *testing.T) {
		f, _ := mrtrFake(t, `{"who":{"method":"elicitation/create","params":`+nestedForm+`}}`, `"s"`)
		called := false
		c := connect(t, f.transport(), client.WithElicitationHandler(func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			called = true
			return acceptAll(ctx, p)
		}))
		_, err := c.CallTool(context.Background(), "ask", nil, client.WithOutputValidation(false))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || called {
			t.Errorf("err = %v (handler called: %v), want -32602 without the handler", err, called)
		}
	})
	t.Run("undeclared capability", func(t *testing.T) {
		f, bodies := mrtrFake(t, `{"draft":{"method":"sampling/createMessage","params":`+samplingReq+`}}`, `"s"`)
		c := connect(t, f.transport(), client.WithElicitationHandler(acceptAll),
			client.WithRequestHandler(func(context.Context, string, json.RawMessage) (any, error) { return map[string]any{}, nil }))
		_, err := c.CallTool(context.Background(), "ask", nil, client.WithOutputValidation(false))
		if client.CodeOf(err) != client.CodeProtocol || !strings.Contains(err.Error(), "sampling capability") || len(*bodies) != 1 {
			t.Errorf("err = %v after %d rounds, want a protocol error naming the capability", err, len(*bodies))
		}
	})
	t.Run("rounds bounded", func(t *testing.T) {
		var rounds atomic.Int32
		f := modernFake(t, `[]`, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
			rounds.Add(1)
			writeResult(w, req.ID, `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}`)
		})
		c := connect(t, f.transport(), client.WithRoots(), client.WithLimits(client.Limits{MaxInputRounds: 3}))
		_, err := c.CallTool(context.Background(), "ask", nil, client.WithOutputValidation(false))
		if client.CodeOf(err) != client.CodeProtocol || rounds.Load() != 3 {
			t.Errorf("err = %v after %d rounds, want a protocol error after 3", err, rounds.Load())
		}
	})
}

// TestLegacyUndeclaredRequestRefused: a legacy server asking for sampling
// from a client that did not declare it gets -32601 naming the capability,
// even with a RequestHandler.
func TestLegacyUndeclaredRequestRefused(t *testing.T) {
	f := newFake(t)
	answered := make(chan string, 1)
	f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
		if req.Method != "tools/call" {
			return legacyOnly(w, r, req)
		}
		writeSSE(w, sseData(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":`+samplingReq+`}`))
		select {
		case a := <-answered:
			io := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, textResult(a))
			w.Write([]byte(sseData(io)))
		case <-time.After(testwait.Limit): // a hang bound
		}
		return true
	}
	f.answer = func(w http.ResponseWriter, r *http.Request, resp *jsonrpc.Response) bool {
		b, _ := json.Marshal(resp.Error)
		answered <- string(b)
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	c := connect(t, f.transport(), client.WithEra(mcp.EraLegacy),
		client.WithRequestHandler(func(context.Context, string, json.RawMessage) (any, error) { return map[string]any{}, nil }))
	res, err := c.CallTool(context.Background(), "x", nil, client.WithOutputValidation(false))
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); !strings.Contains(got, `"code":-32601`) || !strings.Contains(got, "sampling capability") {
		t.Errorf("answer %s", got)
	}
}
