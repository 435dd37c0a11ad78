package flow

import (
	"fmt"
	"sort"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// steps0 checks a list whose names are visible only inside it, and
// returns those names.
func (c *checker) steps0(list []*Step, sc *scopeCtx) []string {
	m := c.mark()
	c.steps(list, sc)
	return c.undo(m)
}

// mayNotHaveRun records why the named steps may not have run past the
// step at pos, for the message of a later reference.
func (c *checker) mayNotHaveRun(names []string, why string, pos Pos) {
	for _, n := range names {
		c.maybe[n] = fmt.Sprintf(why, pos.Line, pos.Column)
	}
}

// exprAt is an expression at its place: its typed check is the same
// wherever it is asked for again (guards, asserts).
type exprAt struct {
	pos Pos
	src string
}

// typedOut is the typed check of one expression.
type typedOut struct {
	diags []exprDiag
	n     *narrower // nil when the expression did not check
}

// typedCheck checks src (at pos) with results typed: references to steps
// that may not have run, fields no result type declares, and union fields
// read without a guard. Problems the untyped compile reports as well
// (syntax, unknown names) are left to it, so that each is said once.
func (c *checker) typedCheck(src string, pos Pos, indent int, sc *scopeCtx) typedOut {
	if len(src) > c.env.maxLen || strings.TrimSpace(src) == "" {
		return typedOut{}
	}
	env, err := c.typed.envFor(sc, c.items)
	if err != nil {
		return typedOut{}
	}
	parsed, iss := env.Parse(src)
	if iss != nil && iss.Err() != nil {
		return typedOut{}
	}
	if ds := c.maybeRefs(parsed, pos, indent, sc); len(ds) > 0 {
		return typedOut{diags: ds}
	}
	if ds := c.env.resolve(parsed, pos, indent, sc); len(ds) > 0 {
		return typedOut{}
	}
	clear(c.typed.prov.misses)
	checked, iss := env.Check(parsed)
	if iss != nil && iss.Err() != nil {
		// Only fields the results lack are this check's to report: other
		// type errors are the untyped compile's, and one the typing alone
		// causes (a block compared with a map literal, which the wire's
		// maps allow) is none.
		var ds []exprDiag
		for _, d := range issueDiags(iss, pos, indent, "CEL type error") {
			if msg := c.typed.prov.fieldMessage(d.msg); msg != d.msg {
				// CEL places a field at its dot; the name follows it.
				d.msg, d.pos.Column = msg, d.pos.Column+1
				ds = append(ds, d)
			}
		}
		return typedOut{diags: ds}
	}
	native := checked.NativeRep()
	n := newNarrower(native, pos, indent)
	if c.checked == nil {
		c.checked = map[exprAt]*narrower{}
	}
	c.checked[exprAt{pos, src}] = n
	for name, it := range c.items {
		if it.shape != 0 {
			n.iters[name] = it.shape
		}
	}
	n.walk(native.Expr(), c.facts)
	return typedOut{diags: n.diags, n: n}
}

// maybeRefs reports references to steps that may not have run here.
func (c *checker) maybeRefs(a *cel.Ast, pos Pos, indent int, sc *scopeCtx) []exprDiag {
	if len(c.maybe) == 0 {
		return nil
	}
	native := a.NativeRep()
	var diags []exprDiag
	shadowed := false
	for _, v := range sc.extra {
		shadowed = shadowed || v.name == "steps"
	}
	ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(x ast.Expr) {
		if shadowed || x.Kind() != ast.SelectKind {
			return
		}
		op := x.AsSelect().Operand()
		if op.Kind() != ast.IdentKind || op.AsIdent() != "steps" {
			return
		}
		name := x.AsSelect().FieldName()
		why, ok := c.maybe[name]
		if !ok || sc.visible[name] {
			return
		}
		loc := native.SourceInfo().GetStartLocation(op.ID())
		diags = append(diags, exprDiag{at(pos, indent, loc.Line(), loc.Column()),
			fmt.Sprintf("step %q may not have run at this point (%s): refer to it only where it has surely run", name, why)})
	}))
	return diags
}

