package flow_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/flow"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// jobServer has one tool, job, that reports "pending" on its first three
// calls and "done" from the fourth on (status in structuredContent), and
// one, ready, that fails (isError) until its fourth call: what a flow
// polls.
type jobServer struct {
	*testServer
	jobCalls, readyCalls atomic.Int32
}

type jobOut struct {
	Status string `json:"status"`
	Calls  int    `json:"calls"`
}

func newJobServer(t *testing.T) *jobServer {
	js := &jobServer{testServer: newTestServer(t)}
	if err := server.AddTool(js.srv, &mcp.Tool{Name: "job"}, func(ctx context.Context, req *server.CallRequest, in keyIn) (jobOut, error) {
		n := int(js.jobCalls.Add(1))
		if n < 4 {
			return jobOut{Status: "pending", Calls: n}, nil
		}
		return jobOut{Status: "done", Calls: n}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(js.srv, &mcp.Tool{Name: "ready"}, func(ctx context.Context, req *server.CallRequest, in keyIn) (string, error) {
		if n := js.readyCalls.Add(1); n < 4 {
			return "", errors.New("not ready yet")
		}
		return "ready", nil
	}); err != nil {
		t.Fatal(err)
	}
	return js
}

// TestWhileUntilPollsUntilDone: a while with until: calls a tool that
// succeeds on its fourth call; until sees each iteration's call, so the
// loop ends after exactly four calls, and a flow variable counts them.
func TestWhileUntilPollsUntilDone(t *testing.T) {
	js := newJobServer(t)
	res := runFlow(t, js.testServer, `
vars:
  polls: 0
steps:
  - name: poll
    while: true
    max_iterations: 10
    until: "${{ steps.status.result.structuredContent.status == 'done' }}"
    do:
      - set: {polls: "${{ vars.polls + 1 }}"}
      - name: status
        call: {tool: job, arguments: {key: j1}}
  - assert: {that: "${{ steps.poll.result }}", equals: 4}
  - assert: {that: "${{ vars.polls }}", equals: 4}
outputs:
  iterations: "${{ steps.poll.result }}"
  polls: "${{ vars.polls }}"
`)
	if res.Err != nil {
		t.Fatalf("flow failed: %v", res.Err)
	}
	if got := js.jobCalls.Load(); got != 4 {
		t.Errorf("job called %d times, want 4", got)
	}
	if res.Outputs["iterations"] != int64(4) || res.Outputs["polls"] != int64(4) {
		t.Errorf("outputs %v, want 4 iterations and 4 polls", res.Outputs)
	}
}

// TestWhileOverVariablePolls: the same poll written with a variable the
// body sets: the while condition reads it before each iteration; the tool
// fails (isError) on its first three calls, read as results.
func TestWhileOverVariablePolls(t *testing.T) {
	js := newJobServer(t)
	res := runFlow(t, js.testServer, `
vars:
  ready: false
  tries: 0
steps:
  - name: wait
    while: "${{ !vars.ready }}"
    max_iterations: 10
    do:
      - name: probe
        call: {tool: ready, arguments: {key: r}, tool_errors: result}
      - set:
          ready: "${{ !steps.probe.result.isError }}"
          tries: "${{ vars.tries + 1 }}"
  - assert: {that: "${{ [steps.wait.result, vars.tries, vars.ready] }}", equals: [4, 4, true]}
`)
	if res.Err != nil {
		t.Fatalf("flow failed: %v", res.Err)
	}
	if got := js.readyCalls.Load(); got != 4 {
		t.Errorf("ready called %d times, want 4", got)
	}
}

// TestWhileUntilLimit: an until that never holds ends in ERR_LOOP_LIMIT
// after max_iterations iterations.
func TestWhileUntilLimit(t *testing.T) {
	js := newJobServer(t)
	res := runFlow(t, js.testServer, `
steps:
  - name: poll
    while: true
    max_iterations: 2
    until: "${{ steps.status.result.structuredContent.status == 'done' }}"
    do:
      - name: status
        call: {tool: job, arguments: {key: j1}}
`)
	if res.Err == nil || res.Err.Code != flow.CodeLoopLimit {
		t.Fatalf("err %v, want %s", res.Err, flow.CodeLoopLimit)
	}
	if got := js.jobCalls.Load(); got != 2 {
		t.Errorf("job called %d times, want 2", got)
	}
}

// TestLoopsCheck: the static check knows until: and vars: an until or a
// while condition reading what the body changes passes; one reading
// nothing the body changes, an undeclared variable and a set of one are
// rejected at their place.
func TestLoopsCheck(t *testing.T) {
	ok := []string{
		// until sees the body's steps.
		"steps:\n  - while: true\n    max_iterations: 3\n    until: \"${{ steps.c.result.content.size() > 0 }}\"\n    do:\n      - name: c\n        call: {tool: echo}\n",
		// a while over a variable its body sets.
		"vars: {n: 0}\nsteps:\n  - while: \"${{ vars.n < 3 }}\"\n    max_iterations: 5\n    do:\n      - set: {n: \"${{ vars.n + 1 }}\"}\n",
		// vars may read inputs and earlier vars.
		"inputs: {k: {type: integer, default: 2}}\nvars:\n  a: \"${{ inputs.k }}\"\n  b: \"${{ vars.a * 2 }}\"\nsteps:\n  - value: \"${{ vars.b }}\"\n",
	}
	for _, src := range ok {
		if _, err := flow.Parse("ok.flow.yaml", []byte(header+src)); err != nil {
			t.Errorf("rejected:\n%s\n%v", src, err)
		}
	}
	bad := []struct{ src, want string }{
		{"steps:\n  - while: true\n    max_iterations: 3\n    until: \"${{ inputs.k > 1 }}\"\n    do:\n      - call: {tool: echo}\ninputs: {k: {type: integer}}\n",
			"6:12: steps[0]: the until condition refers to only inputs.k, which its body cannot change"},
		{"vars: {n: 0}\nsteps:\n  - while: \"${{ vars.n < 3 }}\"\n    max_iterations: 5\n    do:\n      - call: {tool: echo}\n",
			"5:12: steps[0]: the while condition refers to only vars.n, which its body cannot change"},
		{"vars: {total: 0}\nsteps:\n  - set: {totl: 1}\n", `5:11: steps[0]: set: "totl" is not declared under vars: (did you mean "total"?)`},
		{"vars: {count: 0}\nsteps:\n  - value: \"${{ vars.cuont }}\"\n", `5:17: unknown variable "cuont" (not declared under vars:) (did you mean "count"?)`},
		{"steps:\n  - while: true\n    max_iterations: 3\n    untill: \"${{ true }}\"\n    do:\n      - call: {tool: echo}\n", `6:5: unknown key "untill" in a while step (did you mean "until"?)`},
	}
	for _, b := range bad {
		_, err := flow.Parse("bad.flow.yaml", []byte(header+b.src))
		if err == nil || !strings.Contains(err.Error(), "bad.flow.yaml:"+b.want) {
			t.Errorf("for\n%s\ngot  %v\nwant bad.flow.yaml:%s", b.src, err, b.want)
		}
	}
}

// TestSetConcurrent: set steps of a for_each running four at a time write
// the variables safely (the race detector watches) and the last value is
// one of the iterations'.
func TestSetConcurrent(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
vars: {last: -1}
steps:
  - for_each: "${{ [0, 1, 2, 3, 4, 5, 6, 7] }}"
    concurrency: 4
    do:
      - set: {last: "${{ item }}"}
      - value: "${{ vars.last }}"
  - assert: {that: "${{ vars.last >= 0 && vars.last < 8 }}", equals: true}
`)
	if res.Err != nil {
		t.Fatalf("flow failed: %v", res.Err)
	}
}

// TestStepDurationAssert: assert: {duration: {below: D}} beside a step's
// kind fails the step with ERR_ASSERTION when it took longer, with the
// operator, bound and actual duration as data; a step within it passes.
func TestStepDurationAssert(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
steps:
  - name: quick
    call: {tool: echo, arguments: {text: hi}}
    assert: {duration: {below: 1h}}
  - name: slow
    assert: {duration: {below: 1ms}}
    call: {tool: slow, arguments: {ms: 20}}
`)
	if res.Err == nil || res.Err.Code != flow.CodeAssertion || res.Err.Step != "slow" {
		t.Fatalf("err %v, want %s at step slow", res.Err, flow.CodeAssertion)
	}
	data, _ := res.Err.Data.(map[string]any)
	if data["operator"] != "duration" || data["expected"] != "below 1ms" {
		t.Errorf("data %v", res.Err.Data)
	}
}

// TestRelativeCommandFromManifestDir: a stdio command and args written
// ./x are taken from the manifest's directory, not the caller's: the
// command run is the script beside the manifest, and it sees its
// argument as an absolute path there.
func TestRelativeCommandFromManifestDir(t *testing.T) {
	dir := t.TempDir()
	// A "server" that writes its argument where the test can read it,
	// then answers nothing (the step fails; what matters is what ran).
	script := "#!/bin/sh\necho \"$1\" > \"$(dirname \"$0\")/seen\"\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "srv.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "rel.flow.yaml")
	src := "clients:\n  s: {command: ./srv.sh, args: [./data.txt], timeout: 10s}\nsteps:\n  - call: {tool: echo}\n"
	if err := os.WriteFile(manifest, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := flow.Load(manifest)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Limit)
	defer cancel()
	res := run(t, ctx, f) // the test's working directory is not dir
	if res.Err == nil {
		t.Fatal("the call passed against a server that exits")
	}
	seen, err := os.ReadFile(filepath.Join(dir, "seen"))
	if err != nil {
		t.Fatalf("the script beside the manifest did not run: %v (flow error %v)", err, res.Err)
	}
	if got, want := strings.TrimSpace(string(seen)), filepath.Join(dir, "data.txt"); got != want {
		t.Errorf("argument %q, want %q", got, want)
	}
}

