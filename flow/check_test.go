package flow_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/flow"
)

// diagnostics parses src and returns its diagnostics as "line:col: msg".
func diagnostics(t *testing.T, src string, opts ...flow.LoadOption) []string {
	t.Helper()
	_, err := flow.Parse("t.flow.yaml", []byte(src), opts...)
	if err == nil {
		return nil
	}
	var out []string
	for _, e := range unjoin(err) {
		var d *flow.Diagnostic
		if !errors.As(e, &d) {
			t.Fatalf("not a *Diagnostic: %T %v", e, e)
		}
		if d.File != "t.flow.yaml" {
			t.Errorf("file %q", d.File)
		}
		out = append(out, fmt.Sprintf("%d:%d: %s", d.Line, d.Column, d.Msg))
	}
	return out
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestCheckErrors: every static-check error of the format is reported at
// its exact line and column.
func TestCheckErrors(t *testing.T) {
	const pre = "clients:\n  srv: {command: x}\ninputs:\n  n: {type: integer, default: 3}\nenv: [HOME]\nsteps:\n"
	// pre is 6 lines: steps start on line 7.
	cases := []struct {
		name, steps string
		want        string // "line:col: message fragment"
	}{
		{"YAML syntax error", "  - value: [1, 2\n  - value: 3\n", "8:3: ',' or ']' must be specified"},
		{"YAML duplicate key", "  - value: 1\n    value: 2\n", "8:5: duplicate key \"value\" (first at 7:5)"},
		{"unknown key in step", "  - value: 1\n    valu: 2\n", "8:5: unknown key \"valu\" in a value step"},
		{"unknown key in call", "  - call: {tool: echo, argz: {}}\n", "7:24: unknown key \"argz\" in call"},
		{"duplicate names", "  - name: a\n    value: 1\n  - name: a\n    value: 2\n", "9:5: duplicate step name \"a\" (at 7:5 and 9:5)"},
		{"ref to later step", "  - value: \"${{ steps.b.result }}\"\n  - name: b\n    value: 1\n", "7:17: step \"b\" has not run at this point"},
		{"ref to unknown step", "  - value: \"${{ steps.zz.result }}\"\n", "7:17: unknown step \"zz\""},
		{"ref to own loop body after loop", "  - for_each: \"${{ [1] }}\"\n    do:\n      - name: inner\n        value: 1\n  - value: \"${{ steps.inner.result }}\"\n", "11:17: step \"inner\" has not run at this point"},
		{"unknown input", "  - value: \"${{ inputs.m }}\"\n", "7:17: unknown input \"m\""},
		{"unknown env", "  - value: \"${{ env.PATH }}\"\n", "7:17: env \"PATH\" is not listed under env:"},
		{"unknown client", "  - call: {client: nope, tool: echo}\n", "7:20: steps[0]: unknown client \"nope\""},
		{"CEL parse error", "  - value: \"${{ 1 + }}\"\n", "7:20: CEL syntax error"},
		{"CEL type error", "  - value: \"${{ inputs.n + 'x' }}\"\n", "7:26: CEL type error: found no matching overload for '_+_' applied to '(int, string)'"},
		{"CEL type error in interpolation", "  - value: \"n=${{ inputs.n - 'x' }}\"\n", "7:28: CEL type error"},
		{"when not bool", "  - when: \"${{ inputs.n }}\"\n    value: 1\n", "7:16: CEL type error: expression has type int, want bool"},
		{"item outside for_each", "  - value: \"${{ item }}\"\n", "7:17: CEL type error: undeclared reference to 'item'"},
		{"error outside catch", "  - value: \"${{ error.code }}\"\n", "7:17: CEL type error: undeclared reference to 'error'"},
		{"catch impossible code", "  - try:\n      - value: 1\n    catch:\n      - codes: [ERR_MCP_TOOL_ERROR]\n        do: [{value: 2}]\n", "10:17: catch: nothing in this try can throw ERR_MCP_TOOL_ERROR"},
		{"catch session invalid over stdio", "  - try:\n      - call: {tool: echo}\n    catch:\n      - codes: [ERR_MCP_SESSION_INVALID]\n        do: [{value: 2}]\n", "10:17: catch: nothing in this try can throw ERR_MCP_SESSION_INVALID"},
		{"catch tool error with tool_errors result", "  - try:\n      - call: {tool: echo, tool_errors: result}\n    catch:\n      - codes: [ERR_MCP_TOOL_ERROR]\n        do: [{value: 2}]\n", "10:17: catch: nothing in this try can throw ERR_MCP_TOOL_ERROR"},
		{"catch timeout without timeout", "  - try:\n      - value: 1\n    catch:\n      - codes: [ERR_STEP_TIMEOUT]\n        do: [{value: 2}]\n", "10:17: catch: nothing in this try can throw ERR_STEP_TIMEOUT"},
		{"catch other thrown code", "  - try:\n      - throw: {code: MINE}\n    catch:\n      - codes: [THEIRS]\n        do: [{value: 2}]\n", "10:17: catch: nothing in this try can throw THEIRS"},
		{"while without max_iterations", "  - while: \"${{ true }}\"\n    do: [{value: 1}]\n", "7:5: steps[0]: while needs a bound: max_iterations, 1 to 1000000"},
		{"max_iterations out of range", "  - while: \"${{ true }}\"\n    max_iterations: 0\n    do: [{value: 1}]\n", "8:21: steps[0]: max_iterations 0: want 1 to 1000000"},
		{"retry attempts zero", "  - retry: {attempts: 0}\n    value: 1\n", "7:23: retry.attempts 0: want 1 to 100"},
		{"retry attempts too many", "  - retry: {attempts: 101}\n    value: 1\n", "7:23: retry.attempts 101: want 1 to 100"},
		{"retry unknown key", "  - retry: {attempts: 2, tries: 3}\n    value: 1\n", "7:26: unknown key \"tries\" in retry"},
		{"bad duration", "  - timeout: 5 parsecs\n    value: 1\n", "7:14: timeout: \"5 parsecs\" is not a duration"},
		{"bad sleep", "  - sleep: soon\n", "7:12: sleep: \"soon\" is not a duration"},
		{"bad backoff", "  - retry: {attempts: 2, backoff: fast}\n    value: 1\n", "7:35: retry.backoff: \"fast\" is not a duration"},
		{"bad regexp", "  - assert: {that: x, matches: \"a(\"}\n", "7:32: steps[0]: matches: bad regexp"},
		{"bad schema", "  - assert: {that: x, schema: {type: 12}}\n", "7:31: steps[0]: schema: invalid JSON Schema"},
		{"two kind keys", "  - value: 1\n    sleep: 1s\n", "8:5: steps[0]: two kind keys, value and sleep"},
		{"no kind key", "  - name: lonely\n", "7:5: steps[0]: no kind key"},
		{"empty step", "  - {}\n", "7:5: steps[0]: no kind key"},
		{"two assert operators", "  - assert: {that: 1, equals: 1, count: 1}\n", "7:34: steps[0]: assert has two operators, equals and count"},
		{"bad step name", "  - name: 9lives\n    value: 1\n", "7:11: steps[0]: step name \"9lives\""},
		{"wrong value type", "  - for_each: \"${{ [1] }}\"\n    concurrency: many\n    do: [{value: 1}]\n", "8:18: concurrency: want an integer, not a string"},
		{"concurrency too high", "  - for_each: \"${{ [1] }}\"\n    concurrency: 65\n    do: [{value: 1}]\n", "8:18: steps[0]: concurrency 65: want 1 to 64"},
		{"for_each not a list", "  - for_each: \"${{ 3 }}\"\n    do: [{value: 1}]\n", "7:20: CEL type error: expression has type int, want list"},
		{"text around condition", "  - if: \"x ${{ true }}\"\n    then: [{value: 1}]\n", "7:9: steps[0].if: want exactly one ${{ }} expression"},
		{"bad throw code", "  - throw: {code: lower}\n", "7:19: steps[0]: code \"lower\""},
		{"if without then", "  - if: true\n", "7:5: steps[0]: if needs then:"},
		{"steps not a list", "  - try: 3\n    finally: []\n", "7:10: steps[0].try: want a list, not a number"},
		{"unclosed expression", "  - value: \"${{ 1 \"\n", "7:12: expression: "},
		{"nested ref in then is not visible in else", "  - if: true\n    then:\n      - name: t\n        value: 1\n    else:\n      - value: \"${{ steps.t.result }}\"\n", "12:21: step \"t\" has not run at this point"},
		{"tool_errors", "  - call: {tool: echo, tool_errors: ignore}\n", "7:37: steps[0]: tool_errors \"ignore\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := diagnostics(t, pre+c.steps)
			for _, g := range got {
				if strings.HasPrefix(g, strings.SplitN(c.want, ": ", 2)[0]+": ") && strings.Contains(g, strings.SplitN(c.want, ": ", 2)[1]) {
					return
				}
			}
			t.Errorf("want %q among\n%s", c.want, strings.Join(got, "\n"))
		})
	}
}

