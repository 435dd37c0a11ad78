package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
)

// celInterruptEvery is how many comprehension iterations CEL runs between
// looks at the step's context.
const celInterruptEvery = 100

// baseEnv is the CEL environment every flow extends: the standard library,
// the strings and encoders extensions, and int/double comparisons (JSON
// numbers arrive as either).
var baseEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(),
		ext.Encoders(),
	)
})

// valueKind tells the shapes of a manifest value apart.
type valueKind uint8

const (
	vLit    valueKind = iota // no expression: lit is the value
	vExpr                    // exactly one ${{ }}: its typed value
	vInterp                  // text with expressions: a string
	vList
	vMap
)

// value is a manifest value that may hold expressions, compiled once at
// Load. A value without any expression is kept as its literal.
type value struct {
	kind  valueKind
	lit   any
	pos   Pos
	raw   string
	shift int  // columns between pos and raw's first byte (a quote)
	block bool // a block scalar (| or >): lines keep their indentation
	parts []part
	list  []*value
	keys  []string
	vals  []*value
	prog  *program
}

// part is a piece of an interpolated string: text, or an expression.
type part struct {
	text string
	src  string
	off  int // byte offset of src in the scalar
	prog *program
}

// program is one compiled expression with its place, for error messages.
type program struct {
	prg cel.Program
	typ *cel.Type // the checked type of the result
	src string
	pos Pos
}

// dynamic reports whether v holds an expression.
func (v *value) dynamic() bool { return v != nil && v.kind != vLit }

// literalString is v's text when it is a plain string literal.
func (v *value) literalString() (string, bool) {
	if v == nil || v.kind != vLit {
		return "", false
	}
	s, ok := v.lit.(string)
	return s, ok
}

// splitTemplate cuts s into text and ${{ expr }} pieces. A "}}" inside a
// CEL string literal or nested braces does not end an expression.
func splitTemplate(s string) ([]part, error) {
	var parts []part
	rest, base := s, 0
	for {
		i := strings.Index(rest, "${{")
		if i < 0 {
			if rest != "" {
				parts = append(parts, part{text: rest})
			}
			return parts, nil
		}
		if i > 0 {
			parts = append(parts, part{text: rest[:i]})
		}
		start := i + 3
		end := closeOf(rest[start:])
		if end < 0 {
			return nil, fmt.Errorf("column %d: ${{ without a closing }}", base+i)
		}
		src := rest[start : start+end]
		trimmed := strings.TrimLeft(src, " \t\n")
		off := base + start + len(src) - len(trimmed)
		parts = append(parts, part{src: strings.TrimRight(trimmed, " \t\n"), off: off})
		rest = rest[start+end+2:]
		base += start + end + 2
	}
}

// closeOf finds the "}}" that ends an expression, skipping string literals
// and balanced braces; -1 when there is none.
func closeOf(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
		case '{':
			depth++
		case '}':
			if depth == 0 && i+1 < len(s) && s[i+1] == '}' {
				return i
			}
			if depth > 0 {
				depth--
			}
		}
	}
	return -1
}

// scopeCtx describes what an expression may see at its place in the flow.
type scopeCtx struct {
	visible map[string]bool // step names that have run before this point
	extra   []extraVar      // item/index (for_each), error (catch/finally)
}

type extraVar struct {
	name string
	typ  *cel.Type
}

func (s *scopeCtx) with(vars ...extraVar) *scopeCtx {
	n := &scopeCtx{visible: s.visible}
	n.extra = append(append([]extraVar{}, s.extra...), vars...)
	return n
}

// exprEnv holds a flow's CEL declarations and the environments derived
// from them, one per set of extra variables.
type exprEnv struct {
	base    *cel.Env
	inputs  map[string]bool
	env     map[string]bool
	steps   map[string]bool
	vars    map[string]bool
	envs    map[string]*cel.Env
	maxLen  int
	costLim uint64
}

func newExprEnv(fl *Flow, stepTypes map[string]*cel.Type, cfg *loadConfig) (*exprEnv, error) {
	b, err := baseEnv()
	if err != nil {
		return nil, err
	}
	e := &exprEnv{inputs: map[string]bool{}, env: map[string]bool{}, steps: map[string]bool{}, vars: map[string]bool{}, envs: map[string]*cel.Env{}, maxLen: cfg.maxExprLength, costLim: cfg.costLimit}
	for _, in := range fl.Inputs {
		e.inputs[in.Name] = true
	}
	for _, n := range fl.Env {
		e.env[n] = true
	}
	for n := range stepTypes {
		e.steps[n] = true
	}
	for _, v := range fl.vars {
		e.vars[v.name] = true
	}
	e.base, err = b.Extend(flowDecls(fl, stepTypes)...)
	return e, err
}

