package flow_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/flow"
	"github.com/toolwire/toolwire/internal/testwait"
)

// TestMalformed: hostile input gives clear errors, never hangs and never
// panics.
func TestMalformed(t *testing.T) {
	deepFlow := "steps: [{value: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}]\n"
	var deepBlock strings.Builder
	deepBlock.WriteString("steps:\n  - value:\n")
	for i := range 500 {
		fmt.Fprintf(&deepBlock, "%sk:\n", strings.Repeat(" ", 6+i*2))
	}
	bomb := `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
steps: [{value: *d}]
`
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i * 7919 % 251)
	}
	var manySteps strings.Builder
	manySteps.WriteString("steps:\n")
	for range 20 {
		manySteps.WriteString("  - value: 1\n")
	}
	cases := []struct {
		name string
		src  string
		opts []flow.LoadOption
		want string
	}{
		{"empty", "", nil, "no flow in the file"},
		{"comments only", "# nothing\n", nil, "no flow in the file"},
		{"scalar document", "hello\n", nil, "a flow document must be a mapping"},
		{"list document", "- a\n- b\n", nil, "a flow document must be a mapping"},
		{"second document not a mapping", "steps: [{value: 1}]\n---\n42\n", nil, "3:1: a flow document must be a mapping"},
		{"no steps", "name: x\n", nil, "a flow needs steps:"},
		{"empty steps", "steps: []\n", nil, "at least one step"},
		{"steps is a string", "steps: go\n", nil, "steps: want a list, not a string"},
		{"deep flow nesting", deepFlow, nil, "nested deeper than 64 levels"},
		{"deep block nesting", deepBlock.String(), nil, "nested deeper than 64 levels"},
		{"nesting limit option", "steps: [{value: [[[[1]]]]}]\n", []flow.LoadOption{flow.WithLimits(flow.Limits{MaxDepth: 3})}, "nested deeper than 3 levels"},
		{"alias bomb", bomb, nil, "anchors and aliases are not supported"},
		{"merge key", "x: &x {a: 1}\nsteps: [{value: {<<: *x}}]\n", nil, "not supported"},
		{"tag", "steps: [{value: !!binary aGk=}]\n", nil, "tags are not supported"},
		{"binary junk", string(junk), nil, "not text"},
		{"NUL byte", "steps: [{value: \"a\x00b\"}]\n", nil, "not text"},
		{"invalid UTF-8", "steps: [{value: \"\xff\xfe\"}]\n", nil, "not text"},
		{"unterminated quote", "steps: [{value: \"abc}]\n", nil, "1:"},
		{"bad indentation", "steps:\n  - value: 1\n   bad: 2\n", nil, ":"},
		{"duplicate key", "steps: [{value: 1}]\nsteps: [{value: 2}]\n", nil, "duplicate key \"steps\""},
		{"huge file", "steps: [{value: 1}]\n#" + strings.Repeat("x", 5<<20) + "\n", nil, "file larger than 4194304 bytes"},
		{"file size option", "steps: [{value: 1}]\n", []flow.LoadOption{flow.WithLimits(flow.Limits{MaxFileBytes: 10})}, "file larger than 10 bytes"},
		{"too many steps", manySteps.String(), []flow.LoadOption{flow.WithLimits(flow.Limits{MaxSteps: 10})}, "12:5: more than 10 steps in the flow"},
		{"long expression", "steps: [{value: \"${{ " + strings.Repeat("1 + ", 2000) + "1 }}\"}]\n", nil, "expression longer than 4096 bytes"},
		{"expression length option", "steps: [{value: \"${{ 1 + 2 + 3 }}\"}]\n", []flow.LoadOption{flow.WithLimits(flow.Limits{MaxExprBytes: 5})}, "expression longer than 5 bytes"},
		{"complex key", "? [a]\n: 1\nsteps: [{value: 1}]\n", nil, "2:1: found an invalid key"},
		{"number key", "1: x\nsteps: [{value: 1}]\n", nil, "unknown key \"1\""},
		{"infinity", "steps: [{value: .inf}]\n", nil, "infinity and NaN"},
		{"huge integer", "steps: [{retry: {attempts: 99999999999999999999}, value: 1}]\n", nil, "retry.attempts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A hostile input (a bomb, deep nesting) must not make the
			// parser hang: Returns fails the test if it does, naming it.
			var f *flow.File
			var err error
			testwait.Returns(t, "parsing "+c.name, func() { f, err = flow.Parse("m.flow.yaml", []byte(c.src), c.opts...) })
			if err == nil {
				t.Fatalf("no error; flows %d", len(f.Flows))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "m.flow.yaml:") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// TestLoadFile: Load reads a file, names flows after it and refuses files
// over the size limit before reading them.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/weather.flow.yaml"
	writeFile(t, path, "steps: [{value: 1}]\n---\nname: second\nsteps: [{value: 2}]\n---\nsteps: [{value: 3}]\n")
	f, err := flow.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fl := range f.Flows {
		names = append(names, fl.Name)
	}
	if got := strings.Join(names, ","); got != "weather,second,weather#3" {
		t.Fatalf("names %s", got)
	}
	if _, err := flow.Load(path, flow.WithLimits(flow.Limits{MaxFileBytes: 8})); err == nil || !strings.Contains(err.Error(), "larger than 8 bytes") {
		t.Fatalf("size limit: %v", err)
	}
	if _, err := flow.Load(dir + "/missing.flow.yaml"); err == nil {
		t.Fatal("missing file loaded")
	}
}

// TestParseModel: the parsed model keeps names, kinds, paths and places.
func TestParseModel(t *testing.T) {
	f := parse(t, header+`name: model
description: d
inputs:
  city: {type: string, default: Paris, description: where}
  n: {type: integer}
steps:
  - name: first
    timeout: 2s
    retry: {attempts: 3, backoff: 10ms, factor: 3, max_backoff: 1s, jitter: false, non_retryable: [ERR_ASSERTION]}
    call: {tool: echo, arguments: {text: hi}}
  - if: true
    then:
      - sleep: 1ms
  - read: {uri: "file:///${{ inputs.city }}"}
  - list: {what: prompts}
`)
	fl := f.Flows[0]
	if fl.Name != "model" || fl.Description != "d" || fl.Pos != (flow.Pos{Line: 1, Column: 1}) {
		t.Fatalf("flow %+v", fl)
	}
	if len(fl.Inputs) != 2 || fl.Inputs[0].Default != "Paris" || !fl.Inputs[1].Required || fl.Inputs[1].Type != "integer" {
		t.Fatalf("inputs %+v %+v", fl.Inputs[0], fl.Inputs[1])
	}
	s := fl.Steps[0]
	if s.Name != "first" || s.Kind != "call" || s.Path != "steps[0]" || s.Pos != (flow.Pos{Line: 9, Column: 5}) || s.Timeout != 2*time.Second {
		t.Fatalf("step %+v", s)
	}
	r := s.Retry
	if r.Attempts != 3 || r.Backoff != 10*time.Millisecond || r.Factor != 3 || r.MaxBackoff != time.Second || r.Jitter || len(r.NonRetryable) != 1 {
		t.Fatalf("retry %+v", r)
	}
	if fl.Steps[1].Kind != "if" || fl.Steps[1].Path != "steps[1]" {
		t.Fatalf("step %+v", fl.Steps[1])
	}
	for i, want := range []string{"echo", "", "file:///${{ inputs.city }}", "prompts"} {
		if got := fl.Steps[i].Target(); got != want {
			t.Errorf("step %d targets %q, want %q", i, got, want)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := writeFileErr(path, []byte(data)); err != nil {
		t.Fatal(err)
	}
}
