package flow_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/flow"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
)

// testServer is an in-process MCP server with tools that exercise the
// runner: echo, add, fail (a tool error), flaky (fails once per key), slow
// (records how many calls overlap), a prompt and a resource.
type testServer struct {
	srv      *server.Server
	flaky    sync.Map // key -> *atomic.Int32
	inFlight atomic.Int32
	peak     atomic.Int32
	calls    atomic.Int32
}

type echoIn struct {
	Text string `json:"text"`
}
type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}
type addOut struct {
	Sum int `json:"sum"`
}
type keyIn struct {
	Key string `json:"key"`
}
type slowIn struct {
	MS int `json:"ms"`
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	ts := &testServer{srv: server.New(mcp.Implementation{Name: "flowtest", Version: "1.0.0"})}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(server.AddTool(ts.srv, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(ctx context.Context, req *server.CallRequest, in echoIn) (string, error) {
		ts.calls.Add(1)
		return in.Text, nil
	}))
	must(server.AddTool(ts.srv, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *server.CallRequest, in addIn) (addOut, error) {
		ts.calls.Add(1)
		return addOut{Sum: in.A + in.B}, nil
	}))
	must(server.AddTool(ts.srv, &mcp.Tool{Name: "fail"}, func(ctx context.Context, req *server.CallRequest, in echoIn) (string, error) {
		ts.calls.Add(1)
		return "", errors.New("boom: " + in.Text)
	}))
	must(server.AddTool(ts.srv, &mcp.Tool{Name: "flaky"}, func(ctx context.Context, req *server.CallRequest, in keyIn) (string, error) {
		ts.calls.Add(1)
		n, _ := ts.flaky.LoadOrStore(in.Key, new(atomic.Int32))
		if n.(*atomic.Int32).Add(1) == 1 {
			return "", errors.New("first attempt fails")
		}
		return "ok " + in.Key, nil
	}))
	must(server.AddTool(ts.srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallRequest, in slowIn) (string, error) {
		ts.calls.Add(1)
		cur := ts.inFlight.Add(1)
		defer ts.inFlight.Add(-1)
		for {
			p := ts.peak.Load()
			if cur <= p || ts.peak.CompareAndSwap(p, cur) {
				break
			}
		}
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "slept", nil
	}))
	must(server.AddPrompt(ts.srv, &mcp.Prompt{Name: "greet", Description: "Greets", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *server.PromptRequest, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "a greeting", Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Hello " + args["who"]}}}}, nil
		}))
	must(server.AddResource(ts.srv, &mcp.Resource{URI: "mem://notes", Name: "notes", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: "mem://notes", MIMEType: "text/plain", Text: "buy milk"}}}, nil
		}))
	return ts
}

// connect returns a client talking to the server in memory.
func (ts *testServer) connect(t testing.TB) *client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := client.Connect(ctx, &client.Conn{Conn: memory.Serve(ctx, ts.srv)})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); cancel() })
	return c
}

// header declares the in-process client "srv" (its command is never run:
// WithClient replaces it).
const header = `clients:
  srv: {command: /nonexistent/never-started}
`

// parse parses a manifest or fails the test.
func parse(t testing.TB, src string, opts ...flow.LoadOption) *flow.File {
	t.Helper()
	f, err := flow.Parse("test.flow.yaml", []byte(src), opts...)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return f
}

// runFlow parses src (with header prepended) and runs its first flow
// against ts.
func runFlow(t testing.TB, ts *testServer, src string, opts ...flow.RunOption) *flow.Result {
	t.Helper()
	return runFlowCtx(t, context.Background(), ts, src, opts...)
}

// runFlowCtx is runFlow under ctx.
func runFlowCtx(t testing.TB, ctx context.Context, ts *testServer, src string, opts ...flow.RunOption) *flow.Result {
	t.Helper()
	f := parse(t, header+src)
	ctx, cancel := context.WithTimeout(ctx, testwait.Limit) // a hang bound, not a speed check
	defer cancel()
	return run(t, ctx, f, append([]flow.RunOption{flow.WithClient("srv", ts.connect(t))}, opts...)...)
}

// run runs f's first flow under ctx and returns its result; a Run error
// (inputs or options Run refuses) fails the test, the flow's own failure
// is the result's Err.
func run(t testing.TB, ctx context.Context, f *flow.File, opts ...flow.RunOption) *flow.Result {
	t.Helper()
	res, err := f.Flows[0].Run(ctx, opts...)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

// quiesce, in a synctest bubble, lets the bubble's clock move on by a
// second (the server hands a running request's reading on after its 1ms
// inline budget, so every message sent is read; the slow calls of the
// tests last 5s) and waits until every goroutine is blocked.
func quiesce() {
	time.Sleep(time.Second)
	synctest.Wait()
}

// settled, in a synctest bubble, quiesces and fails the test if a call is
// still running on the server: a run that ended has cancelled the calls it
// no longer waits for.
func settled(t *testing.T, ts *testServer) {
	t.Helper()
	quiesce()
	if n := ts.inFlight.Load(); n != 0 {
		t.Errorf("%d calls still running on the server after the run ended", n)
	}
}

// mustPass fails the test when the flow failed.
func mustPass(t testing.TB, res *flow.Result) {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("flow failed: %v (data %v)", res.Err, res.Err.Data)
	}
}

// mustFail checks the flow failed with code and returns the error.
func mustFail(t testing.TB, res *flow.Result, code string) *flow.Error {
	t.Helper()
	if res.Err == nil {
		t.Fatalf("flow passed, want %s", code)
	}
	if res.Err.Code != code {
		t.Fatalf("code %s, want %s: %v", res.Err.Code, code, res.Err)
	}
	return res.Err
}

// checkConnected checks f as `toolwire check` does without servers, which
// must pass, then connected to ts as client srv, which must report want
// diagnostics (one a line); it returns them.
func checkConnected(t testing.TB, ts *testServer, f *flow.File, want int) string {
	t.Helper()
	if err := flow.Check(t.Context(), f); err != nil {
		t.Fatalf("Check without connect: %v", err)
	}
	err := flow.Check(t.Context(), f, flow.WithConnect(true), flow.WithClient("srv", ts.connect(t)))
	if err == nil {
		t.Fatal("no diagnostics")
	}
	got := err.Error()
	if n := strings.Count(got, "\n") + 1; n != want {
		t.Fatalf("%d diagnostics, want %d:\n%s", n, want, got)
	}
	return got
}

func containsAll(t testing.TB, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%q does not contain %q", s, sub)
		}
	}
}

func writeFileErr(path string, data []byte) error { return os.WriteFile(path, data, 0o600) }
