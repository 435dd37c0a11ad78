package flow_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolwire/toolwire/flow"
	"github.com/toolwire/toolwire/internal/testwait"
)

// TestCallAssert: a call's result feeds an assert and the outputs.
func TestCallAssert(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
inputs:
  who: {type: string, default: world}
steps:
  - name: hi
    call: {tool: echo, arguments: {text: "hello ${{ inputs.who }}"}}
  - assert: {that: "${{ steps.hi.result.content.filter(c, c.type == 'text')[0].text }}", equals: hello world}
  - name: sum
    call: {tool: add, arguments: {a: 2, b: 3}}
  - assert: {that: "${{ steps.sum.result.structuredContent.sum }}", equals: 5.0}
outputs:
  text: "${{ steps.hi.result.content.filter(c, c.type == 'text')[0].text }}"
  sum: "${{ steps.sum.result.structuredContent.sum }}"
`)
	mustPass(t, res)
	if res.Outputs["text"] != "hello world" || res.Outputs["sum"] != int64(5) {
		t.Fatalf("outputs %v", res.Outputs)
	}
	if len(res.Steps) != 4 {
		t.Fatalf("%d step reports", len(res.Steps))
	}
}

// TestSeedExample: a tool error is caught by its code and the handler
// reads error.data.content.
func TestSeedExample(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
steps:
  - name: guarded
    try:
      - call: {tool: fail, arguments: {text: disk full}}
      - throw: {code: UNEXPECTED}
    catch:
      - codes: [ERR_MCP_TOOL_ERROR]
        do:
          - name: why
            value: "${{ error.data.content[0].text }}"
          - assert: {that: "${{ error.code }}", equals: ERR_MCP_TOOL_ERROR}
          - assert: {that: "${{ error.step }}", equals: "steps[0].try[0]"}
outputs:
  why: "${{ steps.why.result }}"
`)
	mustPass(t, res)
	if res.Outputs["why"] != "boom: disk full" {
		t.Fatalf("outputs %v", res.Outputs)
	}
	last := res.Steps[len(res.Steps)-1]
	if last.Name != "guarded" || last.Status != flow.StatusCaught {
		t.Fatalf("last report %+v", last)
	}
}

// TestUncaughtToolError: an uncaught tool error is Result.Err with the
// tool's content; tool_errors: result makes it the step's result instead.
func TestUncaughtToolError(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
steps:
  - name: soft
    call: {tool: fail, arguments: {text: a}, tool_errors: result}
  - assert: {that: "${{ steps.soft.result.isError }}", equals: true}
  - name: hard
    call: {tool: fail, arguments: {text: b}}
`)
	e := mustFail(t, res, "ERR_MCP_TOOL_ERROR")
	if e.Step != "hard" || e.Pos != (flow.Pos{Line: 8, Column: 5}) {
		t.Fatalf("error at %s %+v", e.Step, e.Pos)
	}
	data := e.Data.(map[string]any)
	content := data["content"].([]any)
	if content[0].(map[string]any)["text"] != "boom: b" {
		t.Fatalf("data %v", data)
	}
	if _, ok := data["structuredContent"]; !ok {
		t.Fatalf("no structuredContent in %v", data)
	}
}

// TestListReadPrompt: list (tools, resources, prompts), read and prompt
// results are the wire objects.
func TestListReadPrompt(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
steps:
  - name: tools
    list: {what: tools}
  - assert: {that: "${{ steps.tools.result.map(t, t.name) }}", contains: echo}
  - assert: {that: "${{ steps.tools.result.filter(t, t.name == 'echo')[0].inputSchema.type }}", equals: object}
  - name: res
    list: {what: resources}
  - assert: {that: "${{ steps.res.result[0].uri }}", equals: "mem://notes"}
  - name: tpl
    list: {what: resource_templates}
  - assert: {that: "${{ steps.tpl.result }}", count: 0}
  - name: prompts
    list: {what: prompts}
  - assert: {that: "${{ steps.prompts.result[0].name }}", equals: greet}
  - name: notes
    read: {uri: "mem://notes"}
  - assert: {that: "${{ steps.notes.result.contents.filter(r, has(r.text))[0].text }}", equals: buy milk}
  - name: hello
    prompt: {name: greet, arguments: {who: Ada}}
  - assert: {that: "${{ steps.hello.result.messages[0].content.type }}", equals: text}
  - assert: {that: "${{ steps.hello.result.messages[0].content.text }}", equals: Hello Ada}
  - assert: {that: "${{ steps.hello.result.description }}", equals: a greeting}
`)
	mustPass(t, res)
}