// flowDecls declares what a flow's expressions may name: its inputs (typed
// as declared), its env names, the results of the steps in stepTypes (by
// name, with their types) and its vars.
func flowDecls(fl *Flow, stepTypes map[string]*cel.Type) []cel.EnvOption {
	var decls []cel.EnvOption
	for _, in := range fl.Inputs {
		decls = append(decls, cel.Variable("inputs."+in.Name, inputCELType(in.Type)))
	}
	for _, n := range fl.Env {
		decls = append(decls, cel.Variable("env."+n, cel.StringType))
	}
	names := make([]string, 0, len(stepTypes))
	for n := range stepTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		decls = append(decls, cel.Variable("steps."+n+".result", stepTypes[n]))
	}
	return append(decls, varDecls(fl)...)
}

// anyList and anyObject are the CEL types of a list and a JSON object
// whose elements' types are not known.
var (
	anyList   = cel.ListType(cel.DynType)
	anyObject = cel.MapType(cel.StringType, cel.DynType)
)

func inputCELType(t string) *cel.Type {
	switch t {
	case "string":
		return cel.StringType
	case "integer":
		return cel.IntType
	case "number":
		return cel.DoubleType
	case "boolean":
		return cel.BoolType
	case "object":
		return anyObject
	case "array":
		return anyList
	}
	return cel.DynType
}

func (e *exprEnv) envFor(sc *scopeCtx) (*cel.Env, error) {
	if len(sc.extra) == 0 {
		return e.base, nil
	}
	seen := map[string]*cel.Type{}
	for _, v := range sc.extra {
		seen[v.name] = v.typ // inner declarations win
	}
	return extendCached(e.base, e.envs, seen)
}

// extendCached is base extended with the variables vars declares (name to
// type), kept in envs under a key naming them all with their types, so
// that every scope declaring the same variables shares one environment.
func extendCached(base *cel.Env, envs map[string]*cel.Env, vars map[string]*cel.Type) (*cel.Env, error) {
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	var key strings.Builder
	var decls []cel.EnvOption
	for _, n := range names {
		fmt.Fprintf(&key, "%s:%s;", n, vars[n])
		decls = append(decls, cel.Variable(n, vars[n]))
	}
	if env, ok := envs[key.String()]; ok {
		return env, nil
	}
	env, err := base.Extend(decls...)
	if err != nil {
		return nil, err
	}
	envs[key.String()] = env
	return env, nil
}

// exprDiag is a problem found compiling an expression, at its place.
type exprDiag struct {
	pos Pos
	msg string
}

// compile parses, resolves and type-checks src (found at pos) in sc, and
// makes its program. want, when set, names the type the result must have
// ("bool", "list"); dyn always passes (checked when it runs).
func (e *exprEnv) compile(src string, pos Pos, indent int, sc *scopeCtx, want string) (*program, []exprDiag) {
	if len(src) > e.maxLen {
		return nil, []exprDiag{{pos, fmt.Sprintf("expression longer than %d bytes", e.maxLen)}}
	}
	if strings.TrimSpace(src) == "" {
		return nil, []exprDiag{{pos, "empty expression"}}
	}
	env, err := e.envFor(sc)
	if err != nil {
		return nil, []exprDiag{{pos, "CEL environment: " + err.Error()}}
	}
	parsed, iss := env.Parse(src)
	if iss != nil && iss.Err() != nil {
		return nil, issueDiags(iss, pos, indent, "CEL syntax error")
	}
	if diags := e.resolve(parsed, pos, indent, sc); len(diags) > 0 {
		return nil, diags
	}
	checked, iss := env.Check(parsed)
	if iss != nil && iss.Err() != nil {
		return nil, issueDiags(iss, pos, indent, "CEL type error")
	}
	t := checked.OutputType()
	if want != "" && !t.IsExactType(cel.DynType) {
		ok := true
		switch want {
		case "bool":
			ok = t.IsExactType(cel.BoolType)
		case "list":
			ok = t.Kind() == types.ListKind
		}
		if !ok {
			return nil, []exprDiag{{pos, fmt.Sprintf("CEL type error: expression has type %s, want %s", t, want)}}
		}
	}
	prg, err := env.Program(checked, cel.CostLimit(e.costLim), cel.InterruptCheckFrequency(celInterruptEvery))
	if err != nil {
		return nil, []exprDiag{{pos, "CEL: " + err.Error()}}
	}
	return &program{prg: prg, typ: t, src: src, pos: pos}, nil
}

// issueDiags places CEL's issues in the file: pos is where the expression
// starts, CEL's locations are relative to it.
func issueDiags(iss *cel.Issues, pos Pos, indent int, what string) []exprDiag {
	var out []exprDiag
	for _, e := range iss.Errors() {
		out = append(out, exprDiag{at(pos, indent, e.Location.Line(), e.Location.Column()), what + ": " + e.Message})
	}
	return out
}

// at is the file position of line/col (1-based line, 0-based column) of an
// expression starting at pos; its later lines start at column indent.
func at(pos Pos, indent, line, col int) Pos {
	if line <= 1 {
		return Pos{pos.Line, pos.Column + max(col, 0)}
	}
	return Pos{pos.Line + line - 1, indent + max(col, 0)}
}

