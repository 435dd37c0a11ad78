package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// askServer is an upstream whose tool "ask" asks its client three things
// (an elicitation, a sampling request and its roots) and answers with what
// it was told. Before asking, a call waits until `together` calls have
// arrived (a 2026-07-28 retry runs the handler again: it passes straight
// through), so that several are in flight at once.
func askServer(together int) *server.Server {
	var arrived atomic.Int32
	all := make(chan struct{})
	up := server.New(mcp.Implementation{Name: "ask", Version: "1"})
	must(server.AddTool(up, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (echoOut, error) {
		if n := int(arrived.Add(1)); n == together {
			close(all)
		}
		select {
		case <-all:
		case <-ctx.Done():
			return echoOut{}, ctx.Err()
		}
		el, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		if err != nil {
			return echoOut{}, err
		}
		msg, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}})
		if err != nil {
			return echoOut{}, err
		}
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return echoOut{}, err
		}
		name, _ := el.Content["name"].(string)
		said := ""
		if len(msg.Content) == 1 {
			if tc, ok := msg.Content[0].(*mcp.TextContent); ok {
				said = tc.Text
			}
		}
		root := ""
		if len(roots.Roots) == 1 {
			root = roots.Roots[0].URI
		}
		return echoOut{Echo: el.Action + ":" + name + "|" + said + "|" + root, From: "ask"}, nil
	}))
	return up
}

// asker is a downstream client whose every answer carries its name.
func asker(t *testing.T, g *gateway.Gateway, era mcp.Era, name string, opts ...client.Option) *client.Client {
	opts = append([]client.Option{client.WithEra(era),
		client.WithElicitationHandler(func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": name}}, nil
		}),
		client.WithSamplingHandler(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "model of " + name}}}, nil
		}),
		client.WithRoots(mcp.Root{URI: "file:///" + name}),
	}, opts...)
	return downstream(t, g, opts...)
}

// askUpstream is the ask server as an upstream of the given era: in
// process (2026-07-28, which asks in input_required rounds) or over HTTP
// in a 2025-11-25 session (which asks on the call's reply stream).
func askUpstream(t *testing.T, era mcp.Era, together int) (gateway.Upstream, []gateway.Option) {
	up := askServer(together)
	if era == mcp.EraModern {
		return gateway.Upstream{Name: "q", Server: up}, nil
	}
	h := streamable.NewHandler(up)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return gateway.Upstream{Name: "q", URL: hs.URL + "/mcp"}, []gateway.Option{gateway.WithClientOptions(client.WithEra(mcp.EraLegacy))}
}

// acrossTheHop runs test for every pair of an upstream's era and its
// caller's, each a subtest with a gateway in front of the askUpstream of
// that era (together calls asked at once).
func acrossTheHop(t *testing.T, together int, test func(t *testing.T, g *gateway.Gateway, downEra mcp.Era)) {
	for _, upEra := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
		for _, downEra := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
			t.Run("upstream "+upEra.String()+"/caller "+downEra.String(), func(t *testing.T) {
				u, opts := askUpstream(t, upEra, together)
				test(t, newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{u}}, opts...), downEra)
			})
		}
	}
}

// TestInputAcrossTheHop: an upstream's elicitation, sampling and roots
// requests during a call reach the downstream client that made it, in
// every pair of eras (a 2025-era caller is asked by server-to-client
// requests, a 2026-07-28 caller by input_required rounds), with two calls
// from two clients in flight at once, each answered by its own client.
func TestInputAcrossTheHop(t *testing.T) {
	acrossTheHop(t, 2, func(t *testing.T, g *gateway.Gateway, downEra mcp.Era) {
		names := []string{"ann", "bob"}
		got := make([]string, len(names))
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			c := asker(t, g, downEra, name)
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := c.CallTool(t.Context(), "q__ask", nil)
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = string(res.StructuredContent)
			}()
		}
		wg.Wait()
		for i, name := range names {
			if errs[i] != nil {
				t.Fatalf("%s's call: %v", name, errs[i])
			}
			want := fmt.Sprintf(`"echo":"accept:%s|model of %s|file:///%s"`, name, name, name)
			if !strings.Contains(got[i], want) {
				t.Errorf("%s's call answered %s, want %s", name, got[i], want)
			}
		}
	})
}

