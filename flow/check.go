package flow

import (
	"fmt"
	"sort"
	"strings"

	"cel.dev/cel-go/cel"

	"github.com/toolwire/toolwire/client"
)

// checker runs the static check of one flow: names, references, clients,
// expressions (compiled here, once) and catch codes.
type checker struct {
	p       *parser
	fl      *Flow
	env     *exprEnv
	named   map[string]*Step
	visible map[string]bool
	log     []string // names made visible, in order, for undo
	clients map[string]*ClientSpec
	typed   *typedEnv              // results typed, for the check only
	maybe   map[string]string      // steps that may not have run, and why
	facts   facts                  // what the guards around this point tell
	items   map[string]item        // for_each variables over typed lists
	checked map[exprAt]*narrower   // typed checks done, for guards and asserts
	given   map[string][]*cel.Type // the types of the values each variable is given
}

// check runs the static check of fl, again after each change to its
// variables' types (retype); the problems of the last check stand.
func (p *parser) check(fl *Flow) {
	fl.varType = nil
	state := map[string]varState{}
	for {
		n := p.Count()
		c := p.checkOnce(fl)
		if c == nil || !c.retype(state) {
			return
		}
		p.Rewind(n)
	}
}

// checkOnce checks fl with its variables typed as fl.varType says; nil
// when the flow's CEL environment cannot be made.
func (p *parser) checkOnce(fl *Flow) *checker {
	c := &checker{p: p, fl: fl, named: map[string]*Step{}, visible: map[string]bool{}, clients: map[string]*ClientSpec{}}
	for _, cs := range fl.Clients {
		c.clients[cs.Name] = cs
	}
	types := map[string]*cel.Type{}
	walkSteps(fl.Steps, func(s *Step) {
		if s.Name == "" {
			return
		}
		if first, dup := c.named[s.Name]; dup {
			p.errAt(s.Pos, "duplicate step name %q (at %d:%d and %d:%d)", s.Name, first.Pos.Line, first.Pos.Column, s.Pos.Line, s.Pos.Column)
			return
		}
		c.named[s.Name] = s
		types[s.Name] = resultType(s)
	})
	env, err := newExprEnv(fl, types, p.cfg)
	if err != nil {
		p.errAt(fl.Pos, "CEL environment: %v", err)
		return nil
	}
	c.env, fl.env = env, env
	if c.typed, err = newTypedEnv(fl, c.named, p.structured); err != nil {
		p.errAt(fl.Pos, "CEL environment: %v", err)
		return nil
	}
	c.maybe = map[string]string{}
	top := &scopeCtx{visible: map[string]bool{}}
	for _, cs := range fl.Clients {
		for _, v := range []*value{cs.command, cs.cwd, cs.url} {
			c.compile(v, top, "")
		}
		for _, v := range cs.args {
			c.compile(v, top, "")
		}
		for _, x := range append(append([]kv{}, cs.env...), cs.headers...) {
			c.compile(x.val, top, "")
		}
	}
	c.checkVars(top)
	c.steps(fl.Steps, &scopeCtx{visible: c.visible})
	for _, o := range fl.Outputs {
		c.compile(o.val, &scopeCtx{visible: c.visible}, "")
	}
	return c
}

// walkSteps calls fn for every step of the tree, parents first.
func walkSteps(list []*Step, fn func(*Step)) {
	for _, s := range list {
		fn(s)
		for _, sub := range children(s) {
			walkSteps(sub, fn)
		}
	}
}

// children are a step's nested step lists.
func children(s *Step) [][]*Step {
	out := [][]*Step{s.then, s.els, s.def, s.body, s.try, s.finally}
	for _, c := range s.cases {
		out = append(out, c.steps)
	}
	for _, c := range s.catches {
		out = append(out, c.steps)
	}
	return out
}

