package flow

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"github.com/goccy/go-yaml/ast"
)

// Flow variables: `vars:` at the top of a flow declares them with their
// first values, a `set:` step gives them new ones, and expressions read
// them as vars.<name>. They are what lets a loop carry state from one
// iteration to the next (a counter, the last status seen), which step
// results, scoped to their iteration, cannot.

// assignment is one name: value pair of vars: or of a set step.
type assignment struct {
	name string
	pos  Pos
	val  *value
}

// varStore holds a run's flow variables. Steps of a for_each with
// concurrency may set them at once, so every access is locked.
type varStore struct {
	mu sync.RWMutex
	m  map[string]any
}

func (v *varStore) get(name string) (any, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	x, ok := v.m[name]
	return x, ok
}

func (v *varStore) put(name string, x any) {
	v.mu.Lock()
	v.m[name] = x
	v.mu.Unlock()
}

// assignments reads a mapping of variable names to values (vars: or a
// set step's value).
func (p *parser) assignments(n ast.Node, what string, depth int) []assignment {
	entries, _ := p.mapping(n, what)
	var out []assignment
	for _, e := range entries {
		if !identRE.MatchString(e.key) {
			p.Errorf(e.k, "%s: variable name %q: want [A-Za-z_][A-Za-z0-9_]*", what, e.key)
			continue
		}
		out = append(out, assignment{name: e.key, pos: posOf(e.k), val: p.value(e.v, depth+1)})
	}
	return out
}

// varDecls declares vars.<name> for each flow variable, with the type the
// check found for it (retype), dyn where it found none.
func varDecls(fl *Flow) []cel.EnvOption {
	var out []cel.EnvOption
	for _, v := range fl.vars {
		t := fl.varType[v.name]
		if t == nil {
			t = cel.DynType
		}
		out = append(out, cel.Variable("vars."+v.name, t))
	}
	return out
}

// A variable's type. The check declares vars.<name> with one type when
// every value the variable is given has it: its vars: value and the value
// of each set step naming it, typed as checked (a literal's type, text
// with expressions in it a string, one expression its result's type). A
// variable given a dyn value, or values of types that do not fit one
// another, stays dyn, as a set step may change what it holds. The types
// are found by checking the flow again after each change: a variable typed
// from one check's values is checked with that type in the next, which
// takes the type back if a value then disagrees. Each variable changes at
// most twice (to typed, then to dyn), so the checks end.

// varState is where a variable's typing stands between two checks.
type varState uint8

const (
	varUnknown varState = iota // declared dyn; typed once its values agree
	varTyped                   // declared with Flow.varType
	varDyn                     // its values disagree: dyn from now on
)

// retype updates the flow's variable types from the values this check
// gave them, and reports whether any changed (the flow is then checked
// again).
func (c *checker) retype(state map[string]varState) bool {
	changed := false
	for _, a := range c.fl.vars {
		name, given := a.name, c.given[a.name]
		switch state[name] {
		case varTyped:
			if !allFit(c.fl.varType[name], given) {
				state[name] = varDyn
				delete(c.fl.varType, name)
				changed = true
			}
		case varUnknown:
			if t := commonType(given); t != nil {
				if c.fl.varType == nil {
					c.fl.varType = map[string]*cel.Type{}
				}
				c.fl.varType[name] = t
				state[name] = varTyped
				changed = true
			}
		}
	}
	return changed
}

// give records that a value of type t (nil: one that did not compile) is
// assigned to the variable name.
func (c *checker) give(name string, t *cel.Type) {
	if c.given == nil {
		c.given = map[string][]*cel.Type{}
	}
	c.given[name] = append(c.given[name], t)
}

