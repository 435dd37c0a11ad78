package flow

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
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

// varDecls declares vars.<name> for each flow variable. Their type is
// dyn: a set step may give a variable a value of another type.
func varDecls(fl *Flow) []cel.EnvOption {
	var out []cel.EnvOption
	for _, v := range fl.vars {
		out = append(out, cel.Variable("vars."+v.name, cel.DynType))
	}
	return out
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