// guard is what a step's when:, if: or while: condition tells when it is
// outcome.
func (c *checker) guard(v *value, sc *scopeCtx, outcome bool) facts {
	n, root := c.typedAST(v, sc)
	if n == nil {
		return nil
	}
	return n.facts(root, outcome)
}

// typedAST is the checked form of a one-expression value, nil when it has
// none or does not check.
func (c *checker) typedAST(v *value, sc *scopeCtx) (*narrower, ast.Expr) {
	if v == nil || v.kind != vExpr {
		return nil, nil
	}
	pt := v.parts[0]
	n := c.checked[exprAt{v.exprPos(pt.off), pt.src}]
	if n == nil {
		return nil, nil // not checked, or failed its check
	}
	return n, n.a.Expr()
}

// assertFacts is what an assertion tells the steps after it, which run
// only if it held: that: X.type with equals: image; that: a boolean
// expression with equals: true or false; that: a content list (or its
// map(c, c.type)) with equals: a list giving each block's type; that: a
// block with contains: {type: ...}.
func (c *checker) assertFacts(s *Step, sc *scopeCtx) facts {
	a := s.assert
	if a == nil || a.expected == nil || a.expected.kind != vLit {
		return nil
	}
	n, root := c.typedAST(a.that, sc)
	if n == nil {
		return nil
	}
	exp := a.expected.lit
	switch a.op {
	case "equals":
		switch x := exp.(type) {
		case bool:
			return n.facts(root, x)
		case string:
			if k, _ := n.typeField(root); k != "" {
				return facts{k: contentTypes[x]}
			}
		case []any:
			return n.listFacts(root, x)
		case map[string]any:
			return n.blockFacts(root, x)
		}
	case "contains":
		if m, ok := exp.(map[string]any); ok {
			return n.blockFacts(root, m)
		}
	}
	return nil
}

// blockFacts is what an expected block with a type tells of a block.
func (n *narrower) blockFacts(root ast.Expr, m map[string]any) facts {
	if t, ok := m["type"].(string); ok && unionAll(n.typeOf(root)) == contentAll && key(root) != "" {
		return facts{key(root): contentTypes[t]}
	}
	return nil
}

// endsInThrow reports whether a list of steps never completes: its last
// step is a throw that always runs.
func endsInThrow(list []*Step) bool {
	return len(list) > 0 && list[len(list)-1].Kind == "throw" && list[len(list)-1].when == nil
}

// listFacts reads the type of each block from an expected list: of type
// names for X.map(c, c.type), of blocks for X.
func (n *narrower) listFacts(root ast.Expr, items []any) facts {
	list := root
	names := true
	if root.Kind() == ast.ComprehensionKind {
		cm := root.AsComprehension()
		step := cm.LoopStep()
		if step.Kind() != ast.CallKind || step.AsCall().FunctionName() != "_+_" {
			return nil
		}
		add := step.AsCall().Args()
		if len(add) != 2 || add[1].Kind() != ast.ListKind || len(add[1].AsList().Elements()) != 1 {
			return nil
		}
		el := add[1].AsList().Elements()[0]
		if el.Kind() != ast.SelectKind || el.AsSelect().FieldName() != "type" || key(el.AsSelect().Operand()) != cm.IterVar() {
			return nil
		}
		list = cm.IterRange()
	} else {
		names = false
	}
	k := key(list)
	t := n.typeOf(list)
	if k == "" || t == nil || len(t.Parameters()) != 1 || unionAll(t.Parameters()[0]) != contentAll {
		return nil
	}
	out := facts{}
	for i, it := range items {
		var typ string
		if names {
			typ, _ = it.(string)
		} else if m, ok := it.(map[string]any); ok {
			typ, _ = m["type"].(string)
		}
		if typ != "" {
			out[fmt.Sprintf("%s[%d]", k, i)] = contentTypes[typ]
		}
	}
	return out
}

