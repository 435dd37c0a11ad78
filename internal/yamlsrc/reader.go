package yamlsrc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/internal/suggest"
)

// Problem is a mistake at a place in a file; Line is 0 when the place is
// unknown.
type Problem struct {
	Line, Column int
	Msg          string
}

// Reader reads values out of a syntax tree and collects a Problem for each
// mistake rather than stopping at the first, so that one reading names
// them all. The gateway's config decoder and the flow parser both read
// through it: keys, scalars, mappings, lists and unknown keys are read and
// reported one way.
type Reader struct {
	problems []Problem
}

// Errorf records a problem at n.
func (r *Reader) Errorf(n ast.Node, format string, args ...any) {
	line, col := Position(n)
	r.ErrorAt(line, col, format, args...)
}

// ErrorAt records a problem at a line and column (0: unknown).
func (r *Reader) ErrorAt(line, col int, format string, args ...any) {
	r.problems = append(r.problems, Problem{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

// SyntaxError records an error of the YAML parser at its place.
func (r *Reader) SyntaxError(err error) {
	line, col, msg := SyntaxError(err)
	r.ErrorAt(line, col, "%s", msg)
}

// Count is how many problems were recorded so far: a reader of one part
// compares it before and after to know whether that part was sound.
func (r *Reader) Count() int { return len(r.problems) }

// Rewind drops the problems recorded after the first n (a Count taken
// before), for a reader that tries a reading and then does it again.
func (r *Reader) Rewind(n int) {
	if n >= 0 && n < len(r.problems) {
		r.problems = r.problems[:n]
	}
}

// Problems returns what was recorded, in the order of the file (those at
// the same place in the order recorded).
func (r *Reader) Problems() []Problem {
	ps := slices.Clone(r.problems)
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	return ps
}

// Position is where n starts. A block mapping's own token is its first
// colon, so it is placed at its first key instead, and a key-value pair at
// its key. 0, 0 when n has no position.
func Position(n ast.Node) (line, col int) {
	if m, ok := n.(*ast.MappingNode); ok && !m.IsFlowStyle && len(m.Values) > 0 {
		n = m.Values[0].Key
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		n = mv.Key
	}
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0, 0
	}
	p := n.GetToken().Position
	return p.Line, p.Column
}

// Kind names n's kind in a message: mapping, list, null, string, number,
// boolean or scalar.
func Kind(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode:
		return "mapping"
	case *ast.SequenceNode:
		return "list"
	case *ast.NullNode, nil:
		return "null"
	case *ast.StringNode, *ast.LiteralNode:
		return "string"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number"
	case *ast.BoolNode:
		return "boolean"
	}
	return "scalar"
}

// Supported records (and returns false for) the YAML features these files
// do not take (Unsupported).
func (r *Reader) Supported(n ast.Node) bool {
	if why := Unsupported(n); why != "" {
		r.Errorf(n, "%s", why)
		return false
	}
	return true
}

// Key is the text of a scalar key as written (KeyText), recording a
// problem for any other key.
func (r *Reader) Key(n ast.Node) (string, bool) {
	if n == nil || !r.Supported(n) {
		return "", false
	}
	s, ok := KeyText(n)
	if !ok {
		r.Errorf(n, "a key must be a string, not a %s", Kind(n))
	}
	return s, ok
}

// KeyText is the text of a scalar key as written; false for a key that is
// not a scalar.
func KeyText(n ast.Node) (string, bool) {
	switch n := n.(type) {
	case *ast.StringNode:
		return n.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode, *ast.NullNode:
		return n.GetToken().Value, true
	}
	return "", false
}

// Scalar is a scalar's text: a string as it reads, a number or a boolean
// as written. what names the value in a problem.
func (r *Reader) Scalar(n ast.Node, what string) (string, bool) {
	if n == nil {
		r.ErrorAt(0, 0, "%s: no value (want a string)", what)
		return "", false
	}
	if !r.Supported(n) {
		return "", false
	}
	switch n := n.(type) {
	case *ast.StringNode:
		return n.Value, true
	case *ast.LiteralNode:
		return n.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value, true
	case *ast.NullNode:
		r.Errorf(n, "%s: no value (want a string)", what)
		return "", false
	}
	r.Errorf(n, "%s: want a string, not a %s", what, Kind(n))
	return "", false
}

// Mapping is n as a mapping; null (a key with no value) or an empty
// mapping is nil with ok true.
func (r *Reader) Mapping(n ast.Node, what string) (*ast.MappingNode, bool) {
	m, ok := collection[*ast.MappingNode](r, n, what, "mapping")
	if m == nil || len(m.Values) == 0 {
		return nil, ok
	}
	return m, true
}

// List is n's items; null (or nothing) is nil with ok true, and an empty
// list an empty slice.
func (r *Reader) List(n ast.Node, what string) ([]ast.Node, bool) {
	l, ok := collection[*ast.SequenceNode](r, n, what, "list")
	if l == nil {
		return nil, ok
	}
	if l.Values == nil {
		return []ast.Node{}, true
	}
	return l.Values, true
}

// collection is n as the node type T of a mapping or a list (want names
// it in a problem); nothing or null is a nil T with ok true.
func collection[T interface {
	*ast.MappingNode | *ast.SequenceNode
	ast.Node
}](r *Reader, n ast.Node, what, want string) (T, bool) {
	if n == nil {
		return nil, true
	}
	if !r.Supported(n) {
		return nil, false
	}
	switch c := n.(type) {
	case T:
		return c, true
	case *ast.NullNode:
		return nil, true
	}
	r.Errorf(n, "%s: want a %s, not a %s", what, want, Kind(n))
	return nil, false
}

// maxKnownListed is how many known keys an unknown-key problem lists when
// none is a likely typo.
const maxKnownListed = 12

// Unknown records an unknown key at n: where names the place ("" for the
// top level), and the message suggests the known key a typo away, or else
// lists the known keys.
func (r *Reader) Unknown(n ast.Node, key, where string, known ...string) {
	if where != "" {
		where = " in " + where
	}
	hint := ""
	if best, ok := suggest.Nearest(key, known); ok {
		hint = fmt.Sprintf(" (did you mean %q?)", best)
	} else if len(known) > 0 && len(known) <= maxKnownListed {
		hint = " (known: " + strings.Join(known, ", ") + ")"
	}
	r.Errorf(n, "unknown key %q%s%s", key, where, hint)
}