// resultType is the CEL type of steps.<name>.result for a step's kind.
func resultType(s *Step) *cel.Type {
	switch s.Kind {
	case "call", "read", "prompt":
		return anyObject
	case "list", "for_each":
		return anyList
	case "while":
		return cel.IntType
	case "value":
		if s.val != nil && s.val.kind == vLit {
			if t := litType(s.val.lit); t != nil {
				return t
			}
		}
		if s.val != nil && s.val.kind == vInterp {
			return cel.StringType
		}
	}
	return cel.DynType
}

func (c *checker) mark() int { return len(c.log) }

// undo hides the names made visible since m and returns them.
func (c *checker) undo(m int) []string {
	names := append([]string{}, c.log[m:]...)
	for _, n := range names {
		delete(c.visible, n)
	}
	c.log = c.log[:m]
	return names
}

func (c *checker) show(names ...string) {
	for _, n := range names {
		if !c.visible[n] {
			c.visible[n] = true
			c.log = append(c.log, n)
		}
	}
}

// compile compiles every expression in v for the scope sc.
func (c *checker) compile(v *value, sc *scopeCtx, want string) {
	if v == nil {
		return
	}
	report := func(ds []exprDiag) {
		for _, d := range ds {
			c.p.errAt(d.pos, "%s", c.didYouMean(d.msg))
		}
	}
	switch v.kind {
	case vExpr:
		v.prog = nil // an earlier check's program does not stand for this one
		pt := v.parts[0]
		if ds := c.typedCheck(pt.src, v.exprPos(pt.off), v.indent(), sc).diags; len(ds) > 0 {
			report(ds)
			return
		}
		prog, ds := c.env.compile(pt.src, v.exprPos(pt.off), v.indent(), sc, want)
		report(ds)
		v.prog = prog
	case vInterp:
		for i := range v.parts {
			pt := &v.parts[i]
			if pt.text != "" {
				continue
			}
			pt.prog = nil
			if ds := c.typedCheck(pt.src, v.exprPos(pt.off), v.indent(), sc).diags; len(ds) > 0 {
				report(ds)
				continue
			}
			prog, ds := c.env.compile(pt.src, v.exprPos(pt.off), v.indent(), sc, "")
			report(ds)
			pt.prog = prog
		}
	case vList:
		for _, x := range v.list {
			c.compile(x, sc, "")
		}
	case vMap:
		for _, x := range v.vals {
			c.compile(x, sc, "")
		}
	}
}

// condition compiles a when/if/while/for_each/switch value: one expression
// or a literal of the wanted kind.
func (c *checker) condition(v *value, sc *scopeCtx, what, want string) {
	if v == nil {
		return
	}
	switch v.kind {
	case vExpr:
		c.compile(v, sc, want)
		return
	case vInterp:
		c.p.errAt(v.pos, "%s: want exactly one ${{ }} expression, not text around it", what)
		return
	}
	ok := true
	switch want {
	case "bool":
		_, ok = v.lit.(bool)
	case "list":
		_, ok = v.lit.([]any)
		if v.kind == vList {
			ok = true
			c.compile(v, sc, "")
		}
	default:
		ok = v.kind == vLit
	}
	if !ok {
		c.p.errAt(v.pos, "%s: want a %s or one ${{ }} expression", what, map[string]string{"bool": "boolean", "list": "list", "": "scalar"}[want])
	}
}

// steps checks a list in execution order; a step's name becomes visible to
// the expressions after it.
func (c *checker) steps(list []*Step, sc *scopeCtx) {
	saved := c.facts
	for _, s := range list {
		c.step(s, sc)
		if s.Kind == "assert" && s.when == nil {
			// Later steps run only if the assertion held.
			c.facts = meet(c.facts, c.assertFacts(s, sc))
		}
	}
	c.facts = saved
}

