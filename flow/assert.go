package flow

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// assertOps are the five operators; an assert step has exactly one.
var assertOps = []string{"equals", "contains", "matches", "schema", "count"}

// assertKeys are the keys of an assert step's mapping.
var assertKeys = append([]string{"that", "message"}, assertOps...)

// assertSpec is a parsed assert step.
type assertSpec struct {
	that     *value
	op       string
	expected *value
	re       *regexp.Regexp     // matches with a literal pattern
	schema   *jsonschema.Schema // schema, compiled at Load
	message  *value
}

func (p *parser) assertSpec(k entry, path string, depth int) *assertSpec {
	a := &assertSpec{}
	fields, _ := p.mapping(k.v, "assert")
	hasThat := false
	var opEntry entry
	for _, f := range fields {
		switch f.key {
		case "that":
			a.that, hasThat = p.value(f.v, depth+2), true
		case "message":
			a.message = p.value(f.v, depth+2)
		case "equals", "contains", "matches", "schema", "count":
			if a.op != "" {
				p.Errorf(f.k, "%s: assert has two operators, %s and %s (want exactly one of %s)", path, a.op, f.key, strings.Join(assertOps, ", "))
				continue
			}
			a.op, opEntry = f.key, f
			a.expected = p.value(f.v, depth+2)
		default:
			p.unknown(f, "assert", assertKeys...)
			hasThat = hasThat || meant(f.key, "that") != ""
			if a.op == "" && meant(f.key, assertOps...) != "" {
				a.op = "?" // misspelt: reported above, checked no further
			}
		}
	}
	if !hasThat {
		p.Errorf(k.k, "%s: assert needs that:", path)
	}
	if a.op == "" {
		p.Errorf(k.k, "%s: assert needs one of %s", path, strings.Join(assertOps, ", "))
		return a
	}
	if a.op == "?" {
		a.op = ""
		return a
	}
	switch a.op {
	case "matches":
		if a.expected.kind == vLit {
			s, ok := a.expected.lit.(string)
			if !ok {
				p.Errorf(opEntry.v, "%s: matches: want a regular expression string", path)
			} else if re, err := regexp.Compile(s); err != nil {
				p.Errorf(opEntry.v, "%s: matches: bad regexp: %v", path, err)
			} else {
				a.re = re
			}
		} else if a.expected.kind != vExpr {
			p.Errorf(opEntry.v, "%s: matches: a pattern is a literal or one expression", path)
		}
	case "schema":
		if a.expected.dynamic() {
			p.Errorf(opEntry.v, "%s: schema: a schema cannot hold expressions", path)
		} else if sch, err := compileSchema(a.expected.lit); err != nil {
			p.Errorf(opEntry.v, "%s: schema: invalid JSON Schema: %s", path, oneLine(err))
		} else {
			a.schema = sch
		}
	case "count":
		if a.expected.kind == vLit {
			if n, ok := a.expected.lit.(int64); !ok || n < 0 {
				p.Errorf(opEntry.v, "%s: count: want a non-negative integer", path)
			}
		}
	}
	return a
}