// TestCheckTopLevel: errors outside steps, and that all are reported in
// position order.
func TestCheckTopLevel(t *testing.T) {
	got := diagnostics(t, `nmae: x
inputs:
  n: {type: integr}
  m: {type: integer, default: "three"}
clients:
  a: {command: x, url: "http://x"}
  b: {}
  c: {command: x, era: future, timeout: never}
steps:
  - value: 1
    sleep: 1s
  - value: "${{ inputs.zz }}"
`)
	want := []string{
		`1:1: unknown key "nmae" in flow`,
		`3:13: input n: unknown type "integr"`,
		`4:31: input m: default: three is not of type integer`,
		`6:3: client a: give command (stdio) or url (HTTP), not both`,
		`7:3: client b: needs command (stdio) or url (HTTP)`,
		`8:24: client c: era "future"`,
		`8:41: timeout: "never" is not a duration`,
		`11:5: steps[0]: two kind keys, value and sleep`,
		`12:17: unknown input "zz"`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d diagnostics:\n%s", len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("diagnostic %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestCheckOK: a manifest using every kind passes, and its defaults are
// filled in.
func TestCheckOK(t *testing.T) {
	f := parse(t, header+`
inputs:
  n: {type: integer, default: 2}
steps:
  - name: a
    value: {x: 1}
  - for_each: "${{ [1, 2] }}"
    as: v
    concurrency: 2
    do:
      - value: "${{ v + index + steps.a.result.x }}"
  - while: "${{ false }}"
    max_iterations: 3
    do: [{sleep: 1ms}]
  - try:
      - name: t
        throw: {code: MINE, message: m}
    catch:
      - codes: [MINE]
        do:
          - value: "${{ error.code }}"
    finally:
      - value: "${{ error == null }}"
  - switch: "${{ inputs.n }}"
    cases:
      "2": [{value: two}]
    default: [{value: other}]
  - assert: {that: 1, equals: 1.0}
---
steps:
  - call: {tool: echo}
`)
	if len(f.Flows) != 2 || f.Flows[0].Name != "test" || f.Flows[1].Name != "test#2" {
		t.Fatalf("flows %+v", f.Flows)
	}
	if len(f.Flows[1].Clients) != 1 || f.Flows[1].Clients[0].Name != "srv" {
		t.Fatalf("second document did not inherit clients: %+v", f.Flows[1].Clients)
	}
}

// TestTypeErrorNeverStartsClients: a manifest failing its check starts no
// client, at Load nor at Run.
func TestTypeErrorNeverStartsClients(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	src := fmt.Sprintf(`clients:
  srv:
    command: sh
    args: ["-c", "touch %s; cat"]
inputs:
  n: {type: integer, default: 1}
steps:
  - call: {tool: echo}
  - value: "${{ inputs.n + 'x' }}"
`, marker)
	path := filepath.Join(dir, "bad.flow.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := flow.Load(path)
	if err == nil || !strings.Contains(err.Error(), "CEL type error") {
		t.Fatalf("Load: %v", err)
	}
	if len(f.Flows) == 1 {
		if _, err := f.Flows[0].Run(t.Context()); err == nil {
			t.Fatal("Run of a flow that failed its check did not fail")
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the client was started: %v", err)
	}
}