// commonType is the one type all of ts fit (a list or string-keyed map of
// differing elements widened to dyn ones); nil when there is none, or
// when one of them is dyn or unknown.
func commonType(ts []*cel.Type) *cel.Type {
	if len(ts) == 0 || !fits(ts[0], ts[0]) {
		return nil
	}
	t := ts[0]
	for _, u := range ts[1:] {
		switch {
		case fits(t, u):
		case fits(u, t):
			t = u
		case isList(t) && isList(u):
			t = anyList
		case isObject(t) && isObject(u):
			t = anyObject
		default:
			return nil
		}
	}
	return t
}

// allFit reports whether every one of ts fits t.
func allFit(t *cel.Type, ts []*cel.Type) bool {
	for _, u := range ts {
		if !fits(t, u) {
			return false
		}
	}
	return true
}

// fits reports whether a value of static type u may be held by a variable
// declared t: the same type, or any list for list(dyn) and any
// string-keyed map for map(string, dyn). Nothing fits from dyn or from an
// expression that did not compile.
func fits(t, u *cel.Type) bool {
	if t == nil || u == nil || u.IsExactType(cel.DynType) {
		return false
	}
	switch {
	case u.IsExactType(t):
		return true
	case t.IsExactType(anyList):
		return isList(u)
	case t.IsExactType(anyObject):
		return isObject(u)
	}
	return false
}

func isList(t *cel.Type) bool { return t.Kind() == types.ListKind }

func isObject(t *cel.Type) bool {
	return t.Kind() == types.MapKind && len(t.Parameters()) == 2 && t.Parameters()[0].IsExactType(cel.StringType)
}

// staticType is the type of the value v gives, as checked: a literal's
// type, a string for text with expressions in it, one expression's result
// type; nil for an expression that did not compile or a literal CEL has
// no type for.
func staticType(v *value) *cel.Type {
	switch v.kind {
	case vLit:
		if v.lit == nil {
			return cel.NullType
		}
		return litType(v.lit)
	case vInterp:
		return cel.StringType
	case vExpr:
		if v.prog == nil {
			return nil
		}
		return v.prog.typ
	case vList:
		return anyList
	case vMap:
		return anyObject
	}
	return nil
}

// litType is the CEL type of a literal value of a flow; nil for one it
// has none for.
func litType(x any) *cel.Type {
	switch x.(type) {
	case string:
		return cel.StringType
	case int64:
		return cel.IntType
	case float64:
		return cel.DoubleType
	case bool:
		return cel.BoolType
	case []any:
		return anyList
	case map[string]any:
		return anyObject
	}
	return nil
}

// initVars computes the variables' first values, in file order: each may
// read inputs, env and the variables declared before it.
func (fl *Flow) initVars(ctx context.Context, root *scope) *Error {
	root.store = &varStore{m: make(map[string]any, len(fl.vars))}
	for _, a := range fl.vars {
		x, err := a.val.eval(ctx, root)
		if err != nil {
			e := errorOf(err)
			e.Step, e.Pos = "vars."+a.name, a.pos
			return e
		}
		root.store.put(a.name, clone(x))
	}
	return nil
}

// set runs a set step: each value is computed and assigned in order, so a
// later one sees the earlier ones' new values. The result is the object of
// the values assigned.
func (r *run) set(ctx context.Context, s *Step, sc *scope) (any, error) {
	store := sc.varStore()
	out := make(map[string]any, len(s.sets))
	for _, a := range s.sets {
		x, err := a.val.eval(ctx, sc)
		if err != nil {
			return nil, err
		}
		x = clone(x)
		store.put(a.name, x)
		out[a.name] = x
	}
	return out, nil
}

// varStore is the run's variables, held by the root scope.
func (s *scope) varStore() *varStore {
	for c := s; c != nil; c = c.parent {
		if c.store != nil {
			return c.store
		}
	}
	return nil
}

// checkVars checks the vars: declarations: no name twice, each value's
// expressions compiled seeing only the variables declared before it.
func (c *checker) checkVars(sc *scopeCtx) {
	seen := map[string]Pos{}
	for _, a := range c.fl.vars {
		if first, dup := seen[a.name]; dup {
			c.p.errAt(a.pos, "vars: %q is declared twice (at %d:%d and %d:%d)", a.name, first.Line, first.Column, a.pos.Line, a.pos.Column)
		}
		c.compile(a.val, sc, "")
		c.give(a.name, staticType(a.val))
		seen[a.name] = a.pos
	}
}