// whileCanEnd rejects a while whose condition refers to nothing its body
// can change: it is as true after an iteration as before, so the loop runs
// zero times or ends in ERR_LOOP_LIMIT without having meant to. A constant
// condition says so on purpose (true: run until max_iterations, false: a
// loop switched off) and is let through.
func (c *checker) whileCanEnd(s *Step) {
	if s.cond == nil || constBool(s.cond) != "" || s.until != nil {
		return // an until: can end it (untilCheck)
	}
	changed := loopChanges(s.body)
	refs := map[string]bool{}
	if s.cond.kind == vExpr {
		pt := s.cond.parts[0]
		if parsed, iss := c.typed.base.Parse(pt.src); iss == nil || iss.Err() == nil {
			ast.PreOrderVisit(parsed.NativeRep().Expr(), ast.NewExprVisitor(func(x ast.Expr) {
				if x.Kind() == ast.SelectKind && x.AsSelect().Operand().Kind() == ast.IdentKind {
					refs[x.AsSelect().Operand().AsIdent()+"."+x.AsSelect().FieldName()] = true
				}
			}))
		} else {
			return // the compile reports it
		}
	}
	for r := range refs {
		if changed[r] {
			return
		}
	}
	what := "nothing"
	if len(refs) > 0 {
		names := make([]string, 0, len(refs))
		for r := range refs {
			names = append(names, r)
		}
		sort.Strings(names)
		what = "only " + strings.Join(names, ", ")
	}
	c.p.errAt(s.cond.pos, "%s: the while condition refers to %s, which its body cannot change: it holds after every iteration as before, so the loop runs zero times or ends in %s", s.Path, what, CodeLoopLimit)
}

// constBool is "true" or "false" for a condition written as a constant
// (true, or ${{ true }}), "" otherwise.
func constBool(v *value) string {
	if v == nil {
		return ""
	}
	switch v.kind {
	case vLit:
		if b, ok := v.lit.(bool); ok {
			return fmt.Sprint(b)
		}
	case vExpr:
		if src := strings.TrimSpace(v.parts[0].src); src == "true" || src == "false" {
			return src
		}
	}
	return ""
}

// branches checks the branches of an if or switch, each under its facts,
// each seeing only its own names. Past the step, a branch's names are
// visible when it is the one taken: known from a constant condition
// (taken), or the only branch that does not end in a throw; the others'
// names may not have run.
func (c *checker) branches(s *Step, lists [][]*Step, fs []facts, taken int, sc *scopeCtx, what string) {
	outer := c.facts
	names := make([][]string, len(lists))
	for i, list := range lists {
		if i < len(fs) {
			c.facts = meet(outer, fs[i])
		}
		names[i] = c.steps0(list, sc)
		c.facts = outer
	}
	if taken < 0 {
		for i, list := range lists {
			if endsInThrow(list) {
				continue
			}
			if taken >= 0 {
				taken = -1
				break
			}
			taken = i
		}
	}
	for i, ns := range names {
		switch {
		case i == taken:
			c.show(ns...)
		case taken >= 0:
			c.mayNotHaveRun(ns, "it is in a branch of the "+what+" at %d:%d that is not taken", s.Pos)
		default:
			c.mayNotHaveRun(ns, "it is in a branch of the "+what+" at %d:%d, which may not be taken", s.Pos)
		}
	}
}

// item is the checked type of a for_each variable over a list of result
// objects, and the members it can be when they are a union.
type item struct {
	typ   *cel.Type
	shape variants
}

// itemOf types a for_each's variable from its list while its body is
// checked (item.text over content needs a guard, as c.text does in a
// filter); the returned func restores what was there before.
func (c *checker) itemOf(s *Step, sc *scopeCtx) func() {
	old, had := c.items[s.as]
	restore := func() {
		if had {
			c.items[s.as] = old
		} else {
			delete(c.items, s.as)
		}
	}
	delete(c.items, s.as)
	n, root := c.typedAST(s.cond, sc)
	if n == nil {
		return restore
	}
	t := n.typeOf(root)
	if t == nil || t.Kind() != types.ListKind || len(t.Parameters()) != 1 || t.Parameters()[0].Kind() != types.StructKind {
		return restore
	}
	if c.items == nil {
		c.items = map[string]item{}
	}
	c.items[s.as] = item{typ: t.Parameters()[0], shape: n.elems(root, c.facts)}
	return restore
}
