package flow

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// facts are what a guard tells about union values: for an expression
// (keyed by its text, e.g. "steps.a.result.content[0]" or "c"), the
// members it can still be. A missing key tells nothing.
type facts map[string]variants

// meet is what holds when both a and b hold.
func meet(a, b facts) facts {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make(facts, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if w, ok := out[k]; ok {
			v &= w
		}
		out[k] = v
	}
	return out
}

// join is what holds when a or b holds: only what both tell.
func join(a, b facts) facts {
	var out facts
	for k, v := range a {
		if w, ok := b[k]; ok {
			if out == nil {
				out = facts{}
			}
			out[k] = v | w
		}
	}
	return out
}

// without drops the facts about a name a comprehension rebinds.
func (f facts) without(name string) facts {
	var out facts
	for k, v := range f {
		if k == name || strings.HasPrefix(k, name+".") || strings.HasPrefix(k, name+"[") {
			continue
		}
		if out == nil {
			out = facts{}
		}
		out[k] = v
	}
	return out
}

// narrower walks a checked expression with the facts its guards give and
// reports variant-specific fields read on a union value that may be
// another member: c.data where c may be text.
type narrower struct {
	a      *ast.AST
	pos    Pos
	indent int
	iters  map[string]variants // comprehension variables bound to union elements
	diags  []exprDiag
}

func newNarrower(a *ast.AST, pos Pos, indent int) *narrower {
	return &narrower{a: a, pos: pos, indent: indent, iters: map[string]variants{}}
}

func (n *narrower) typeOf(e ast.Expr) *types.Type { return n.a.GetType(e.ID()) }

// key is an expression's text when it names a value (identifiers, fields
// and constant indexes), "" otherwise.
func key(e ast.Expr) string {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent()
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return ""
		}
		if k := key(s.Operand()); k != "" {
			return k + "." + s.FieldName()
		}
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() == "_[_]" && len(c.Args()) == 2 && c.Args()[1].Kind() == ast.LiteralKind {
			if k := key(c.Args()[0]); k != "" {
				return fmt.Sprintf("%s[%v]", k, c.Args()[1].AsLiteral().Value())
			}
		}
	}
	return ""
}

// shape is the members a union-typed expression can be.
func (n *narrower) shape(e ast.Expr, f facts) variants {
	all := unionAll(n.typeOf(e))
	v := all
	switch e.Kind() {
	case ast.IdentKind:
		if m, ok := n.iters[e.AsIdent()]; ok {
			v = m
		}
	case ast.CallKind:
		c := e.AsCall()
		switch c.FunctionName() {
		case "_[_]":
			if len(c.Args()) == 2 {
				v = n.elems(c.Args()[0], f)
			}
		case "_?_:_":
			args := c.Args()
			v = n.shape(args[1], meet(f, n.facts(args[0], true))) | n.shape(args[2], meet(f, n.facts(args[0], false)))
		}
	}
	if k := key(e); k != "" {
		if m, ok := f[k]; ok {
			v &= m
		}
	}
	return v & all
}

// elems is the members a list's elements can be: a filter keeps those
// its predicate lets through.
func (n *narrower) elems(e ast.Expr, f facts) variants {
	t := n.typeOf(e)
	all := variants(0)
	if t != nil && t.Kind() == types.ListKind && len(t.Parameters()) == 1 {
		all = unionAll(t.Parameters()[0])
	}
	if e.Kind() != ast.ComprehensionKind {
		return all
	}
	// filter(x, p) expands to: p ? @result + [x] : @result.
	c := e.AsComprehension()
	step := c.LoopStep()
	if step.Kind() != ast.CallKind || step.AsCall().FunctionName() != "_?_:_" {
		return all
	}
	args := step.AsCall().Args()
	if args[1].Kind() != ast.CallKind || args[1].AsCall().FunctionName() != "_+_" {
		return all
	}
	add := args[1].AsCall().Args()
	if len(add) != 2 || add[1].Kind() != ast.ListKind || len(add[1].AsList().Elements()) != 1 {
		return all
	}
	if el := add[1].AsList().Elements()[0]; el.Kind() != ast.IdentKind || el.AsIdent() != c.IterVar() {
		return all
	}
	v := n.elems(c.IterRange(), f)
	if m, ok := n.facts(args[0], true)[c.IterVar()]; ok {
		v &= m
	}
	return v & all
}

