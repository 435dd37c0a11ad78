package yamlsrc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
)

func body(t *testing.T, src string) *ast.MappingNode {
	t.Helper()
	tree, err := Parse([]byte(src), 16)
	if err != nil {
		t.Fatal(err)
	}
	return tree.Docs[0].Body.(*ast.MappingNode)
}

func value(m *ast.MappingNode, key string) ast.Node {
	for _, mv := range m.Values {
		if k, _ := KeyText(mv.Key); k == key {
			return mv.Value
		}
	}
	return nil
}

// Each reading of a value records what is wrong with it, where, and the
// problems come back in the order of the file.
func TestReader(t *testing.T) {
	m := body(t, `
s: text
n: 12
b: true
nothing:
l: [a, b]
empty: []
m: {a: 1}
lit: |
  block
`)
	var r Reader
	for key, want := range map[string]string{"s": "text", "n": "12", "b": "true", "lit": "block\n"} {
		if got, ok := r.Scalar(value(m, key), key); !ok || got != want {
			t.Errorf("Scalar(%s) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if l, ok := r.List(value(m, "l"), "l"); !ok || len(l) != 2 {
		t.Errorf("List(l) = %v, %v", l, ok)
	}
	if l, ok := r.List(value(m, "empty"), "empty"); !ok || l == nil || len(l) != 0 {
		t.Errorf("List(empty) = %#v, %v; want an empty list", l, ok)
	}
	if l, ok := r.List(value(m, "nothing"), "nothing"); !ok || l != nil {
		t.Errorf("List(nothing) = %#v, %v; want nil", l, ok)
	}
	if mm, ok := r.Mapping(value(m, "m"), "m"); !ok || mm == nil {
		t.Errorf("Mapping(m) = %v, %v", mm, ok)
	}
	if r.Count() != 0 {
		t.Fatalf("problems reading sound values: %v", r.Problems())
	}
	r.Scalar(value(m, "m"), "m")
	r.List(value(m, "s"), "s")
	r.Mapping(value(m, "n"), "n")
	r.Scalar(value(m, "nothing"), "nothing")
	r.Unknown(m.Values[2].Key, "b", "", "a", "bb", "ccc")
	r.Unknown(m.Values[0].Key, "colour", "upstream \"x\"", "command", "url")
	r.Unknown(m.Values[1].Key, "comand", "upstream \"x\"", "command", "url")
	var got []string
	for _, p := range r.Problems() {
		got = append(got, fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Msg))
	}
	want := []string{
		`2:1: unknown key "colour" in upstream "x" (known: command, url)`,
		`2:4: s: want a list, not a string`,
		`3:1: unknown key "comand" in upstream "x" (did you mean "command"?)`,
		`3:4: n: want a mapping, not a number`,
		`4:1: unknown key "b" (known: a, bb, ccc)`, // one letter is near everything short: no guess
		`5:9: nothing: no value (want a string)`,
		`8:4: m: want a string, not a mapping`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRewind: Rewind drops what was recorded after a count and keeps what
// was before it; a count past the end or below zero changes nothing.
func TestRewind(t *testing.T) {
	var r Reader
	r.ErrorAt(1, 1, "first")
	n := r.Count()
	r.ErrorAt(2, 1, "second")
	r.ErrorAt(3, 1, "third")
	r.Rewind(5)
	r.Rewind(-1)
	if r.Count() != 3 {
		t.Fatalf("Rewind past the end or below zero dropped problems: %d left, want 3", r.Count())
	}
	r.Rewind(n)
	if ps := r.Problems(); len(ps) != 1 || ps[0].Msg != "first" {
		t.Fatalf("after Rewind(%d): %v, want only the first problem", n, ps)
	}
}
