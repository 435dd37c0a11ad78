package flow_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/flow"
)

// FuzzParse: no input panics Parse (or a short Run of a client-less flow),
// and parsing is stable: the same bytes give the same diagnostics and the
// same model.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"steps: [{value: 1}]\n",
		header + "steps:\n  - name: a\n    call: {tool: echo, arguments: {text: \"${{ 'x' }}\"}}\n  - assert: {that: \"${{ steps.a.result.content[0].text }}\", equals: x}\n",
		"inputs:\n  n: {type: integer, default: 2}\nsteps:\n  - for_each: \"${{ [1, inputs.n] }}\"\n    concurrency: 2\n    do: [{value: \"${{ item * index }}\"}]\n",
		"steps:\n  - try:\n      - throw: {code: X, message: m}\n    catch:\n      - codes: [X]\n        do: [{value: \"${{ error.message }}\"}]\n    finally: [{sleep: 1ms}]\n",
		"steps:\n  - while: \"${{ false }}\"\n    max_iterations: 2\n    do: [{value: 1}]\n  - switch: a\n    cases: {a: [{value: 1}]}\n",
		"steps:\n  - retry: {attempts: 2, backoff: 1ms}\n    timeout: 1s\n    assert: {that: [1], count: 1}\n---\nsteps: [{value: x}]\n",
		"steps:\n  - value: |\n      ${{ 1 +\n        2 }}\n",
		"a: &a [1]\nsteps: [{value: *a}]\n",
		"inputs: {k: {type: integer, default: 1}}\nvars:\n  a: \"${{ inputs.k }}\"\n  b: \"${{ vars.a * 2 }}\"\n  c: null\nsteps:\n  - set: {c: \"${{ vars.b > 1 ? 'x' : null }}\", a: \"${{ vars.a + 1 }}\"}\n  - value: \"${{ vars.c }}\"\n",
		"steps: [{value: {{{{",
		"\xff\x00",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		f1, err1 := flow.Parse("fuzz.flow.yaml", data)
		f2, err2 := flow.Parse("fuzz.flow.yaml", data)
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("unstable diagnostics:\n%v\n%v", err1, err2)
		}
		if m1, m2 := model(f1), model(f2); m1 != m2 {
			t.Fatalf("unstable model:\n%s\n%s", m1, m2)
		}
		if err1 != nil {
			return
		}
		for _, fl := range f1.Flows {
			if len(fl.Clients) > 0 {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			_, _ = fl.Run(ctx)
			cancel()
		}
	})
}

// model is a text form of a parsed file: flows and their step trees.
func model(f *flow.File) string {
	if f == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, fl := range f.Flows {
		fmt.Fprintf(&b, "flow %s %v inputs=%d clients=%d outputs=%d\n", fl.Name, fl.Pos, len(fl.Inputs), len(fl.Clients), len(fl.Outputs))
		for _, s := range fl.Steps {
			fmt.Fprintf(&b, "  %s %s %s %v %v\n", s.Path, s.Name, s.Kind, s.Pos, s.Timeout)
		}
	}
	return b.String()
}
