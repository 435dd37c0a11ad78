package flow_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/flow"
)

// TestVariableTypes: the check types a flow variable from the values it
// is given (its vars: value, every set naming it, expressions included,
// through other variables), so a misuse of it is found before the flow
// runs; a variable given values of different types, or a dyn one, stays
// dyn and is let through, as before.
func TestVariableTypes(t *testing.T) {
	ok := []struct{ name, src string }{
		{"a set gives another type", "vars: {n: 0}\nsteps:\n  - set: {n: \"text\"}\n  - value: \"${{ vars.n + 'x' }}\"\n"},
		{"a set from a result is dyn", "vars: {n: 0}\nsteps:\n  - name: c\n    call: {tool: echo}\n  - set: {n: \"${{ steps.c.result.structuredContent.n }}\"}\n  - value: \"${{ vars.n + 'x' }}\"\n"},
		{"a counter", "vars: {n: 0}\nsteps:\n  - set: {n: \"${{ vars.n + 1 }}\"}\n  - value: \"${{ vars.n * 2 }}\"\n"},
		{"lists of different elements", "vars: {seen: []}\nsteps:\n  - set: {seen: \"${{ vars.seen + [1] }}\"}\n  - set: {seen: \"${{ ['a'] }}\"}\n  - value: \"${{ vars.seen.size() }}\"\n"},
		// A type that makes a set's own expression fail is taken back: the
		// expression compiles with the variable dyn, and the failed try
		// leaves no error behind.
		{"a type its set cannot take", "vars: {x: \"\"}\nsteps:\n  - set: {x: \"${{ vars.x == null ? 'none' : vars.x }}\"}\n"},
		{"null, then a string", "vars: {x: null}\nsteps:\n  - set: {x: \"a\"}\n  - value: \"${{ vars.x + 'b' }}\"\n"},
	}
	for _, c := range ok {
		if _, err := flow.Parse("ok.flow.yaml", []byte(header+c.src)); err != nil {
			t.Errorf("%s: rejected:\n%s\n%v", c.name, c.src, err)
		}
	}
	bad := []struct{ name, src, want string }{
		{"a literal", "vars: {n: 0}\nsteps:\n  - value: \"${{ vars.n + 'x' }}\"\n",
			"'_+_' applied to '(int, string)'"},
		{"a counter set by an expression", "vars: {n: 0}\nsteps:\n  - set: {n: \"${{ vars.n + 1 }}\"}\n  - value: \"${{ vars.n.size() }}\"\n",
			"'size' applied to 'int.()'"},
		{"through another variable", "inputs: {k: {type: integer, default: 2}}\nvars:\n  a: \"${{ inputs.k }}\"\n  b: \"${{ vars.a * 2 }}\"\nsteps:\n  - value: \"${{ vars.b + 'x' }}\"\n",
			"'_+_' applied to '(int, string)'"},
		{"a condition", "vars: {label: \"a\"}\nsteps:\n  - if: \"${{ vars.label }}\"\n    then: [{call: {tool: echo}}]\n",
			"expression has type string, want bool"},
		{"text with an expression is a string", "vars: {id: \"job-${{ 1 }}\"}\nsteps:\n  - value: \"${{ vars.id * 2 }}\"\n",
			"'_*_' applied to '(string, int)'"},
		{"a list", "vars: {seen: []}\nsteps:\n  - set: {seen: \"${{ vars.seen + [1] }}\"}\n  - value: \"${{ vars.seen + 1 }}\"\n",
			"'_+_' applied to '(list(dyn), int)'"},
	}
	for _, b := range bad {
		_, err := flow.Parse("bad.flow.yaml", []byte(header+b.src))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s:\n%s\ngot  %v\nwant an error with %q", b.name, b.src, err, b.want)
		} else if n := strings.Count(err.Error(), "bad.flow.yaml:"); n != 1 {
			t.Errorf("%s: %d problems, want 1 (a check run again must not repeat them):\n%v", b.name, n, err)
		}
	}
}
