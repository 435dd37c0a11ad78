package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

var nameForm = &mcp.ElicitParams{Message: "What is your name?",
	RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}

// inputServer hosts tools that ask for input with the same code in both
// eras.
func inputServer(t *testing.T, opts ...server.Option) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "input", Version: "1"}, opts...)
	type none struct{}
	add := func(name string, h func(ctx context.Context, req *server.CallRequest) (string, error)) {
		if err := server.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
			return h(ctx, req)
		}); err != nil {
			t.Fatal(err)
		}
	}
	add("greet", func(ctx context.Context, req *server.CallRequest) (string, error) {
		res, err := req.Elicit(ctx, nameForm, server.InputKey("user_name"))
		if err != nil {
			return "", err
		}
		if res.Action != mcp.ActionAccept {
			return "no name: " + res.Action, nil
		}
		return "Hello, " + res.Content["name"].(string) + "!", nil
	})
	add("two-steps", func(ctx context.Context, req *server.CallRequest) (string, error) {
		a, err := req.Elicit(ctx, nameForm, server.InputKey("step1"))
		if err != nil {
			return "", err
		}
		b, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Colour?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}}}`)}, server.InputKey("step2"))
		if err != nil {
			return "", err
		}
		return a.Content["name"].(string) + " likes " + b.Content["color"].(string), nil
	})
	add("all-at-once", func(ctx context.Context, req *server.CallRequest) (string, error) {
		sampling, _ := json.Marshal(&mcp.CreateMessageParams{MaxTokens: 50,
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "Say hi"}}}}})
		form, _ := json.Marshal(nameForm)
		answers, err := req.Input(ctx, map[string]mcp.InputRequest{
			"user_name":    {Method: mcp.MethodElicitationCreate, Params: form},
			"greeting":     {Method: mcp.MethodCreateMessage, Params: sampling},
			"client_roots": {Method: mcp.MethodListRoots},
		})
		if err != nil {
			return "", err
		}
		return string(answers["user_name"]) + "|" + string(answers["greeting"]) + "|" + string(answers["client_roots"]), nil
	})
	add("sample", func(ctx context.Context, req *server.CallRequest) (string, error) {
		res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "2+2?"}}}}})
		if err != nil {
			return "", err
		}
		return res.Model, nil
	})
	return s
}

func metaWith(caps map[string]any) map[string]any {
	m := modernMeta()
	m[mcp.MetaClientCapabilities] = caps
	return m
}

var allCaps = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}

func inputRequired(t *testing.T, r *jsonrpc.Response) *mcp.InputRequiredResult {
	t.Helper()
	var w struct {
		ResultType    mcp.ResultType              `json:"resultType"`
		InputRequests map[string]mcp.InputRequest `json:"inputRequests"`
		RequestState  string                      `json:"requestState"`
		Content       []json.RawMessage           `json:"content"`
		Extra         map[string]json.RawMessage  `json:"-"`
	}
	decodeResult(t, r, &w)
	if w.ResultType != mcp.ResultInputRequired || len(w.InputRequests) == 0 || w.RequestState == "" || w.Content != nil {
		t.Fatalf("want an input_required result with requests and state, got %s", r.Result)
	}
	return &mcp.InputRequiredResult{InputRequests: w.InputRequests, RequestState: w.RequestState}
}

func retry(p *peer, tool string, responses map[string]any, state string) *jsonrpc.Response {
	params := map[string]any{"name": tool, "arguments": map[string]any{}, "_meta": metaWith(allCaps)}
	if responses != nil {
		params["inputResponses"] = responses
	}
	if state != "" {
		params["requestState"] = state
	}
	return p.call("tools/call", params)
}

var alice = map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}

func TestInputRequiredRoundTrip(t *testing.T) {
	p := connect(t, inputServer(t))
	ir := inputRequired(t, retry(p, "greet", nil, ""))
	q, ok := ir.InputRequests["user_name"]
	if !ok || q.Method != mcp.MethodElicitationCreate || !strings.Contains(string(q.Params), "What is your name?") {
		t.Fatalf("input requests %+v", ir.InputRequests)
	}
	res := callResult(t, retry(p, "greet", map[string]any{"user_name": alice}, ir.RequestState))
	if got := text(t, res); got != "Hello, Alice!" {
		t.Fatalf("round 2: %q", got)
	}
	// Answers given without being asked (no state) are used too; keys the
	// handler never asks for are ignored.
	res = callResult(t, retry(p, "greet", map[string]any{"user_name": alice, "extra": map[string]any{"x": 1}}, ""))
	if got := text(t, res); got != "Hello, Alice!" {
		t.Fatalf("pre-answered: %q", got)
	}
	// A wrong key is asked again, not an error.
	inputRequired(t, retry(p, "greet", map[string]any{"wrong_key": alice}, ""))
}

func TestInputRequiredMultiRoundCarriesEarlierAnswers(t *testing.T) {
	p := connect(t, inputServer(t))
	r1 := inputRequired(t, retry(p, "two-steps", nil, ""))
	if _, ok := r1.InputRequests["step1"]; !ok || len(r1.InputRequests) != 1 {
		t.Fatalf("round 1 asks %v", r1.InputRequests)
	}
	r2 := inputRequired(t, retry(p, "two-steps", map[string]any{"step1": alice}, r1.RequestState))
	if _, ok := r2.InputRequests["step2"]; !ok || len(r2.InputRequests) != 1 || r2.RequestState == r1.RequestState {
		t.Fatalf("round 2 asks %v (state changed: %v)", r2.InputRequests, r2.RequestState != r1.RequestState)
	}
	// Round 3 answers only step2: step1 comes from the sealed state. A
	// step1 answer sent again is ignored, not trusted over the sealed one.
	blue := map[string]any{"action": "accept", "content": map[string]any{"color": "blue"}}
	mallory := map[string]any{"action": "accept", "content": map[string]any{"name": "Mallory"}}
	res := callResult(t, retry(p, "two-steps", map[string]any{"step2": blue, "step1": mallory}, r2.RequestState))
	if got := text(t, res); got != "Alice likes blue" {
		t.Fatalf("round 3: %q", got)
	}
}

func TestInputRequiredSeveralRequestsInOneRound(t *testing.T) {
	p := connect(t, inputServer(t))
	ir := inputRequired(t, retry(p, "all-at-once", nil, ""))
	want := map[string]string{"user_name": mcp.MethodElicitationCreate, "greeting": mcp.MethodCreateMessage, "client_roots": mcp.MethodListRoots}
	if len(ir.InputRequests) != len(want) {
		t.Fatalf("asked %v", ir.InputRequests)
	}
	for k, m := range want {
		if ir.InputRequests[k].Method != m {
			t.Errorf("%s: method %q, want %q", k, ir.InputRequests[k].Method, m)
		}
	}
	res := callResult(t, retry(p, "all-at-once", map[string]any{
		"user_name":    alice,
		"greeting":     map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "hi"}, "model": "m"},
		"client_roots": map[string]any{"roots": []any{}},
	}, ir.RequestState))
	if got := text(t, res); !strings.Contains(got, `"Alice"`) || !strings.Contains(got, `"model":"m"`) || !strings.Contains(got, `"roots":[]`) {
		t.Fatalf("answers: %q", got)
	}
}

// A requestState is sealed: altered, replayed, moved to another request or
// expired, it is refused with -32602; and it does not show the answers it
// carries.
func TestRequestStateIsTamperProof(t *testing.T) {
	p := connect(t, inputServer(t))
	r1 := inputRequired(t, retry(p, "two-steps", nil, ""))
	secret := map[string]any{"action": "accept", "content": map[string]any{"name": "s3cret-value"}}
	r2 := inputRequired(t, retry(p, "two-steps", map[string]any{"step1": secret}, r1.RequestState))
	raw, err := base64.RawURLEncoding.DecodeString(r2.RequestState)
	if err != nil {
		t.Fatalf("state is not base64url: %v", err)
	}
	if strings.Contains(string(raw), "s3cret") || strings.Contains(r2.RequestState, "s3cret") {
		t.Fatal("requestState shows an answer in clear")
	}

	blue := map[string]any{"step2": map[string]any{"action": "accept", "content": map[string]any{"color": "blue"}}}
	tampered := []byte(r2.RequestState)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] == '-'^1 || tampered[len(tampered)/2] == '_'^1 {
		tampered[len(tampered)/2] = 'A'
	}
	for name, state := range map[string]string{
		"flipped":  string(tampered),
		"suffixed": r2.RequestState + "-TAMPERED",
		"garbage":  "not-a-state",
	} {
		e := wantError(t, retry(p, "two-steps", blue, state), jsonrpc.CodeInvalidParams)
		if !strings.Contains(e.Message, "requestState") {
			t.Errorf("%s: message %q does not name requestState", name, e.Message)
		}
	}
	// Another tool, or other arguments, cannot use the state.
	other := p.call("tools/call", map[string]any{"name": "two-steps", "arguments": map[string]any{"x": 1},
		"_meta": metaWith(allCaps), "inputResponses": blue, "requestState": r2.RequestState})
	if e := wantError(t, other, jsonrpc.CodeInvalidParams); !strings.Contains(e.Message, "another request") {
		t.Errorf("moved state: %q", e.Message)
	}
	// The first use succeeds; the replay is refused.
	if got := text(t, callResult(t, retry(p, "two-steps", blue, r2.RequestState))); got != "s3cret-value likes blue" {
		t.Fatalf("first use: %q", got)
	}
	if e := wantError(t, retry(p, "two-steps", blue, r2.RequestState), jsonrpc.CodeInvalidParams); !strings.Contains(e.Message, "already used") {
		t.Errorf("replay: %q", e.Message)
	}
	// A state from another server (another key) is refused too.
	p2 := connect(t, inputServer(t))
	r1b := inputRequired(t, retry(p2, "two-steps", nil, ""))
	if e := wantError(t, retry(p, "two-steps", map[string]any{"step1": alice}, r1b.RequestState), jsonrpc.CodeInvalidParams); !strings.Contains(e.Message, "not a state this server issued") {
		t.Errorf("foreign state: %q", e.Message)
	}
}

func TestRequestStateExpires(t *testing.T) { synctest.Test(t, testRequestStateExpires) }

func testRequestStateExpires(t *testing.T) {
	p := connect(t, inputServer(t, server.WithLimits(server.Limits{InputStateTTL: time.Minute})))
	r1 := inputRequired(t, retry(p, "two-steps", nil, ""))
	time.Sleep(time.Minute + time.Second) // the bubble's clock: the TTL is the subject
	if e := wantError(t, retry(p, "two-steps", map[string]any{"step1": alice}, r1.RequestState), jsonrpc.CodeInvalidParams); !strings.Contains(e.Message, "expired") {
		t.Errorf("expired: %q", e.Message)
	}
}

func TestSharedInputStateKey(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	a := connect(t, inputServer(t, server.WithInputStateKey(key)))
	b := connect(t, inputServer(t, server.WithInputStateKey(key)))
	r1 := inputRequired(t, retry(a, "greet", nil, ""))
	if got := text(t, callResult(t, retry(b, "greet", map[string]any{"user_name": alice}, r1.RequestState))); got != "Hello, Alice!" {
		t.Fatalf("state from a sibling server: %q", got)
	}
}

func TestInputRoundsAreBounded(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "loop", Version: "1"}, server.WithLimits(server.Limits{MaxInputRounds: 2}))
	type none struct{}
	n := 0
	if err := server.AddTool(s, &mcp.Tool{Name: "forever"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		for i := 0; ; i++ {
			if _, err := req.Elicit(ctx, nameForm, server.InputKey("k"+string(rune('a'+i)))); err != nil {
				n++
				return "", err
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	st := inputRequired(t, retry(p, "forever", nil, "")).RequestState
	st = inputRequired(t, retry(p, "forever", map[string]any{"ka": alice}, st)).RequestState
	e := wantError(t, retry(p, "forever", map[string]any{"kb": alice}, st), jsonrpc.CodeInvalidParams)
	if !strings.Contains(e.Message, "limit is 2 rounds") {
		t.Errorf("rounds: %q", e.Message)
	}
}

func TestInputResponsesAreValidated(t *testing.T) {
	p := connect(t, inputServer(t))
	for name, responses := range map[string]any{
		"null":           nil,
		"array":          []any{},
		"number answer":  map[string]any{"user_name": 12345},
		"bad elicit":     map[string]any{"user_name": map[string]any{"action": "maybe"}},
		"missing action": map[string]any{"user_name": map[string]any{"content": map[string]any{}}},
	} {
		params := map[string]any{"name": "greet", "arguments": map[string]any{}, "_meta": metaWith(allCaps), "inputResponses": responses}
		r := p.call("tools/call", params)
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: want -32602, got %s %v", name, r.Result, r.Error)
		}
	}
}

// A 2026-07-28 client that did not declare elicitation is never asked:
// -32021 names the capability. A legacy client without it is not sent the
// request and the tool sees *MissingCapabilityError.
func TestElicitationRefusedForUndeclaredCapability(t *testing.T) {
	synctest.Test(t, testElicitationRefusedForUndeclaredCapability)
}

func testElicitationRefusedForUndeclaredCapability(t *testing.T) {
	p := connect(t, inputServer(t))
	r := p.call("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{},
		"_meta": metaWith(map[string]any{"sampling": map[string]any{}})})
	e := wantError(t, r, mcp.CodeMissingRequiredClientCapability)
	if !strings.Contains(string(e.Data), `"requiredCapabilities":{"elicitation":{}}`) {
		t.Errorf("data %s", e.Data)
	}

	lp := connect(t, inputServer(t))
	lp.initialize("2025-11-25")
	res := callResult(t, lp.call("tools/call", map[string]any{"name": "greet"}))
	if !res.IsError || !strings.Contains(text(t, res), `did not declare the "elicitation" capability`) {
		t.Errorf("legacy: %+v", res)
	}
	quiesce()
	lp.noRequest("a client without the capability")
}

// The same handler asks a 2025-era client with a real elicitation/create.
func TestInputInLegacySessionIsARequest(t *testing.T) {
	p := connect(t, inputServer(t))
	p.initializeWith("2025-11-25", allCaps)
	_, done := p.start("tools/call", map[string]any{"name": "greet"})
	req := p.request()
	var got mcp.ElicitParams
	if req.Method != mcp.MethodElicitationCreate || json.Unmarshal(req.Params, &got) != nil || got.Message != "What is your name?" {
		t.Fatalf("server asked %s %s", req.Method, req.Params)
	}
	p.send(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"action":"accept","content":{"name":"Bob"}}`)})
	if got := text(t, callResult(t, p.wait(done))); got != "Hello, Bob!" {
		t.Fatalf("legacy: %q", got)
	}
}

