package flow_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAssertOperators: each operator passes on a matching value and fails
// with ERR_ASSERTION carrying expected, actual and operator, and a message
// naming the step's place in the file.
func TestAssertOperators(t *testing.T) {
	ts := newTestServer(t)
	pass := runFlow(t, ts, `
steps:
  - assert: {that: "${{ {'a': [1, 2.0]} }}", equals: {a: [1.0, 2]}}
  - assert: {that: hello world, contains: lo w}
  - assert: {that: "${{ [1, {'x': 2}] }}", contains: {x: 2}}
  - assert: {that: {a: 1, b: 2}, contains: {b: 2}}
  - assert: {that: abc123, matches: "^[a-z]+[0-9]+$"}
  - assert: {that: {n: 3}, schema: {type: object, required: [n], properties: {n: {type: integer}}}}
  - assert: {that: [1, 2, 3], count: 3}
  - assert: {that: {a: 1}, count: 1}
  - assert: {that: "héllo", count: 5}
  - assert: {that: abc, matches: "${{ '^a' }}"}
`)
	mustPass(t, pass)

	cases := []struct {
		op, assert string
		expected   any
		actual     any
		msg        string
	}{
		{"equals", `{that: "${{ 1 + 1 }}", equals: 3}`, int64(3), int64(2), "expected 2 to equal 3"},
		{"contains", `{that: [1, 2], contains: 5}`, int64(5), []any{int64(1), int64(2)}, "expected [1,2] to contain 5"},
		{"contains", `{that: {a: 1}, contains: {a: 2}}`, map[string]any{"a": int64(2)}, map[string]any{"a": int64(1)}, "to contain"},
		{"matches", `{that: abc, matches: "^z"}`, "^z", "abc", `expected "abc" to match ^z`},
		{"matches", `{that: 12, matches: "^1"}`, "^1", int64(12), "matches needs a string"},
		{"schema", `{that: {n: x}, schema: {properties: {n: {type: integer}}}}`, map[string]any{"properties": map[string]any{"n": map[string]any{"type": "integer"}}}, map[string]any{"n": "x"}, "does not match the schema"},
		{"count", `{that: [1], count: 2}`, int64(2), []any{int64(1)}, "expected 2 items, got 1"},
		{"equals", `{that: 1, equals: 2, message: "custom ${{ 40 + 2 }}"}`, int64(2), int64(1), "custom 42"},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			res := runFlow(t, ts, "steps:\n  - value: 0\n  - name: check\n    assert: "+c.assert+"\n")
			e := mustFail(t, res, "ERR_ASSERTION")
			want := map[string]any{"expected": c.expected, "actual": c.actual, "operator": c.op}
			if diff := cmp.Diff(want, e.Data); diff != "" {
				t.Errorf("data: %s", diff)
			}
			if !strings.Contains(e.Message, c.msg) {
				t.Errorf("message %q does not contain %q", e.Message, c.msg)
			}
			if !strings.HasSuffix(e.Message, "test.flow.yaml:5:5 steps[1] (check)") {
				t.Errorf("message %q does not name the step's place", e.Message)
			}
		})
	}
}