// TestInputRequestStateIsSingleUse: the requestState of a gateway's
// input_required result (a parked call to a 2025-era upstream) continues its
// call once; replayed, or made up, it is refused with -32602, and so is a
// retry without the answer.
func TestInputRequestStateIsSingleUse(t *testing.T) {
	u, opts := askUpstream(t, mcp.EraLegacy, 1)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{u}}, opts...)
	var mu sync.Mutex
	var retries []json.RawMessage
	record := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if strings.Contains(string(req.Params), `"requestState"`) {
				mu.Lock()
				retries = append(retries, req.Params)
				mu.Unlock()
			}
			return next(ctx, req)
		}
	}
	c := asker(t, g, mcp.EraModern, "ann", client.WithMiddleware(record))
	if _, err := c.CallTool(t.Context(), "q__ask", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	retries = slices.Clone(retries)
	mu.Unlock()
	if len(retries) != 3 {
		t.Fatalf("%d retries, want 3 (elicitation, sampling, roots)", len(retries))
	}
	var first map[string]json.RawMessage
	must(json.Unmarshal(retries[0], &first))
	for name, params := range map[string]json.RawMessage{
		"replayed":      retries[0],
		"made up":       replace(first, "requestState", `"gw1.AAAAAAAAAAAAAAAAAAAAAAAA"`),
		"other tool":    replace(first, "name", `"q__nope"`),
		"no answer":     replace(first, "inputResponses", `{}`),
		"not an object": replace(first, "inputResponses", `[]`),
	} {
		_, err := c.Call(t.Context(), mcp.MethodCallTool, params)
		var je *client.JSONRPCError
		if !asJSONRPC(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %v, want -32602", name, err)
		}
	}
}

func replace(m map[string]json.RawMessage, key, value string) json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		out[k] = v
	}
	out[key] = json.RawMessage(value)
	b, err := json.Marshal(out)
	must(err)
	return b
}

func asJSONRPC(err error, je **client.JSONRPCError) bool { return errors.As(err, je) }

// TestInputPendingLimit: beyond InputLimits.Pending calls (to 2025-era
// upstreams) waiting for their clients' answers, an upstream's question is
// refused (the call ends
// as the upstream then decides: here a tool error); the parked call still
// completes when its client answers.
func TestInputPendingLimit(t *testing.T) {
	u, opts := askUpstream(t, mcp.EraLegacy, 1)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{u}}, append(opts, gateway.WithLimits(gateway.Limits{Inputs: gateway.InputLimits{Pending: 1}}))...)
	asked := make(chan struct{})
	release := make(chan struct{})
	slow := downstream(t, g, client.WithEra(mcp.EraModern),
		client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			close(asked) // the gateway has parked this call
			<-release
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}),
		client.WithSamplingHandler(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}, nil
		}),
		client.WithRoots())
	done := make(chan error, 1)
	go func() {
		_, err := slow.CallTool(t.Context(), "q__ask", nil)
		done <- err
	}()
	<-asked
	rec := httptest.NewRecorder()
	g.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "\ntoolwire_gateway_pending_inputs 1\n") {
		t.Errorf("metrics while one call is parked:\n%s", rec.Body.String())
	}
	res, err := asker(t, g, mcp.EraModern, "bob").CallTool(t.Context(), "q__ask", nil)
	if client.CodeOf(err) != client.CodeToolError || !strings.Contains(testmcp.Text(res), "the limit") {
		t.Fatalf("second call: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("parked call: %v", err)
	}
}

// TestInputParkedCallExpires: a call parked for an answer that never comes
// ends with its 2025-era upstream's timeout; the late retry is refused.
func TestInputParkedCallExpires(t *testing.T) {
	u, opts := askUpstream(t, mcp.EraLegacy, 1)
	u.Timeout = 200 * time.Millisecond
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{u}}, opts...)
	late := downstream(t, g, client.WithEra(mcp.EraModern),
		client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			// Answer only once the upstream's timeout has ended the call.
			testwait.WaitFor(t, "the parked call ended by the upstream's timeout", func() bool { return pendingInputs(g) == "0" })
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}))
	_, err := late.CallTool(t.Context(), "q__ask", nil)
	var je *client.JSONRPCError
	if !asJSONRPC(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "expired") {
		t.Fatalf("late retry: %v", err)
	}
}

// An upstream's log message during a call reaches the downstream client.
func TestUpstreamLogReachesCaller(t *testing.T) {
	up := server.New(mcp.Implementation{Name: "talk", Version: "1"})
	must(server.AddTool(up, &mcp.Tool{Name: "talk"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (struct{}, error) {
		return struct{}{}, req.Log(ctx, mcp.LevelWarning, "talker", "careful")
	}))
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "t", Server: up}}})
	logs := make(chan client.LogMessage, 10)
	c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithLogHandler(func(m client.LogMessage) { logs <- m }))
	if _, err := c.CallTool(context.Background(), "t__talk", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-logs:
		if m.Level != mcp.LevelWarning || m.Logger != "talker" || string(m.Data) != `"careful"` {
			t.Fatalf("log %+v", m)
		}
	default:
		t.Fatal("no log message before the result")
	}
}