// compileSchema compiles a JSON Schema (draft 2020-12 unless it says
// otherwise). Nothing is loaded from outside: no files, no URLs.
func compileSchema(doc any) (*jsonschema.Schema, error) {
	if _, ok := doc.(map[string]any); !ok {
		if _, ok := doc.(bool); !ok {
			return nil, fmt.Errorf("want a mapping (or true/false)")
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const url = "mem:///assert.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// run checks the assertion; failure is ERR_ASSERTION with data {expected,
// actual, operator}.
func (a *assertSpec) run(ctx context.Context, s *Step, sc *scope, file string) error {
	actual, err := a.that.eval(ctx, sc)
	if err != nil {
		return err
	}
	expected, err := a.expected.eval(ctx, sc)
	if err != nil {
		return err
	}
	ok, why, err := a.holds(actual, expected)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	msg := ""
	if a.message != nil {
		m, err := a.message.eval(ctx, sc)
		if err != nil {
			return err
		}
		msg = formatValue(m)
	}
	if msg == "" {
		msg = why
	}
	where := fmt.Sprintf("%s:%d:%d %s", file, s.Pos.Line, s.Pos.Column, s.Path)
	if s.Name != "" {
		where += " (" + s.Name + ")"
	}
	return &Error{Code: CodeAssertion, Message: msg + ": " + where,
		Data: map[string]any{"expected": expected, "actual": actual, "operator": a.op}}
}

// holds evaluates the operator; why says what failed.
func (a *assertSpec) holds(actual, expected any) (bool, string, error) {
	switch a.op {
	case "equals":
		return deepEqual(actual, expected), fmt.Sprintf("expected %s to equal %s", formatValue(actual), formatValue(expected)), nil
	case "contains":
		return contains(actual, expected), fmt.Sprintf("expected %s to contain %s", formatValue(actual), formatValue(expected)), nil
	case "matches":
		s, ok := actual.(string)
		if !ok {
			return false, fmt.Sprintf("matches needs a string, got %s", formatValue(actual)), nil
		}
		re := a.re
		if re == nil {
			pat, ok := expected.(string)
			if !ok {
				return false, "", &Error{Code: CodeExpression, Message: "matches: the pattern is not a string"}
			}
			var err error
			if re, err = regexp.Compile(pat); err != nil {
				return false, "", &Error{Code: CodeExpression, Message: "matches: bad regexp: " + err.Error()}
			}
		}
		return re.MatchString(s), fmt.Sprintf("expected %q to match %s", s, re), nil
	case "schema":
		if err := a.schema.Validate(actual); err != nil {
			return false, "does not match the schema: " + oneLine(err), nil
		}
		return true, "", nil
	case "count":
		want, ok := toInt(expected)
		if !ok {
			return false, "", &Error{Code: CodeExpression, Message: "count: want an integer, got " + formatValue(expected)}
		}
		n := -1
		switch x := actual.(type) {
		case []any:
			n = len(x)
		case map[string]any:
			n = len(x)
		case string:
			n = utf8.RuneCountInString(x)
		default:
			return false, fmt.Sprintf("count needs a list, map or string, got %s", formatValue(actual)), nil
		}
		return int64(n) == want, fmt.Sprintf("expected %d items, got %d", want, n), nil
	}
	return false, "unknown operator " + a.op, nil
}

func toInt(x any) (int64, bool) {
	switch x := x.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) {
			return int64(x), true
		}
	}
	return 0, false
}

// number is x as a float64 when it is a JSON number.
func number(x any) (float64, bool) {
	switch x := x.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// deepEqual compares JSON-like values; numbers compare by value (1 == 1.0).
func deepEqual(a, b any) bool {
	if na, ok := number(a); ok {
		nb, ok := number(b)
		return ok && na == nb
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool, string:
		return a == b
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !deepEqual(a[i], bl[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		return ok && len(a) == len(bm) && hasMembers(bm, a)
	}
	return false
}

// hasMembers reports whether every member of part is in whole with an
// equal value (deepEqual): how a map equals another of its size, and how
// it contains a subset of members.
func hasMembers(whole, part map[string]any) bool {
	for k, v := range part {
		w, ok := whole[k]
		if !ok || !deepEqual(v, w) {
			return false
		}
	}
	return true
}

// contains: a substring of a string, an element of a list, or a subset of
// a map's members.
func contains(hay, needle any) bool {
	switch h := hay.(type) {
	case string:
		n, ok := needle.(string)
		return ok && strings.Contains(h, n)
	case []any:
		for _, x := range h {
			if deepEqual(x, needle) {
				return true
			}
		}
	case map[string]any:
		n, ok := needle.(map[string]any)
		return ok && hasMembers(h, n)
	}
	return false
}

// oneLine flattens a multi-line error (as jsonschema writes them).
func oneLine(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(strings.TrimSpace(l), "- ")
	}
	return strings.Join(lines, "; ")
}
