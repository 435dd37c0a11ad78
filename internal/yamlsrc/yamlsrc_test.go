package yamlsrc

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
)

// TestParseNesting: collections nested past the limit are refused at the
// token that goes too deep, flow ones by brackets and block ones by
// indentation; at the limit they parse.
func TestParseNesting(t *testing.T) {
	for _, c := range []struct {
		name, src string
		ok        bool
	}{
		{"flow at the limit", strings.Repeat("[", 4) + strings.Repeat("]", 4), true},
		{"flow past the limit", strings.Repeat("[", 5) + strings.Repeat("]", 5), false},
		{"flow mappings past the limit", "a: " + strings.Repeat("{b: ", 5) + "1" + strings.Repeat("}", 5), false},
		{"block past the limit", blockNest(12), false},
		{"block within the limit", blockNest(3), true},
	} {
		_, err := Parse([]byte(c.src), 4)
		if c.ok != (err == nil) {
			t.Errorf("%s: %v", c.name, err)
		}
		if err != nil && !c.ok {
			line, col, msg := SyntaxError(err)
			if line < 1 || col < 1 || msg != "nested deeper than 4 levels" {
				t.Errorf("%s: %d:%d: %q", c.name, line, col, msg)
			}
		}
	}
}

// blockNest is n block mappings, one inside the other.
func blockNest(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat("  ", i) + "k:\n")
	}
	b.WriteString(strings.Repeat("  ", n) + "v: 1\n")
	return b.String()
}

// TestSyntaxError: a repeated key says where the first one was; an error
// that is not the parser's has no position.
func TestSyntaxError(t *testing.T) {
	_, err := Parse([]byte("a: 1\nb: 2\na: 3\n"), 8)
	line, col, msg := SyntaxError(err)
	if line != 3 || col != 1 || msg != `duplicate key "a" (first at 1:1)` {
		t.Errorf("%d:%d: %q", line, col, msg)
	}
	if line, col, msg := SyntaxError(errors.New("disk on fire")); line != 0 || col != 0 || msg != "disk on fire" {
		t.Errorf("%d:%d: %q", line, col, msg)
	}
}

// TestUnsupported: anchors, aliases, tags, merge keys and complex keys are
// named; ordinary nodes are not.
func TestUnsupported(t *testing.T) {
	for src, want := range map[string]string{
		"a: &x 1\nb: *x\n":      "anchors and aliases are not supported",
		"a: !!str 1\n":          "tags are not supported",
		"a: {b: 1}\nc: {<<: 1}": "merge keys (<<) are not supported",
		"? a\n: 1\n":            "complex keys (?) are not supported",
		"a: [1, {b: c}]\n":      "",
	} {
		tree, err := Parse([]byte(src), 8)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		got := ""
		for _, doc := range tree.Docs {
			ast.Walk(visitor(func(n ast.Node) {
				if why := Unsupported(n); why != "" && got == "" {
					got = why
				}
			}), doc)
		}
		if got != want {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}
}

type visitor func(ast.Node)

func (v visitor) Visit(n ast.Node) ast.Visitor { v(n); return v }

// FuzzParse: any input parses or fails with an error, never a panic or a
// tree nested past the limit.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a: 1\n", "[[[[[]]]]]", blockNest(10), "a: &x [*x]\n", "{a: [b, {c: d}]}", "- - - - - x\n", "\x00\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse(data, 4)
	})
}