func (c *checker) step(s *Step, sc *scopeCtx) {
	saved := c.facts
	defer func() { c.facts = saved }()
	m := c.mark()
	if s.when != nil {
		c.condition(s.when, sc, s.Path+".when", "bool")
		c.facts = meet(c.facts, c.guard(s.when, sc, true))
	}
	switch s.Kind {
	case "call", "list", "read", "prompt":
		c.clientOf(s)
		for _, v := range []*value{s.tool, s.args, s.uri, s.prompt} {
			c.compile(v, sc, "")
		}
	case "value":
		c.compile(s.val, sc, "")
	case "set":
		c.setStep(s, sc)
	case "if":
		c.condition(s.cond, sc, s.Path+".if", "bool")
		taken := -1
		switch constBool(s.cond) {
		case "true":
			taken = 0
		case "false":
			taken = 1
		}
		c.branches(s, [][]*Step{s.then, s.els}, []facts{c.guard(s.cond, sc, true), c.guard(s.cond, sc, false)}, taken, sc, "if")
	case "switch":
		c.condition(s.cond, sc, s.Path+".switch", "")
		lists := make([][]*Step, 0, len(s.cases)+1)
		taken := -1
		for i, cs := range s.cases {
			lists = append(lists, cs.steps)
			if s.cond != nil && s.cond.kind == vLit && formatValue(s.cond.lit) == cs.key && taken < 0 {
				taken = i
			}
		}
		if s.cond != nil && s.cond.kind == vLit && taken < 0 {
			taken = len(s.cases)
		}
		c.branches(s, append(lists, s.def), nil, taken, sc, "switch")
	case "for_each":
		c.condition(s.cond, sc, s.Path+".for_each", "list")
		m := c.mark()
		restore := c.itemOf(s, sc)
		c.steps(s.body, sc.with(extraVar{s.as, cel.DynType}, extraVar{"index", cel.IntType}))
		restore()
		c.undo(m) // names in a loop body mean the current iteration's
	case "while":
		c.condition(s.cond, sc, s.Path+".while", "bool")
		m := c.mark()
		outer := c.facts
		c.facts = meet(outer, c.guard(s.cond, sc, true))
		c.steps(s.body, sc)
		c.facts = outer
		c.untilCheck(s, sc)
		c.whileCanEnd(s)
		c.undo(m)
	case "try":
		// A step of the try may not have run in a catch handler or the
		// finally (an error came first), nor after the try when a catch
		// may have handled that error.
		tried := c.steps0(s.try, sc)
		c.mayNotHaveRun(tried, "it is in the try at %d:%d, and an error may have ended the try before it ran", s.Pos)
		can, anyCode := codesOf(s.try, c.clients)
		var seen []string
		for _, h := range s.catches {
			for i, code := range h.codes {
				if !anyCode && !can[code] {
					what := strings.Join(sortedKeys(can), ", ")
					if what == "" {
						what = "nothing"
					}
					c.p.errAt(h.codePos[i], "catch: nothing in this try can throw %s (it can throw: %s)", code, what)
				}
			}
			m := c.mark()
			c.steps(h.steps, sc.with(extraVar{"error", anyObject}))
			seen = append(seen, c.undo(m)...)
		}
		c.steps(s.finally, sc.with(extraVar{"error", cel.DynType}))
		if len(s.catches) == 1 && endsInThrow(s.try) {
			// The try never completes: past it, its one handler ran.
			c.show(seen...)
		} else {
			c.mayNotHaveRun(seen, "it is in a catch handler of the try at %d:%d, which runs only when an error is caught", s.Pos)
		}
		if len(s.catches) == 0 {
			// Without a catch, an error goes on: past the try, it ran.
			c.show(tried...)
			for _, n := range tried {
				delete(c.maybe, n)
			}
		}
	case "throw":
		c.compile(s.code, sc, "")
		c.compile(s.message, sc, "")
		c.compile(s.data, sc, "")
	case "assert":
		if a := s.assert; a != nil {
			c.compile(a.that, sc, "")
			c.compile(a.expected, sc, "")
			c.compile(a.message, sc, "")
		}
	}
	if s.when != nil && constBool(s.when) != "true" {
		// A skipped step, and every step in it, sets no result.
		why := fmt.Sprintf("the when: at %d:%d may be false, and a skipped step has no result; use if: to run the steps that need it", s.when.pos.Line, s.when.pos.Column)
		names := c.undo(m)
		if s.Name != "" && c.named[s.Name] == s {
			names = append(names, s.Name)
		}
		for _, n := range names {
			c.maybe[n] = why
		}
		return
	}
	if s.Name != "" && c.named[s.Name] == s {
		c.show(s.Name)
	}
}