// resolve reports references to unknown or not yet run steps, unknown
// inputs and env names not listed under env:.
func (e *exprEnv) resolve(a *cel.Ast, pos Pos, indent int, sc *scopeCtx) []exprDiag {
	native := a.NativeRep()
	info := native.SourceInfo()
	shadow := map[string]bool{}
	for _, v := range sc.extra {
		shadow[v.name] = true
	}
	var diags []exprDiag
	ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(x ast.Expr) {
		if x.Kind() != ast.SelectKind {
			return
		}
		sel := x.AsSelect()
		op := sel.Operand()
		if op.Kind() != ast.IdentKind || shadow[op.AsIdent()] {
			return
		}
		loc := info.GetStartLocation(op.ID())
		p := at(pos, indent, loc.Line(), loc.Column())
		name := sel.FieldName()
		switch op.AsIdent() {
		case "steps":
			switch {
			case !e.steps[name]:
				diags = append(diags, exprDiag{p, fmt.Sprintf("unknown step %q", name)})
			case !sc.visible[name]:
				diags = append(diags, exprDiag{p, fmt.Sprintf("step %q has not run at this point (only earlier steps can be referred to)", name)})
			}
		case "vars":
			if !e.vars[name] {
				diags = append(diags, exprDiag{p, unknownVar(name, e.vars)})
			}
		case "inputs":
			if !e.inputs[name] {
				diags = append(diags, exprDiag{p, fmt.Sprintf("unknown input %q", name)})
			}
		case "env":
			if !e.env[name] {
				diags = append(diags, exprDiag{p, fmt.Sprintf("env %q is not listed under env:", name)})
			}
		}
	}))
	return diags
}

// eval runs p in act; failures are ERR_EXPRESSION.
func (p *program) eval(ctx context.Context, act *scope) (any, error) {
	out, _, err := p.prg.ContextEval(ctx, act)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Error{Code: CodeExpression, Message: fmt.Sprintf("%d:%d: ${{ %s }}: %v", p.pos.Line, p.pos.Column, p.src, err)}
	}
	return celToNative(out), nil
}

// eval computes v in act. Literals are returned as they are, shared: no
// caller changes a value it did not build.
func (v *value) eval(ctx context.Context, act *scope) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch v.kind {
	case vLit:
		return v.lit, nil
	case vExpr:
		return v.prog.eval(ctx, act)
	case vInterp:
		var b strings.Builder
		for _, p := range v.parts {
			if p.prog == nil {
				b.WriteString(p.text)
				continue
			}
			x, err := p.prog.eval(ctx, act)
			if err != nil {
				return nil, err
			}
			b.WriteString(formatValue(x))
		}
		return b.String(), nil
	case vList:
		out := make([]any, len(v.list))
		for i, it := range v.list {
			x, err := it.eval(ctx, act)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case vMap:
		out := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			x, err := v.vals[i].eval(ctx, act)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	return nil, nil
}

// formatValue is x as interpolated text: strings as they are, anything else
// as compact JSON.
func formatValue(x any) string {
	switch x := x.(type) {
	case string:
		return x
	case nil:
		return "null"
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

// celToNative converts a CEL value to the JSON-like values flows pass
// around.
func celToNative(v ref.Val) any {
	switch x := v.(type) {
	case types.Null:
		return nil
	case types.Bool:
		return bool(x)
	case types.Int:
		return int64(x)
	case types.Uint:
		return int64(x)
	case types.Double:
		return float64(x)
	case types.String:
		return string(x)
	case types.Bytes:
		return string(x)
	case types.Duration:
		return x.Duration.String()
	case types.Timestamp:
		return x.Time.UTC().Format(time.RFC3339Nano)
	}
	switch raw := v.Value().(type) {
	case []any:
		return raw
	case map[string]any:
		return raw
	}
	switch x := v.(type) {
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			key, ok := k.(types.String)
			var ks string
			if ok {
				ks = string(key)
			} else {
				ks = formatValue(celToNative(k))
			}
			out[ks] = celToNative(x.Get(k))
		}
		return out
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		out := make([]any, 0, int(n))
		it := x.Iterator()
		for it.HasNext() == types.True {
			out = append(out, celToNative(it.Next()))
		}
		return out
	}
	return v.Value()
}

// exprPos is where an expression starting at byte off of a scalar lies in
// the file. Exact for one-line scalars and block scalars; a quoted scalar
// folded over several lines is placed on its first line.
func (v *value) exprPos(off int) Pos {
	if strings.Contains(v.raw[:off], "\n") {
		nl := strings.LastIndexByte(v.raw[:off], '\n')
		return Pos{v.pos.Line + strings.Count(v.raw[:off], "\n"), v.pos.Column + utf8.RuneCountInString(v.raw[nl+1:off])}
	}
	return Pos{v.pos.Line, v.pos.Column + v.shift + utf8.RuneCountInString(v.raw[:off])}
}

// indent is the column where the scalar's later lines start: the block's
// indentation, else 1.
func (v *value) indent() int {
	if v.block {
		return v.pos.Column
	}
	return 1
}
