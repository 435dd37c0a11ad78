package enrich

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// jsonNull stands for a JSON null in template and CEL data. A nil
// interface would stop a template at the first field read through it
// ("nil pointer evaluating"); a nil map reads every field as missing, so
// {{.result.owner.team}} renders empty when owner is null, as when it is
// absent. It encodes as null and prints as nothing.
type jsonNull map[string]any

// MarshalJSON writes null.
func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// String is empty: a null prints as nothing.
func (jsonNull) String() string { return "" }

// outFunc is appended to every printing action of a template, so that a
// missing value prints as nothing (not "<no value>"), null as nothing,
// and an object or array as JSON.
const outFunc = "_enrichOut"

// funcs is the fixed function map of every template. Each takes its
// operands as any, so a missing value or a JSON number is an empty string
// or its text rather than a type error.
var funcs = template.FuncMap{
	"json":        tplJSON,
	"default":     tplDefault,
	"lower":       func(v any) string { return strings.ToLower(str(v)) },
	"upper":       func(v any) string { return strings.ToUpper(str(v)) },
	"trim":        func(v any) string { return strings.TrimSpace(str(v)) },
	"trunc":       tplTrunc,
	"pathescape":  func(v any) string { return url.PathEscape(str(v)) },
	"queryescape": func(v any) string { return url.QueryEscape(str(v)) },
	"contains":    func(sub, v any) bool { return strings.Contains(str(v), str(sub)) },
	"hasPrefix":   func(prefix, v any) bool { return strings.HasPrefix(str(v), str(prefix)) },
	"hasSuffix":   func(suffix, v any) bool { return strings.HasSuffix(str(v), str(suffix)) },
	"join":        tplJoin,
	outFunc:       str,
}

// compileTemplate parses one template of the configuration and appends
// outFunc to each of its printing actions.
func compileTemplate(name, text string) (*template.Template, error) {
	t, err := template.New(name).Funcs(funcs).Parse(text)
	if err != nil {
		return nil, err
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			wrapActions(tt.Tree, tt.Tree.Root)
		}
	}
	return t, nil
}

func wrapActions(tree *parse.Tree, n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			wrapActions(tree, c)
		}
	case *parse.ActionNode:
		if len(n.Pipe.Decl) == 0 { // it prints
			id := parse.NewIdentifier(outFunc).SetTree(tree).SetPos(n.Pos)
			n.Pipe.Cmds = append(n.Pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: n.Pos, Args: []parse.Node{id}})
		}
	case *parse.IfNode:
		wrapActions(tree, n.List)
		wrapActions(tree, n.ElseList)
	case *parse.RangeNode:
		wrapActions(tree, n.List)
		wrapActions(tree, n.ElseList)
	case *parse.WithNode:
		wrapActions(tree, n.List)
		wrapActions(tree, n.ElseList)
	}
}

// errTooLarge is what a rule's output over the limit fails with.
var errTooLarge = errors.New("output over the limit")

// limitBuffer collects a template's output up to max bytes.
type limitBuffer struct {
	buf []byte
	max int
}

func (w *limitBuffer) Write(p []byte) (int, error) {
	if len(w.buf)+len(p) > w.max {
		return 0, fmt.Errorf("%w of %d bytes", errTooLarge, w.max)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// render executes t on data, its output bounded by limit bytes.
func render(t *template.Template, data any, limit int) (string, error) {
	w := limitBuffer{max: limit}
	if err := t.Execute(&w, data); err != nil {
		return "", err
	}
	return string(w.buf), nil
}

// str is how a value prints: nothing for missing and null, a string as
// itself, a number as its JSON text, an object or array as JSON.
func str(v any) string {
	switch v := v.(type) {
	case nil, jsonNull:
		return ""
	case string:
		return v
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	case map[string]any, []any:
		s, err := tplJSON(v)
		if err != nil {
			return ""
		}
		return s
	}
	return fmt.Sprint(v)
}

// tplJSON encodes v as compact JSON.
func tplJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// tplDefault returns v, or def when v is empty: missing, null, "", false,
// or an empty object or array. Numbers are never empty (0 is a value).
func tplDefault(def, v any) any {
	switch x := v.(type) {
	case nil, jsonNull:
		return def
	case string:
		if x == "" {
			return def
		}
	case bool:
		if !x {
			return def
		}
	case map[string]any:
		if len(x) == 0 {
			return def
		}
	case []any:
		if len(x) == 0 {
			return def
		}
	}
	return v
}

// tplTrunc cuts the text of v to at most n characters.
func tplTrunc(n int, v any) string {
	s := str(v)
	for k := range s {
		if n <= 0 {
			return s[:k]
		}
		n--
	}
	return s
}

// tplJoin joins the texts of a list's elements with sep.
func tplJoin(sep, list any) string {
	rv := reflect.ValueOf(list)
	if !rv.IsValid() || (rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array) {
		return str(list)
	}
	parts := make([]string, rv.Len())
	for i := range parts {
		parts[i] = str(rv.Index(i).Interface())
	}
	return strings.Join(parts, str(sep))
}

// fromJSON prepares a value decoded from JSON (with json.Number) for
// templates and CEL, in place: every null becomes jsonNull.
func fromJSON(v any) any {
	switch x := v.(type) {
	case nil:
		return jsonNull(nil)
	case map[string]any:
		for k, e := range x {
			x[k] = fromJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = fromJSON(e)
		}
	}
	return v
}

// fromGo copies a value given by the embedding program (claims) for
// templates and CEL: maps and slices of any are copied, so the caller's
// are never changed, and nil becomes jsonNull.
func fromGo(v any) any {
	switch x := v.(type) {
	case nil:
		return jsonNull(nil)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = fromGo(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = fromGo(e)
		}
		return s
	}
	return v
}