// TestValueIfSwitch: value, if/else and switch with default.
func TestValueIfSwitch(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
inputs:
  n: {type: integer, default: 2}
steps:
  - name: v
    value: {list: [1, "${{ inputs.n }}"], text: "n is ${{ inputs.n }} and ${{ [1] }}"}
  - assert: {that: "${{ steps.v.result }}", equals: {list: [1, 2], text: "n is 2 and [1]"}}
  - if: "${{ inputs.n > 1 }}"
    then:
      - name: big
        value: yes
    else:
      - throw: {code: WRONG}
  - switch: "${{ inputs.n }}"
    cases:
      "1": [{throw: {code: WRONG}}]
      "2": [{name: two, value: 2}]
    default: [{throw: {code: WRONG}}]
  - switch: nope
    cases:
      yes: [{throw: {code: WRONG}}]
    default: [{name: dflt, value: d}]
outputs:
  big: "${{ steps.big.result }}"
  two: "${{ steps.two.result }}"
  dflt: "${{ steps.dflt.result }}"
`)
	mustPass(t, res)
	want := map[string]any{"big": "yes", "two": int64(2), "dflt": "d"}
	if diff := cmp.Diff(want, res.Outputs); diff != "" {
		t.Fatal(diff)
	}
}

// TestForEachConcurrency: for_each with concurrency overlaps the calls and
// keeps the results in item order; as and index are in scope.
// In a synctest bubble the clock moves only when every goroutine waits, so
// the four calls are all in flight before any of their 150ms ends: they
// overlap fully, and the loop takes about 150ms, not 600ms, of the bubble's
// time.
func TestForEachConcurrency(t *testing.T) { synctest.Test(t, testForEachConcurrency) }

func testForEachConcurrency(t *testing.T) {
	ts := newTestServer(t)
	start := time.Now()
	res := runFlow(t, ts, `
steps:
  - name: loop
    for_each: "${{ [3, 1, 2, 0] }}"
    as: n
    concurrency: 4
    do:
      - call: {tool: slow, arguments: {ms: 150}}
      - name: last
        value: "${{ n * 10 + index }}"
outputs:
  all: "${{ steps.loop.result }}"
`)
	mustPass(t, res)
	if diff := cmp.Diff([]any{int64(30), int64(11), int64(22), int64(3)}, res.Outputs["all"]); diff != "" {
		t.Fatal(diff)
	}
	if p := ts.peak.Load(); p != 4 {
		t.Fatalf("at most %d calls overlapped, want 4", p)
	}
	if took := time.Since(start); took >= 300*time.Millisecond {
		t.Fatalf("the loop took %v, want about the 150ms of one call, not 600ms of four in turn", took)
	}
}

// TestForEachFailureCancels: with concurrency the first failure cancels
// the other iterations and is raised. In a synctest bubble the calls of
// the other iterations would end after exactly 5s; the run ends before.
func TestForEachFailureCancels(t *testing.T) { synctest.Test(t, testForEachFailureCancels) }

func testForEachFailureCancels(t *testing.T) {
	ts := newTestServer(t)
	start := time.Now()
	res := runFlow(t, ts, `
steps:
  - for_each: "${{ [0, 1, 2, 3] }}"
    concurrency: 4
    do:
      - if: "${{ item == 2 }}"
        then: [{throw: {code: BAD_ITEM, message: "item ${{ item }}"}}]
        else: [{call: {tool: slow, arguments: {ms: 5000}}}]
`)
	e := mustFail(t, res, "BAD_ITEM")
	if e.Message != "item 2" {
		t.Fatalf("message %q", e.Message)
	}
	if d := time.Since(start); d >= 5*time.Second {
		t.Fatalf("the other iterations were not cancelled: the run lasted %v", d)
	}
	// The throw races the other iterations' requests onto the wire: the
	// client can send a request's cancellation before the request itself,
	// which then runs its 5s on the server. Let such calls end before the
	// bubble does.
	quiesce()
	testwait.WaitFor(t, "the calls on the server to end", func() bool { return ts.inFlight.Load() == 0 })
}

// TestWhile: while counts iterations and stops at max_iterations with
// ERR_LOOP_LIMIT.
func TestWhile(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
steps:
  - name: w
    while: "${{ false }}"
    max_iterations: 5
    do: [{value: 1}]
  - assert: {that: "${{ steps.w.result }}", equals: 0}
  - while: "${{ true }}"
    max_iterations: 3
    do: [{call: {tool: echo, arguments: {text: x}}}]
`)
	e := mustFail(t, res, "ERR_LOOP_LIMIT")
	if ts.calls.Load() != 3 {
		t.Fatalf("%d calls, want 3", ts.calls.Load())
	}
	if e.Step != "steps[2]" {
		t.Fatalf("step %q", e.Step)
	}
}