// facts is what an expression of type bool tells when it is outcome.
func (n *narrower) facts(e ast.Expr, outcome bool) facts {
	switch e.Kind() {
	case ast.SelectKind:
		s := e.AsSelect()
		if !s.IsTestOnly() {
			return nil
		}
		op := s.Operand()
		t := n.typeOf(op)
		k := key(op)
		if all := unionAll(t); all != 0 && k != "" {
			m, ok := unionFields[t.TypeName()][s.FieldName()]
			switch {
			case !ok || m == all:
			case outcome:
				return facts{k: m}
			case requiredFields[t.TypeName()][s.FieldName()]:
				// A member that declares the field always has it.
				return facts{k: all &^ m}
			}
		}
	case ast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case "!_":
			return n.facts(args[0], !outcome)
		case "_&&_":
			if outcome {
				return meet(n.facts(args[0], true), n.facts(args[1], true))
			}
			return join(n.facts(args[0], false), n.facts(args[1], false))
		case "_||_":
			if outcome {
				return join(n.facts(args[0], true), n.facts(args[1], true))
			}
			return meet(n.facts(args[0], false), n.facts(args[1], false))
		case "_==_", "_!=_":
			for i := range 2 {
				k, all := n.typeField(args[i])
				lit, ok := literalString(args[1-i])
				if k == "" || !ok {
					continue
				}
				m := typeMask(lit)
				if (c.FunctionName() == "_==_") != outcome {
					m = all &^ m
				}
				return facts{k: m}
			}
		case "@in":
			k, all := n.typeField(args[0])
			if k == "" || args[1].Kind() != ast.ListKind {
				return nil
			}
			m := variants(0)
			for _, el := range args[1].AsList().Elements() {
				lit, ok := literalString(el)
				if !ok {
					return nil
				}
				m |= typeMask(lit)
			}
			if !outcome {
				m = all &^ m
			}
			return facts{k: m}
		}
	}
	return nil
}

// typeMask is the member a block type names; a misspelt one stands for
// the type it is a typo away from (typeLiterals reports it), another for
// none.
func typeMask(lit string) variants {
	if m, ok := contentTypes[lit]; ok {
		return m
	}
	return contentTypes[meant(lit, "text", "image", "audio", "resource_link", "resource")]
}

// typeField is, for x.type with x a content block, x's key.
func (n *narrower) typeField(e ast.Expr) (string, variants) {
	if e.Kind() != ast.SelectKind || e.AsSelect().FieldName() != "type" || e.AsSelect().IsTestOnly() {
		return "", 0
	}
	op := e.AsSelect().Operand()
	t := n.typeOf(op)
	if t == nil || t.Kind() != types.StructKind || t.TypeName() != tContent {
		return "", 0
	}
	return key(op), contentAll
}

func literalString(e ast.Expr) (string, bool) {
	if e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().Value().(string)
	return s, ok
}

