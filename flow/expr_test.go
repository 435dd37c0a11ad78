package flow

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSplitTemplate: ${{ }} pieces are found; "}}" inside strings or
// nested braces does not end an expression.
func TestSplitTemplate(t *testing.T) {
	cases := []struct {
		in   string
		want []part
	}{
		{"plain", []part{{text: "plain"}}},
		{"${{ a }}", []part{{src: "a", off: 4}}},
		{"x ${{ a }} y", []part{{text: "x "}, {src: "a", off: 6}, {text: " y"}}},
		{"${{ {'k': {'j': 1}} }}", []part{{src: "{'k': {'j': 1}}", off: 4}}},
		{"${{ '}}' + \"}}\" }}!", []part{{src: "'}}' + \"}}\"", off: 4}, {text: "!"}}},
	}
	for _, c := range cases {
		got, err := splitTemplate(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(part{})); diff != "" {
			t.Errorf("%q: %s", c.in, diff)
		}
	}
	if _, err := splitTemplate("a ${{ b "); err == nil {
		t.Error("unclosed expression accepted")
	}
}

// TestTemplateKinds: one expression keeps its type, mixed text
// interpolates (strings as they are, other values as compact JSON), map
// keys are never evaluated.
func TestTemplateKinds(t *testing.T) {
	f, err := Parse("t.flow.yaml", []byte(`inputs:
  n: {type: integer, default: 7}
  o: {type: object, default: {a: [1, true, null]}}
steps:
  - name: v
    value:
      typed: "  ${{ inputs.n }}  "
      text: "n=${{ inputs.n }} o=${{ inputs.o }} s=${{ 'str' }} f=${{ 1.5 }}"
      "${{ key }}": kept
      list: ["${{ inputs.n * 2 }}", lit]
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Flows[0].Run(context.Background())
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	root := &scope{vars: map[string]any{"inputs.n": int64(7), "inputs.o": map[string]any{"a": []any{int64(1), true, nil}}}}
	got, err := f.Flows[0].Steps[0].val.eval(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"typed":      int64(7),
		"text":       `n=7 o={"a":[1,true,null]} s=str f=1.5`,
		"${{ key }}": "kept",
		"list":       []any{int64(14), "lit"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
}

// TestExprPositions: diagnostics point into the file: quoted, plain and
// block scalars, and expressions after text.
func TestExprPositions(t *testing.T) {
	cases := []struct{ src, want string }{
		{"steps:\n  - value: \"${{ nope }}\"\n", "t.flow.yaml:2:17: CEL type error: undeclared reference to 'nope'"},
		{"steps:\n  - value: '${{ nope }}'\n", "t.flow.yaml:2:17:"},
		{"steps:\n  - value: abc ${{ nope }}\n", "t.flow.yaml:2:20:"},
		{"steps:\n  - value: \"ab ${{ 1 }} ${{ nope }}\"\n", "t.flow.yaml:2:29:"},
		{"steps:\n  - value: |\n      line one\n      x ${{ nope }}\n", "t.flow.yaml:4:13:"},
		{"steps:\n  - value: |\n      ${{ 1 +\n        nope }}\n", "t.flow.yaml:4:9:"},
	}
	for _, c := range cases {
		_, err := Parse("t.flow.yaml", []byte(c.src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want prefix %q", c.src, err, c.want)
		}
	}
}

// TestStepResultTypes: steps.<name>.result is typed by the step's kind, so
// misuse is a static type error.
func TestStepResultTypes(t *testing.T) {
	cases := []struct{ steps, want string }{
		{"  - {name: w, while: false, max_iterations: 1, do: [{value: 1}]}\n  - value: \"${{ steps.w.result + 'x' }}\"\n", "(int, string)"},
		{"  - {name: v, value: text}\n  - value: \"${{ steps.v.result + 1 }}\"\n", "(string, int)"},
		{"  - {name: l, for_each: [1], do: [{value: 1}]}\n  - value: \"${{ steps.l.result + 1 }}\"\n", "(list(dyn), int)"},
		{"  - {name: v, value: true}\n  - when: \"${{ steps.v.result }}\"\n    value: 1\n", ""},
	}
	for _, c := range cases {
		_, err := Parse("t.flow.yaml", []byte("steps:\n"+c.steps))
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.steps, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.steps, err, c.want)
		}
	}
}

// TestFormatValue: interpolation formats.
func TestFormatValue(t *testing.T) {
	for in, want := range map[any]string{"s": "s", int64(3): "3", 2.5: "2.5", true: "true"} {
		if got := formatValue(in); got != want {
			t.Errorf("%v: %q", in, got)
		}
	}
	if formatValue(nil) != "null" || formatValue([]any{"a", int64(1)}) != `["a",1]` {
		t.Error("nil or list formatting")
	}
}