// TestTryOrdering: catch runs before finally, finally always runs, an
// error in finally wins, an unmatched code passes through the handlers.
func TestTryOrdering(t *testing.T) {
	ts := newTestServer(t)
	var order []string
	obs := flow.WithObserver(func(e flow.Event) {
		if !e.Started && e.Name != "" {
			order = append(order, e.Name)
		}
	})
	res := runFlow(t, ts, `
steps:
  - try:
      - name: body
        throw: {code: FIRST, data: {n: "${{ 1 }}"}}
    catch:
      - codes: [ERR_EXPRESSION]
        do: [{name: wrong, value: 1}]
      - codes: [FIRST]
        do: [{name: handler, value: "${{ error.data.n }}"}]
    finally:
      - name: fin
        value: "${{ error.code }}"
  - try:
      - name: ok
        value: 1
    finally:
      - name: fin2
        assert: {that: "${{ error }}", equals: null}
  - try:
      - throw: {code: INNER}
    catch:
      - do: [{throw: {code: FROM_HANDLER}}]
    finally:
      - throw: {code: FROM_FINALLY}
`, obs)
	mustFail(t, res, "FROM_FINALLY")
	if got := strings.Join(order, ","); got != "body,handler,fin,ok,fin2" {
		t.Fatalf("order %s", got)
	}
}

// TestThrowUncaught: a thrown error keeps its code, message and data.
func TestThrowUncaught(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
steps:
  - name: t
    throw: {code: "${{ 'DYN' + '_CODE' }}", message: "went ${{ 1 + 1 }} ways", data: [1]}
`)
	e := mustFail(t, res, "DYN_CODE")
	if e.Message != "went 2 ways" || e.Step != "t" || !cmp.Equal(e.Data, []any{int64(1)}) {
		t.Fatalf("%+v", e)
	}
}

// TestWhenSleep: when false skips, sleep waits (in a synctest bubble, for
// exactly its duration).
func TestWhenSleep(t *testing.T) { synctest.Test(t, testWhenSleep) }

func testWhenSleep(t *testing.T) {
	ts := newTestServer(t)
	start := time.Now()
	res := runFlow(t, ts, `
steps:
  - name: skipped
    when: false
    throw: {code: NEVER}
  - when: "${{ 1 > 2 }}"
    throw: {code: NEVER}
  - sleep: 50ms
`)
	mustPass(t, res)
	if took := time.Since(start); took != 50*time.Millisecond {
		t.Fatalf("sleep: 50ms waited %v", took)
	}
	if res.Steps[0].Status != flow.StatusSkipped || res.Steps[1].Status != flow.StatusSkipped || res.Steps[2].Status != flow.StatusOK {
		t.Fatalf("%+v", res.Steps)
	}
}

// TestTimeout: a step over its timeout fails with ERR_STEP_TIMEOUT, also
// for a compound step, and can be caught. The timeouts are the subject: in
// a synctest bubble they fire at their time whatever the machine's load.
func TestTimeout(t *testing.T) { synctest.Test(t, testTimeout) }

func testTimeout(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
steps:
  - try:
      - timeout: 50ms
        call: {tool: slow, arguments: {ms: 5000}}
    catch:
      - codes: [ERR_STEP_TIMEOUT]
        do: [{name: caught, value: "${{ error.message }}"}]
  - name: outer
    timeout: 50ms
    if: true
    then:
      - sleep: 5s
`)
	e := mustFail(t, res, "ERR_STEP_TIMEOUT")
	if e.Step != "outer" {
		t.Fatalf("step %q", e.Step)
	}
	if res.Steps[1].Name != "caught" {
		t.Fatalf("reports %+v", res.Steps)
	}
	// The steps cut short inside a step that timed out report the timeout
	// that stopped them, not what the interrupted work said.
	for _, rep := range res.Steps {
		if rep.Status == flow.StatusFailed && (rep.Err == nil || rep.Err.Code != flow.CodeStepTimeout) {
			t.Errorf("step %s failed with %+v, want ERR_STEP_TIMEOUT", rep.Path, rep.Err)
		}
	}
	settled(t, ts)
}