// TestUpstreamLogsFollowTheirCall: over HTTP, an upstream's log messages
// during two calls in flight at once each reach the client that made the
// call, and only it.
func TestUpstreamLogsFollowTheirCall(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	up := server.New(mcp.Implementation{Name: "talk", Version: "1"})
	must(server.AddTool(up, &mcp.Tool{Name: "talk"}, func(ctx context.Context, req *server.CallRequest, in echoIn) (struct{}, error) {
		arrived.Done()
		arrived.Wait()
		return struct{}{}, req.Log(ctx, mcp.LevelWarning, "talker", in.Text)
	}))
	h := streamable.NewHandler(up)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{{Name: "t", URL: hs.URL + "/mcp"}}})
	words := []string{"left", "right"}
	logs := make([]chan client.LogMessage, len(words))
	var wg sync.WaitGroup
	for i, w := range words {
		logs[i] = make(chan client.LogMessage, 10)
		c := downstream(t, g, client.WithEra(mcp.EraLegacy), client.WithLogHandler(func(m client.LogMessage) { logs[i] <- m }))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.CallTool(t.Context(), "t__talk", map[string]any{"text": w}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, w := range words {
		if len(logs[i]) != 1 {
			t.Fatalf("%s's client got %d log messages, want 1", w, len(logs[i]))
		}
		if m := <-logs[i]; string(m.Data) != `"`+w+`"` {
			t.Errorf("%s's client got %s", w, m.Data)
		}
	}
}

// TestInputRoundsRelayed: between a 2026-07-28 caller and a 2026-07-28
// upstream the gateway keeps nothing: the upstream's input_required result
// reaches the caller with the upstream's own requestState, the retry goes
// back as it is, nothing is parked, and a replayed retry gets the
// upstream's -32602.
func TestInputRoundsRelayed(t *testing.T) {
	u, opts := askUpstream(t, mcp.EraModern, 1)
	g := newGateway(t, gateway.Config{Upstreams: []gateway.Upstream{u}}, opts...)
	var mu sync.Mutex
	var states []string
	var retries []json.RawMessage
	record := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
		return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			res, err := next(ctx, req)
			if raw, ok := res.(json.RawMessage); ok {
				var head struct {
					RequestState string `json:"requestState"`
				}
				if json.Unmarshal(raw, &head) == nil && head.RequestState != "" {
					mu.Lock()
					states = append(states, head.RequestState)
					mu.Unlock()
				}
			}
			if strings.Contains(string(req.Params), `"requestState"`) {
				mu.Lock()
				retries = append(retries, req.Params)
				mu.Unlock()
			}
			return res, err
		}
	}
	c := asker(t, g, mcp.EraModern, "ann", client.WithMiddleware(record))
	res, err := c.CallTool(t.Context(), "q__ask", nil)
	if err != nil || !strings.Contains(string(res.StructuredContent), `"echo":"accept:ann|model of ann|file:///ann"`) {
		t.Fatalf("call: %+v, %v", res, err)
	}
	mu.Lock()
	states, retries = slices.Clone(states), slices.Clone(retries)
	mu.Unlock()
	if len(states) != 3 || len(retries) != 3 {
		t.Fatalf("%d input_required results and %d retries, want 3 each", len(states), len(retries))
	}
	for _, st := range states {
		if strings.HasPrefix(st, "gw1.") {
			t.Errorf("requestState %q is the gateway's: the round was parked, not relayed", st)
		}
	}
	rec := httptest.NewRecorder()
	g.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "\ntoolwire_gateway_pending_inputs 0\n") {
		t.Errorf("a relayed round was parked:\n%s", rec.Body.String())
	}
	_, err = c.Call(t.Context(), mcp.MethodCallTool, retries[0])
	var je *client.JSONRPCError
	if !asJSONRPC(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("replayed retry: %v, want the upstream's -32602", err)
	}
}

// TestInputOnlyForDeclaredCapabilities: a caller that declares
// elicitation and roots but not sampling is never asked to sample, in
// either era and whatever the upstream's era: the elicitation reaches it,
// the sampling request fails at the gateway (the tool reports it), and no
// round asks the caller for it.
func TestInputOnlyForDeclaredCapabilities(t *testing.T) {
	acrossTheHop(t, 1, func(t *testing.T, g *gateway.Gateway, downEra mcp.Era) {
		var mu sync.Mutex
		var asked []string
		record := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
			return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				mu.Lock()
				asked = append(asked, req.Method)
				mu.Unlock()
				return next(ctx, req)
			}
		}
		// A 2026-07-28 round is a result asking for input.
		rounds := func(next jsonrpc.MethodHandler) jsonrpc.MethodHandler {
			return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				res, err := next(ctx, req)
				if raw, ok := res.(json.RawMessage); ok && strings.Contains(string(raw), string(mcp.ResultInputRequired)) && strings.Contains(string(raw), `"`+mcp.MethodCreateMessage+`"`) {
					mu.Lock()
					asked = append(asked, mcp.MethodCreateMessage)
					mu.Unlock()
				}
				return res, err
			}
		}
		c := downstream(t, g, client.WithEra(downEra), client.WithReceivingMiddleware(record), client.WithMiddleware(rounds),
			client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "ann"}}, nil
			}),
			client.WithRoots(mcp.Root{URI: "file:///ann"}))
		res, err := c.CallTool(t.Context(), "q__ask", nil)
		if client.CodeOf(err) != client.CodeToolError || res == nil || !strings.Contains(testmcp.Text(res), "sampling") {
			t.Fatalf("call: %+v %v (want an isError naming the sampling capability)", res, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if slices.Contains(asked, mcp.MethodCreateMessage) {
			t.Errorf("the caller was asked to sample: %v", asked)
		}
	})
}