// Cancelling a tool call cancels the sampling request it is waiting on:
// the client is told with notifications/cancelled naming that request.
func TestSamplingCancelledWithTheCall(t *testing.T) {
	synctest.Test(t, testSamplingCancelledWithTheCall)
}

func testSamplingCancelledWithTheCall(t *testing.T) {
	p := connect(t, inputServer(t))
	p.initializeWith("2025-11-25", allCaps)
	id, done := p.start("tools/call", map[string]any{"name": "sample"})
	sampling := p.request()
	if sampling.Method != mcp.MethodCreateMessage {
		t.Fatalf("server asked %s", sampling.Method)
	}
	p.send(&jsonrpc.Notification{Method: mcp.NotificationCancelled, Params: json.RawMessage(`{"requestId":` + id.String() + `}`)})
	n := p.note()
	var c mcp.CancelledParams
	if n.Method != mcp.NotificationCancelled || json.Unmarshal(n.Params, &c) != nil || c.RequestID == nil || *c.RequestID != sampling.ID {
		t.Fatalf("want notifications/cancelled for %s, got %s %s", sampling.ID, n.Method, n.Params)
	}
	quiesce()
	select {
	case resp := <-done:
		t.Fatalf("a cancelled call was answered: %+v", resp)
	default:
	}
}

func TestElicitChecksParams(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "bad", Version: "1"})
	type none struct{}
	var got error
	if err := server.AddTool(s, &mcp.Tool{Name: "nested"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		_, got = req.Elicit(ctx, &mcp.ElicitParams{Message: "x",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"object"}}}`)})
		return "", got
	}); err != nil {
		t.Fatal(err)
	}
	p := connect(t, s)
	res := callResult(t, retry(p, "nested", nil, ""))
	if !res.IsError || got == nil || errors.Is(got, server.ErrInputRequired) || !strings.Contains(got.Error(), `property "a"`) {
		t.Fatalf("nested schema: %v / %+v", got, res)
	}
}