// clientOf resolves a step's client: named, or the flow's only one.
func (c *checker) clientOf(s *Step) {
	if s.client == "" {
		switch len(c.fl.Clients) {
		case 1:
			s.client = c.fl.Clients[0].Name
		case 0:
			c.p.errAt(s.Pos, "%s: the flow declares no clients", s.Path)
		default:
			c.p.errAt(s.Pos, "%s: client: is needed when the flow has several clients", s.Path)
		}
		return
	}
	if _, ok := c.clients[s.client]; !ok {
		c.p.errAt(s.clientPos, "%s: unknown client %q", s.Path, s.client)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// codesOf is the set of codes a list of steps can raise; anyCode when a
// throw's code is an expression.
func codesOf(list []*Step, clients map[string]*ClientSpec) (map[string]bool, bool) {
	set := map[string]bool{}
	anyCode := false
	var visit func(s *Step)
	visit = func(s *Step) {
		if s.Timeout > 0 {
			set[CodeStepTimeout] = true
		}
		if hasExpr(s) {
			set[CodeExpression] = true
		}
		if s.expect != nil {
			set[CodeAssertion] = true
		}
		switch s.Kind {
		case "call", "list", "read", "prompt":
			for _, code := range []client.Code{client.CodeTransport, client.CodeProtocol, client.CodeJSONRPC} {
				set[string(code)] = true
			}
			if cs := clients[s.client]; cs != nil && cs.HTTP {
				set[string(client.CodeSessionInvalid)] = true
			}
			if s.Kind == "call" && s.toolErrors == "throw" {
				set[string(client.CodeToolError)] = true
			}
		case "assert":
			set[CodeAssertion] = true
		case "while":
			set[CodeLoopLimit] = true
		case "throw":
			if code, ok := s.code.literalString(); ok {
				set[code] = true
			} else {
				anyCode = true
			}
		}
		for _, sub := range children(s) {
			for _, x := range sub {
				visit(x)
			}
		}
	}
	for _, s := range list {
		visit(s)
	}
	return set, anyCode
}

// hasExpr reports whether a step's own values hold an expression.
func hasExpr(s *Step) bool {
	vals := []*value{s.when, s.tool, s.args, s.uri, s.prompt, s.val, s.cond, s.until, s.code, s.message, s.data}
	for _, a := range s.sets {
		vals = append(vals, a.val)
	}
	if s.assert != nil {
		vals = append(vals, s.assert.that, s.assert.expected, s.assert.message)
	}
	for _, v := range vals {
		if v.dynamic() {
			return true
		}
	}
	return false
}

// describe names a step for messages: its name, else its path.
func (s *Step) describe() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Path
}

// Target is what a call, list, read or prompt step addresses: the tool,
// the list, the resource URI or the prompt name, as written (an expression
// stays its source text); "" for other kinds.
func (s *Step) Target() string {
	var v *value
	switch s.Kind {
	case "call":
		v = s.tool
	case "list":
		return s.what
	case "read":
		v = s.uri
	case "prompt":
		v = s.prompt
	}
	if v == nil {
		return ""
	}
	if str, ok := v.lit.(string); ok && v.kind == vLit {
		return str
	}
	return v.raw
}