// setStep checks a set step: every name is a declared variable (with the
// one a typo away as a did-you-mean), every value compiles.
func (c *checker) setStep(s *Step, sc *scopeCtx) {
	if len(s.sets) == 0 {
		c.p.errAt(s.Pos, "%s: set needs at least one variable: value", s.Path)
	}
	declared := make([]string, 0, len(c.fl.vars))
	for _, v := range c.fl.vars {
		declared = append(declared, v.name)
	}
	sort.Strings(declared)
	for _, a := range s.sets {
		found := false
		for _, d := range declared {
			found = found || d == a.name
		}
		if !found {
			msg := fmt.Sprintf("%s: set: %q is not declared under vars:", s.Path, a.name)
			if best := meant(a.name, declared...); best != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", best)
			}
			c.p.errAt(a.pos, "%s", msg)
		}
		c.compile(a.val, sc, "")
		c.give(a.name, staticType(a.val))
	}
}

// loopChanges is what the body of a loop can change between two
// evaluations of its conditions: steps.<name> of its named steps and
// vars.<name> of the variables its set steps assign.
func loopChanges(body []*Step) map[string]bool {
	changed := map[string]bool{}
	walkSteps(body, func(b *Step) {
		if b.Name != "" {
			changed["steps."+b.Name] = true
		}
		for _, a := range b.sets {
			changed["vars."+a.name] = true
		}
	})
	return changed
}

// untilCheck checks a while's until: condition, compiled where the body's
// steps have run (it is evaluated after each iteration and sees that
// iteration's results), and rejected when it refers to nothing the body
// can change: then it is as false after every iteration as before. A
// constant condition is let through (until: true runs the body once).
func (c *checker) untilCheck(s *Step, sc *scopeCtx) {
	if s.until == nil {
		return
	}
	c.condition(s.until, sc, s.Path+".until", "bool")
	if constBool(s.until) != "" || s.until.kind != vExpr {
		return
	}
	parsed, iss := c.typed.base.Parse(s.until.parts[0].src)
	if iss != nil && iss.Err() != nil {
		return // the compile reports it
	}
	refs := selectRefs(parsed)
	changed := loopChanges(s.body)
	for _, r := range refs {
		if changed[r] {
			return
		}
	}
	what := "nothing"
	if len(refs) > 0 {
		what = "only " + strings.Join(refs, ", ")
	}
	c.p.errAt(s.until.pos, "%s: the until condition refers to %s, which its body cannot change: it is as false after every iteration as before, so the loop ends only in %s", s.Path, what, CodeLoopLimit)
}

// selectRefs are the name.field selections of an expression
// (steps.x, vars.n, inputs.y), sorted.
func selectRefs(a *cel.Ast) []string {
	set := map[string]bool{}
	visitSelects(a, func(op, field string) { set[op+"."+field] = true })
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// visitSelects calls fn with the operand and field of every selection of
// a field from a plain name in a parsed expression.
func visitSelects(a *cel.Ast, fn func(op, field string)) {
	celast.PreOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(x celast.Expr) {
		if x.Kind() == celast.SelectKind && x.AsSelect().Operand().Kind() == celast.IdentKind {
			fn(x.AsSelect().Operand().AsIdent(), x.AsSelect().FieldName())
		}
	}))
}

// unknownVar is the message for vars.<name> of an undeclared variable,
// with the declared one a typo away.
func unknownVar(name string, declared map[string]bool) string {
	names := make([]string, 0, len(declared))
	for n := range declared {
		names = append(names, n)
	}
	sort.Strings(names)
	msg := fmt.Sprintf("unknown variable %q (not declared under vars:)", name)
	if best := meant(name, names...); best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg
}
