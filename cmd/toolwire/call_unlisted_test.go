package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// serveHiddenTool serves a tool "hidden" that no tools/list shows (as a
// gateway persona hides one) and that answers with the arguments it got,
// as text; it returns the endpoint and the names it was called with so
// far.
func serveHiddenTool(t *testing.T) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var called []string
	s := server.New(mcp.Implementation{Name: "hider", Version: "1.0.0"},
		server.WithListFilter(func(_ *server.Request, kind server.ListKind, name string) bool {
			return kind != server.ListTools || name != "hidden"
		}))
	for _, name := range []string{"hidden", "shown"} {
		err := server.AddTool(s, &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *server.CallRequest, _ map[string]any) (string, error) {
				mu.Lock()
				called = append(called, req.Name)
				mu.Unlock()
				return string(req.Arguments), nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	h := streamable.NewHandler(s)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return hs.URL + "/mcp", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(called)
	}
}

// TestCallSendsUnlistedTool: a tool the server does not list is called
// all the same (the server decides), its key=value arguments typed as
// JSON for want of a schema.
func TestCallSendsUnlistedTool(t *testing.T) {
	url, called := serveHiddenTool(t)
	r := runCLI(t, "call", url, "hidden", "n=3", "flag=true", `s="3"`, "name=alice", "x=null", "tags=[1,2]")
	if r.code != 0 {
		t.Fatalf("call hidden: exit %d\n%s", r.code, r.stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &got); err != nil {
		t.Fatalf("the tool's echo %q: %v", r.stdout, err)
	}
	want := map[string]any{"n": 3.0, "flag": true, "s": "3", "name": "alice", "x": nil, "tags": []any{1.0, 2.0}}
	if b, w := mustJSON(t, got), mustJSON(t, want); b != w {
		t.Errorf("arguments %s, want %s", b, w)
	}
	if got := called(); !slices.Equal(got, []string{"hidden"}) {
		t.Errorf("the server was called for %v", got)
	}
}

// TestCallUnknownToolHintKeepsCredentials: a tool the server knows
// nothing of is still sent; its JSON-RPC error comes with a hint whose
// command carries the -H flags this one was given.
func TestCallUnknownToolHintKeepsCredentials(t *testing.T) {
	url, _ := serveHiddenTool(t)
	r := runCLI(t, "call", "-H", "Authorization: Bearer s3cret", url, "nosuch", "a=1")
	if r.code != 5 || !strings.Contains(r.stderr, `unknown tool: "nosuch"`) ||
		!strings.Contains(r.stderr, "it lists 1: toolwire tools -H 'Authorization: Bearer s3cret' "+url+"\n") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestCredFlagsInHints: hints for a next command keep -H, --token-dir
// and --client-id, shell-quoted.
func TestCredFlagsInHints(t *testing.T) {
	t.Setenv(envClientSecret, "")
	f := &targetFlags{headers: []string{"X-Api-Key: k1"}}
	f.oauth.tokenDir, f.oauth.clientID = "/tmp/my tokens", "ci"
	got := taskCommand(target{url: "http://h/mcp"}, "t1", "--wait", f.credFlags()...)
	want := "toolwire task -H 'X-Api-Key: k1' --token-dir '/tmp/my tokens' --client-id ci http://h/mcp t1 --wait"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := commandLine(target{command: []string{"node", "s.js"}}, f, "tools"); got != "toolwire tools -H 'X-Api-Key: k1' --token-dir '/tmp/my tokens' --client-id ci -- node s.js" {
		t.Errorf("stdio: %s", got)
	}
	if got := shellQuote("it's"); got != `'it'\''s'` {
		t.Errorf("shellQuote: %s", got)
	}
}

// TestCallToolErrorPrintedOnce: a tool error's message appears once on
// stderr (its content), the last line naming the tool.
func TestCallToolErrorPrintedOnce(t *testing.T) {
	r := runCLI(t, "call", referenceURL(t), "safe_divide", "a=1", "b=0")
	if r.code != 6 || strings.Count(r.stderr, "cannot divide by zero") != 1 ||
		!strings.HasSuffix(r.stderr, "toolwire: ERR_MCP_TOOL_ERROR: tool \"safe_divide\" failed (its error is above)\n") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestTasksOnModernServerSuggests: `toolwire tasks` against toolwire's own
// serve (2026-07-28 first, which lists no tasks) fails with the commands
// that do work: the listing in 2025-11-25, and a task by its id.
func TestTasksOnModernServerSuggests(t *testing.T) {
	p := startServe(t, nil, "--data-dir", "")
	r := runCLI(t, "tasks", "-H", "X-Trace: 1", p.url)
	if r.code != 1 || !strings.Contains(r.stderr, "toolwire tasks --era legacy -H 'X-Trace: 1' "+p.url) ||
		!strings.Contains(r.stderr, "toolwire task -H 'X-Trace: 1' "+p.url+" ID") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	r = runCLI(t, "tasks", "--era", "legacy", p.url)
	if r.code != 0 {
		t.Errorf("the suggested --era legacy: exit %d\n%s", r.code, r.stderr)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestForbiddenMessage: a 403 answer's JSON-RPC error message is what the
// CLI shows of it; other errors have none.
func TestForbiddenMessage(t *testing.T) {
	body := `Forbidden: {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no persona admits api_key:bob: nothing here is for this caller"}}`
	err := &client.TransportError{Op: "POST initialize", StatusCode: 403, Err: errors.New(body)}
	if got := forbiddenMessage(err); got != "no persona admits api_key:bob: nothing here is for this caller" {
		t.Errorf("403: %q", got)
	}
	for _, other := range []error{
		&client.TransportError{Op: "POST initialize", StatusCode: 401, Err: errors.New(body)},
		&client.TransportError{Op: "POST initialize", StatusCode: 403, Err: errors.New("Forbidden")},
		errors.New("boom"),
	} {
		if got := forbiddenMessage(other); got != "" {
			t.Errorf("%v: %q", other, got)
		}
	}
}