// TestSecretInputMasked: a secret input's value, and its JSON-escaped and
// base64 forms, are masked in the uncaught error's message and data, in
// the outputs, in the step reports and in the events.
func TestSecretInputMasked(t *testing.T) {
	ts := newTestServer(t)
	const secret = `s3cr"et-value`
	var mu sync.Mutex
	var events []flow.Event
	res := runFlow(t, ts, `
inputs:
  token: {type: string, secret: true}
steps:
  - name: e
    call: {tool: echo, arguments: {text: "${{ inputs.token }}"}}
  - assert:
      that: "${{ [steps.e.result.content.map(c, c.type == 'text', c.text), base64.encode(bytes(inputs.token))] }}"
      equals: []
outputs:
  o: "${{ inputs.token }}"
`, flow.WithInputs(map[string]string{"token": secret}), flow.WithObserver(func(e flow.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}))
	if res.Err == nil || res.Err.Code != flow.CodeAssertion {
		t.Fatalf("err %v, want %s", res.Err, flow.CodeAssertion)
	}
	forms := []string{secret, `s3cr\"et-value`, base64.StdEncoding.EncodeToString([]byte(secret))}
	var all strings.Builder
	fmt.Fprintf(&all, "%s %#v %#v", res.Err.Message, res.Err.Data, res.Outputs)
	for _, s := range res.Steps {
		if s.Err != nil {
			fmt.Fprintf(&all, " %s %#v", s.Err.Message, s.Err.Data)
		}
	}
	mu.Lock()
	for _, e := range events {
		if e.Err != nil {
			fmt.Fprintf(&all, " %s %#v", e.Err.Message, e.Err.Data)
		}
	}
	mu.Unlock()
	for _, f := range forms {
		if strings.Contains(all.String(), f) {
			t.Errorf("the secret's form %q is in what the run reported:\n%s", f, all.String())
		}
	}
	if !strings.Contains(all.String(), flow.Masked) {
		t.Errorf("nothing masked:\n%s", all.String())
	}
}

// TestReadInputsFile: YAML and JSON inputs files give strings as they
// are, other scalars as their text, lists and mappings as JSON; a non
// mapping is a diagnostic with its place.
func TestReadInputsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := map[string]string{"s": "hi", "n": "3", "b": "true", "l": "[1,2]", "m": `{"k":"v"}`}
	for _, p := range []string{
		write("in.yaml", "s: hi\nn: 3\nb: true\nl: [1, 2]\nm: {k: v}\n"),
		write("in.json", `{"s": "hi", "n": 3, "b": true, "l": [1, 2], "m": {"k": "v"}}`),
	} {
		got, err := flow.ReadInputsFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", p, got, want)
		}
	}
	if _, err := flow.ReadInputsFile(write("list.yaml", "- a\n- b\n")); err == nil || !strings.Contains(err.Error(), "list.yaml:1:1: an inputs file holds a mapping") {
		t.Errorf("a list: %v", err)
	}
}