// TestTimeoutAroundACall: a call cut short by an enclosing step's timeout
// reports ERR_STEP_TIMEOUT naming that step (not the client's
// ERR_MCP_TRANSPORT), and a run cancelled during a call ends with
// ERR_CANCELLED.
//
// In a synctest bubble the call's 5s, the step's 100ms and the cancellation
// at 100ms are exact: the cancellation comes while the call is in flight.
func TestTimeoutAroundACall(t *testing.T) { synctest.Test(t, testTimeoutAroundACall) }

func testTimeoutAroundACall(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
steps:
  - name: outer
    timeout: 100ms
    if: true
    then:
      - name: inner
        call: {tool: slow, arguments: {ms: 5000}}
`)
	mustFail(t, res, flow.CodeStepTimeout)
	var inner *flow.StepReport
	for i := range res.Steps {
		if res.Steps[i].Name == "inner" {
			inner = &res.Steps[i]
		}
	}
	if inner == nil || inner.Err == nil || inner.Err.Code != flow.CodeStepTimeout || !strings.Contains(inner.Err.Message, "outer") {
		t.Fatalf("the inner call: %+v", inner)
	}
	settled(t, ts)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res = runFlowCtx(t, ctx, ts, `
steps:
  - name: long
    call: {tool: slow, arguments: {ms: 5000}}
`)
	mustFail(t, res, flow.CodeCancelled)
	settled(t, ts)
}

// TestRetry: a step failing once succeeds on its second attempt;
// non_retryable codes stop retrying at once.
func TestRetry(t *testing.T) {
	ts := newTestServer(t)
	var attempts []int
	res := runFlow(t, ts, `
steps:
  - name: flaky
    retry: {attempts: 3, backoff: 1ms}
    call: {tool: flaky, arguments: {key: a}}
  - assert: {that: "${{ steps.flaky.result.content.filter(c, c.type == 'text')[0].text }}", equals: ok a}
  - name: never
    retry: {attempts: 5, backoff: 1ms, non_retryable: [ERR_MCP_TOOL_ERROR]}
    call: {tool: fail, arguments: {text: x}}
`, flow.WithObserver(func(e flow.Event) {
		if e.Started {
			attempts = append(attempts, e.Attempt)
		}
	}))
	mustFail(t, res, "ERR_MCP_TOOL_ERROR")
	if res.Steps[0].Attempts != 2 || res.Steps[0].Status != flow.StatusOK {
		t.Fatalf("flaky report %+v", res.Steps[0])
	}
	if last := res.Steps[len(res.Steps)-1]; last.Name != "never" || last.Attempts != 1 {
		t.Fatalf("never report %+v", last)
	}
	if !cmp.Equal(attempts, []int{1, 2, 1, 1}) {
		t.Fatalf("attempt events %v", attempts)
	}
}

// TestRunErrors: bad inputs and unknown inputs are Run errors, not flow
// failures; a runtime CEL error is ERR_EXPRESSION.
func TestRunErrors(t *testing.T) {
	ts := newTestServer(t)
	f := parse(t, header+`
inputs:
  n: {type: integer}
  tags: {type: array, default: []}
steps:
  - value: "${{ inputs.tags[inputs.n] }}"
`)
	c := ts.connect(t)
	for _, in := range []map[string]string{{}, {"n": "x"}, {"n": "1", "zz": "2"}, {"n": "1", "tags": "{}"}} {
		if _, err := f.Flows[0].Run(t.Context(), flow.WithClient("srv", c), flow.WithInputs(in)); err == nil {
			t.Errorf("inputs %v: no error", in)
		}
	}
	res := run(t, t.Context(), f, flow.WithClient("srv", c), flow.WithInputs(map[string]string{"n": "4", "tags": `["a"]`}))
	e := mustFail(t, res, "ERR_EXPRESSION")
	containsAll(t, e.Message, "index out of bounds")
}

// TestEnv: env names come from WithEnv; unset ones are "".
func TestEnv(t *testing.T) {
	ts := newTestServer(t)
	res := runFlow(t, ts, `
env: [TOKEN, UNSET]
steps:
  - assert: {that: "${{ env.TOKEN + '/' + env.UNSET }}", equals: "s3cret/"}
`, flow.WithEnv(func(k string) (string, bool) {
		if k == "TOKEN" {
			return "s3cret", true
		}
		return "", false
	}))
	mustPass(t, res)
}

// TestObserverEvents: every step starts and ends once, with the flow name.
func TestObserverEvents(t *testing.T) {
	ts := newTestServer(t)
	var mu sync.Mutex
	var evs []flow.Event
	res := runFlow(t, ts, `
name: observed
steps:
  - name: a
    value: 1
  - name: b
    call: {tool: echo, arguments: {text: x}}
`, flow.WithObserver(func(e flow.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }))
	mustPass(t, res)
	if len(evs) != 4 || !evs[0].Started || evs[1].Started || evs[1].Status != flow.StatusOK || evs[3].Name != "b" || evs[3].Flow != "observed" || evs[3].Kind != "call" {
		t.Fatalf("events %+v", evs)
	}
}

// TestCostLimit: an expression over the CEL cost limit is ERR_EXPRESSION,
// with Limits.MaxCost, and without it over DefaultCostLimit, where a
// cheaper expression passes.
func TestCostLimit(t *testing.T) {
	items := make([]string, 1100)
	for i := range items {
		items[i] = "1"
	}
	for _, tc := range []struct {
		name string
		src  string
		opts []flow.LoadOption
		step string // the step that fails
	}{{
		name: "MaxCost",
		src: `steps:
  - value: "${{ [1,2,3,4,5,6,7,8,9,10].map(x, [1,2,3,4,5,6,7,8,9,10].map(y, x * y)) }}"
`,
		opts: []flow.LoadOption{flow.WithLimits(flow.Limits{MaxCost: 50})},
		step: "steps[0]",
	}, {
		name: "DefaultCostLimit",
		src: "inputs:\n  a: {type: array, default: [" + strings.Join(items, ",") + "]}\nsteps:\n" +
			"  - value: \"${{ inputs.a.map(x, x + 1).size() }}\"\n" +
			"  - value: \"${{ inputs.a.map(x, inputs.a.map(y, x * y)).size() }}\"\n",
		step: "steps[1]",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustFail(t, run(t, t.Context(), parse(t, tc.src, tc.opts...)), "ERR_EXPRESSION")
			if e.Step != tc.step {
				t.Fatalf("failed at %s, want %s", e.Step, tc.step)
			}
			containsAll(t, e.Message, "cost")
		})
	}
}

// TestCancelled: a run whose context ends fails with ERR_CANCELLED (in a
// synctest bubble: at 20ms, long before the step's 10s sleep ends).
func TestCancelled(t *testing.T) { synctest.Test(t, testCancelled) }

func testCancelled(t *testing.T) {
	f := parse(t, "steps:\n  - sleep: 10s\n")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	mustFail(t, run(t, ctx, f), flow.CodeCancelled)
}
