package flow_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/flow"
)

// brokenCase is one manifest of testdata/broken: the one problem the
// check must report, at its place, and whether a JSON Schema of the
// format can see it too (a structural mistake).
type brokenCase struct {
	path       string
	line, col  int
	msg        string
	structural bool
}

var wantLine = regexp.MustCompile(`^# want: (\d+):(\d+): (.+)$`)

// brokenCases reads testdata/broken: each file starts with an optional
// "# structural: true" line and then "# want: LINE:COL: MESSAGE".
func brokenCases(t *testing.T) []brokenCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "broken", "*.flow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []brokenCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(data), "\n", 3)
		c := brokenCase{path: p}
		if lines[0] == "# structural: true" {
			c.structural = true
			lines = lines[1:]
		}
		m := wantLine.FindStringSubmatch(lines[0])
		if m == nil {
			t.Fatalf("%s: no \"# want: LINE:COL: MESSAGE\" line first (after an optional \"# structural: true\")", p)
		}
		fmt.Sscan(m[1], &c.line)
		fmt.Sscan(m[2], &c.col)
		c.msg = m[3]
		out = append(out, c)
	}
	return out
}

// TestCheckBrokenManifests: each broken manifest (unknown fields on every
// content variant and on the results, cross-variant and unguarded reads
// of the union, a while that cannot end, steps that may not have run,
// misspelt kinds and keys) is rejected with exactly one diagnostic, at
// its line and column, saying what is wrong.
func TestCheckBrokenManifests(t *testing.T) {
	cases := brokenCases(t)
	if len(cases) < 20 {
		t.Fatalf("%d broken manifests, want at least 20", len(cases))
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c.path), ".flow.yaml"), func(t *testing.T) {
			_, err := flow.Load(c.path)
			if err == nil {
				t.Fatalf("%s passed the check", c.path)
			}
			errs := unjoin(err)
			if len(errs) != 1 {
				t.Errorf("%d diagnostics for one mistake:\n%v", len(errs), err)
			}
			var d *flow.Diagnostic
			if !errors.As(errs[0], &d) {
				t.Fatalf("not a *Diagnostic: %T %v", errs[0], errs[0])
			}
			if d.File != c.path || d.Line != c.line || d.Column != c.col || !strings.Contains(d.Msg, c.msg) {
				t.Errorf("got  %s:%d:%d: %s\nwant %s:%d:%d: ...%s...", d.File, d.Line, d.Column, d.Msg, c.path, c.line, c.col, c.msg)
			}
		})
	}
}

// TestCheckGuardedAccesses: the reads the broken manifests make, guarded
// by a type check (ternary, &&, ||, in, has(), filter, when:, if:, an
// earlier assert), pass the check; so do references to steps that ran for
// sure.
func TestCheckGuardedAccesses(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "guarded", "*.flow.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/guarded manifests (%v)", err)
	}
	for _, p := range paths {
		if _, err := flow.Load(p); err != nil {
			t.Errorf("%s:\n%v", p, err)
		}
	}
}

// TestCheckNarrowing: the guards that narrow a content block, one by one,
// against the same read without them.
func TestCheckNarrowing(t *testing.T) {
	const pre = "clients:\n  srv: {command: x}\nsteps:\n  - name: r\n    call: {tool: t}\n"
	c0 := "steps.r.result.content[0]"
	cases := []struct {
		name, steps string
		want        string // "" when accepted
	}{
		{"unguarded", `  - value: "${{ ` + c0 + `.data }}"`, "6:43: field \"data\" is only on image or audio content"},
		{"ternary", `  - value: "${{ ` + c0 + `.type == 'audio' ? ` + c0 + `.data : '' }}"`, ""},
		{"ternary else", `  - value: "${{ ` + c0 + `.type == 'audio' ? '' : ` + c0 + `.data }}"`, "field \"data\" is only on image or audio content, and this may be text, resource_link or resource content"},
		{"negated", `  - value: "${{ !(` + c0 + `.type != 'image') ? ` + c0 + `.data : '' }}"`, ""},
		{"or both", `  - value: "${{ ` + c0 + `.type == 'image' || ` + c0 + `.type == 'audio' ? ` + c0 + `.data : '' }}"`, ""},
		{"or too wide", `  - value: "${{ ` + c0 + `.type == 'image' || ` + c0 + `.type == 'text' ? ` + c0 + `.data : '' }}"`, "and this may be text content"},
		{"other index", `  - value: "${{ ` + c0 + `.type == 'image' ? steps.r.result.content[1].data : '' }}"`, "field \"data\" is only on image or audio content"},
		{"comprehension variable", `  - value: "${{ steps.r.result.content.all(c, c.type == 'image' && size(c.data) > 0) }}"`, ""},
		{"wrong variable", `  - value: "${{ steps.r.result.content.all(c, steps.r.result.content.all(d, c.type == 'image' && size(d.data) > 0)) }}"`, "field \"data\" is only on image or audio content"},
		{"when", "  - when: \"${{ " + c0 + ".type == 'image' }}\"\n    value: \"${{ " + c0 + ".data }}\"", ""},
		{"guard does not leak past its step", "  - when: \"${{ " + c0 + ".type == 'image' }}\"\n    value: 1\n  - value: \"${{ " + c0 + ".data }}\"", "field \"data\" is only on"},
		{"assert", "  - assert: {that: \"${{ " + c0 + ".type }}\", equals: audio}\n  - value: \"${{ " + c0 + ".data }}\"", ""},
		{"assert in a try does not leak", "  - try:\n      - assert: {that: \"${{ " + c0 + ".type }}\", equals: audio}\n    catch: [{do: [{value: 0}]}]\n  - value: \"${{ " + c0 + ".data }}\"", "field \"data\" is only on"},
		{"has() false rules out", `  - value: "${{ has(` + c0 + `.text) ? '' : ` + c0 + `.type }}"`, ""},
		{"compared with a map literal", `  - value: "${{ ` + c0 + ` == {'type': 'text', 'text': 'x'} && steps.r.result.content != [] }}"`, ""},
		{"prompt content", `  - value: "${{ steps.r.result.content[0].type == 'text' ? steps.r.result.content[0].text : '' }}"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := diagnostics(t, pre+c.steps+"\n")
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("rejected:\n%s", strings.Join(got, "\n"))
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Fatalf("want one diagnostic with %q, got:\n%s", c.want, strings.Join(got, "\n"))
			}
		})
	}
}

// TestCheckTwoUnknownFields: two mistakes in one expression are two
// messages, each with its own type and suggestion.
func TestCheckTwoUnknownFields(t *testing.T) {
	got := diagnostics(t, "clients:\n  srv: {command: x}\nsteps:\n  - name: r\n    call: {tool: t}\n"+
		"  - value: \"${{ size(steps.r.result.contnet) + size(steps.r.result.content[0].annotations.audiences) }}\"\n")
	want := []string{
		`6:37: unknown field "contnet" on CallToolResult (did you mean "content"?)`,
		`6:91: unknown field "audiences" on Annotations (did you mean "audience"?)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