// walk checks every field read in e under f.
func (n *narrower) walk(e ast.Expr, f facts) {
	switch e.Kind() {
	case ast.SelectKind:
		s := e.AsSelect()
		if !s.IsTestOnly() {
			n.field(e, f)
		}
		n.walk(s.Operand(), f)
	case ast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case "_&&_":
			// CEL's && and || are commutative: either side guards the other.
			n.walk(args[0], meet(f, n.facts(args[1], true)))
			n.walk(args[1], meet(f, n.facts(args[0], true)))
			return
		case "_||_":
			n.walk(args[0], meet(f, n.facts(args[1], false)))
			n.walk(args[1], meet(f, n.facts(args[0], false)))
			return
		case "_?_:_":
			n.walk(args[0], f)
			n.walk(args[1], meet(f, n.facts(args[0], true)))
			n.walk(args[2], meet(f, n.facts(args[0], false)))
			return
		}
		n.typeLiterals(c)
		if c.IsMemberFunction() {
			n.walk(c.Target(), f)
		}
		for _, a := range args {
			n.walk(a, f)
		}
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		n.walk(c.IterRange(), f)
		iv := c.IterVar()
		old, had := n.iters[iv]
		if el := n.elems(c.IterRange(), f); el != 0 {
			n.iters[iv] = el
		} else {
			delete(n.iters, iv)
		}
		inner := f.without(iv)
		n.walk(c.AccuInit(), inner)
		n.walk(c.LoopCondition(), inner)
		n.walk(c.LoopStep(), inner)
		n.walk(c.Result(), inner)
		if had {
			n.iters[iv] = old
		} else {
			delete(n.iters, iv)
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			n.walk(el, f)
		}
	case ast.MapKind:
		for _, ent := range e.AsMap().Entries() {
			me := ent.AsMapEntry()
			n.walk(me.Key(), f)
			n.walk(me.Value(), f)
		}
	case ast.StructKind:
		for _, fl := range e.AsStruct().Fields() {
			n.walk(fl.AsStructField().Value(), f)
		}
	}
}

// field checks one field read: on a union value, the field must be
// declared by every member the value can still be.
func (n *narrower) field(e ast.Expr, f facts) {
	s := e.AsSelect()
	t := n.typeOf(s.Operand())
	all := unionAll(t)
	if all == 0 {
		return
	}
	has, ok := unionFields[t.TypeName()][s.FieldName()]
	if !ok || has == all {
		return
	}
	can := n.shape(s.Operand(), f)
	if can&^has == 0 || can == 0 {
		return // declared on every member it can be; or dead code
	}
	loc := n.a.SourceInfo().GetStartLocation(e.ID())
	p := at(n.pos, n.indent, loc.Line(), loc.Column()+1) // the name, after CEL's place, the dot
	field := s.FieldName()
	var msg string
	switch {
	case can&has == 0:
		msg = fmt.Sprintf("field %q is not on %s (it is on %s)", field, describeVariants(can, t.TypeName()), describeVariants(has, t.TypeName()))
	default:
		msg = fmt.Sprintf("field %q is only on %s, and this may be %s: guard it with %s", field, describeVariants(has, t.TypeName()), describeVariants(can&^has, t.TypeName()), guardHint(s.Operand(), t.TypeName(), has, field))
	}
	n.diags = append(n.diags, exprDiag{p, msg})
}

// guardHint is an example guard that lets a field through.
func guardHint(op ast.Expr, union string, has variants, field string) string {
	k := key(op)
	if k == "" {
		k = "x"
	}
	if union == tResContents {
		return fmt.Sprintf("has(%s.%s) (in a ternary, &&, filter or a when:/if:)", k, field)
	}
	for _, vn := range variantNames {
		if has&vn.v != 0 {
			return fmt.Sprintf("%s.type == '%s' (in a ternary, &&, filter or a when:/if:)", k, vn.name)
		}
	}
	return "a type check"
}

// typeLiterals reports a block type compared with a string that is none
// of the five (c.type == 'txt'): the guard could never hold.
func (n *narrower) typeLiterals(c ast.CallExpr) {
	args := c.Args()
	var lits []ast.Expr
	switch c.FunctionName() {
	case "_==_", "_!=_":
		for i := range 2 {
			if k, _ := n.typeField(args[i]); k != "" {
				lits = append(lits, args[1-i])
			}
		}
	case "@in":
		if k, _ := n.typeField(args[0]); k != "" && args[1].Kind() == ast.ListKind {
			lits = args[1].AsList().Elements()
		}
	}
	for _, l := range lits {
		s, ok := literalString(l)
		if !ok {
			continue
		}
		if _, known := contentTypes[s]; known {
			continue
		}
		loc := n.a.SourceInfo().GetStartLocation(l.ID())
		msg := fmt.Sprintf("%q is not a content block type (text, image, audio, resource_link, resource)", s)
		if best := meant(s, "text", "image", "audio", "resource_link", "resource"); best != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", best)
		}
		n.diags = append(n.diags, exprDiag{at(n.pos, n.indent, loc.Line(), loc.Column()), msg})
	}
}
