package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/toolwire/toolwire/internal/units"
	"github.com/toolwire/toolwire/internal/yamlsrc"
)

// Load reads, parses and statically checks a manifest file. The error is
// the errors.Join of every *Diagnostic found, sorted by position.
func Load(path string, opts ...LoadOption) (*File, error) {
	cfg := newLoadConfig(opts)
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > int64(cfg.maxFileSize) {
		return nil, &Diagnostic{File: path, Line: 1, Column: 1, Msg: fmt.Sprintf("file larger than %d bytes", cfg.maxFileSize)}
	}
	data, err := io.ReadAll(io.LimitReader(fh, int64(cfg.maxFileSize)+1))
	if err != nil {
		return nil, err
	}
	return parseWith(path, data, cfg)
}

// Parse parses and statically checks a manifest held in data; name is the
// file name used in diagnostics, flow names and relative cwd paths.
func Parse(name string, data []byte, opts ...LoadOption) (*File, error) {
	return parseWith(name, data, newLoadConfig(opts))
}

func parseWith(name string, data []byte, cfg *loadConfig) (*File, error) {
	f := &File{Path: name, dir: filepath.Dir(name)}
	p := &parser{file: name, cfg: cfg}
	if len(data) > cfg.maxFileSize {
		p.errAt(Pos{1, 1}, "file larger than %d bytes", cfg.maxFileSize)
		return f, p.err()
	}
	tree, err := p.parseYAML(data)
	if err != nil {
		p.SyntaxError(err)
		return f, p.err()
	}
	base := flowBaseName(name)
	var first *Flow
	for _, doc := range tree.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if _, ok := doc.Body.(*ast.CommentGroupNode); ok {
			continue
		}
		fl := p.flow(doc.Body)
		if fl == nil {
			continue
		}
		fl.file, fl.cfg = f, cfg
		if fl.Name == "" {
			fl.Name = base
			if len(f.Flows) > 0 {
				fl.Name = fmt.Sprintf("%s#%d", base, len(f.Flows)+1)
			}
		}
		if first == nil {
			first = fl
		} else {
			// Later documents share the first one's clients and env
			// when they declare none.
			if fl.inherit {
				fl.Clients = first.Clients
			}
			if fl.Env == nil {
				fl.Env = first.Env
			}
		}
		f.Flows = append(f.Flows, fl)
	}
	if len(f.Flows) == 0 && p.Count() == 0 {
		p.errAt(Pos{1, 1}, "no flow in the file (want a mapping with steps)")
	}
	for _, fl := range f.Flows {
		p.check(fl)
	}
	if p.Count() > 0 {
		for _, fl := range f.Flows {
			fl.failed = true // never runs: nothing starts for a bad file
		}
	}
	return f, p.err()
}

// flowBaseName is the default flow name: the file's base name without
// .flow.yaml, .flow.yml, .yaml or .yml.
func flowBaseName(name string) string {
	b := filepath.Base(name)
	for _, suf := range []string{".flow.yaml", ".flow.yml", ".yaml", ".yml"} {
		if strings.HasSuffix(b, suf) {
			return strings.TrimSuffix(b, suf)
		}
	}
	return b
}

// parser walks goccy/go-yaml's syntax tree rather than decoding into
// structs, so that every key and value keeps its line and column.
type parser struct {
	yamlsrc.Reader
	file   string
	cfg    *loadConfig
	nsteps int
	full   bool     // the step limit was reported
	lines  []string // the source, for block scalars' columns
	// structured types calls' structuredContent from the tools'
	// outputSchemas (check --connect); nil: dyn.
	structured map[*Step]json.RawMessage
}

// errAt records a problem at pos.
func (p *parser) errAt(pos Pos, format string, args ...any) {
	p.ErrorAt(pos.Line, pos.Column, format, args...)
}

// err is every problem recorded, in the order of the file, as
// *Diagnostics; a problem without a place is put at the file's start.
func (p *parser) err() error {
	ps := p.Problems()
	if len(ps) == 0 {
		return nil
	}
	errs := make([]error, len(ps))
	for i, d := range ps {
		line, col := d.Line, d.Column
		if line == 0 {
			line, col = 1, 1
		}
		errs[i] = &Diagnostic{File: p.file, Line: line, Column: col, Msg: d.Msg}
	}
	return errors.Join(errs...)
}

// posOf is where n starts (yamlsrc.Position), the file's start when n
// has no place.
func posOf(n ast.Node) Pos {
	line, col := yamlsrc.Position(n)
	if line == 0 {
		return Pos{1, 1}
	}
	return Pos{line, col}
}

// parseYAML parses data into a syntax tree (yamlsrc.Parse: nesting
// bounded, a panic of the YAML library an error), refusing binary data.
func (p *parser) parseYAML(data []byte) (*ast.File, error) {
	if !validText(data) {
		return nil, errors.New("the file is not text (binary data or invalid UTF-8)")
	}
	p.lines = strings.Split(string(data), "\n")
	return yamlsrc.Parse(data, p.cfg.maxDepth)
}

// validText refuses binary junk early: NUL bytes or invalid UTF-8.
func validText(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

// entry is one member of a mapping: its key, value and the key's place.
type entry struct {
	key string
	k   ast.Node
	v   ast.Node
}

// mapping is n's members; a missing value or null is an empty mapping.
func (p *parser) mapping(n ast.Node, what string) ([]entry, bool) {
	m, ok := p.Mapping(n, what)
	if !ok || m == nil {
		return nil, ok
	}
	out := make([]entry, 0, len(m.Values))
	for _, mv := range m.Values {
		k, ok := p.Key(mv.Key)
		if !ok {
			continue
		}
		if mv.Value != nil && !p.Supported(mv.Value) {
			continue
		}
		out = append(out, entry{k, mv.Key, mv.Value})
	}
	return out, true
}

// intVal is a scalar integer.
func (p *parser) intVal(n ast.Node, what string) (int, bool) {
	if in, ok := n.(*ast.IntegerNode); ok {
		switch v := in.Value.(type) {
		case int64:
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return int(v), true
			}
		case uint64:
			if v <= math.MaxInt32 {
				return int(v), true
			}
		}
		p.Errorf(n, "%s: %s is out of range", what, in.GetToken().Value)
		return 0, false
	}
	p.Errorf(n, "%s: want an integer, not a %s", what, yamlsrc.Kind(n))
	return 0, false
}

// duration is a duration of zero or more (units.ParseDuration: 500ms,
// 1m30s, 2d).
func (p *parser) duration(n ast.Node, what string) (time.Duration, bool) {
	s, ok := p.Scalar(n, what)
	if !ok {
		return 0, false
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		p.Errorf(n, "%s: %v", what, err)
		return 0, false
	}
	return d, true
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// celReserved are words CEL keeps; they cannot name variables.
var celReserved = map[string]bool{"as": true, "break": true, "const": true, "continue": true, "else": true, "for": true, "function": true, "if": true, "import": true, "let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true, "in": true, "true": true, "false": true, "null": true}

// value converts any node to a value, finding ${{ }} templates in strings.
func (p *parser) value(n ast.Node, depth int) *value {
	if n == nil {
		return &value{kind: vLit}
	}
	if depth > p.cfg.maxDepth {
		p.Errorf(n, "nested deeper than %d levels", p.cfg.maxDepth)
		return &value{kind: vLit}
	}
	if !p.Supported(n) {
		return &value{kind: vLit}
	}
	pos := posOf(n)
	switch n := n.(type) {
	case *ast.NullNode:
		return &value{kind: vLit, pos: pos}
	case *ast.BoolNode:
		return &value{kind: vLit, lit: n.Value, pos: pos}
	case *ast.IntegerNode:
		switch v := n.Value.(type) {
		case int64:
			return &value{kind: vLit, lit: v, pos: pos}
		case uint64:
			if v <= math.MaxInt64 {
				return &value{kind: vLit, lit: int64(v), pos: pos}
			}
			return &value{kind: vLit, lit: float64(v), pos: pos}
		}
		return &value{kind: vLit, lit: n.GetToken().Value, pos: pos}
	case *ast.FloatNode:
		return &value{kind: vLit, lit: n.Value, pos: pos}
	case *ast.InfinityNode, *ast.NanNode:
		p.Errorf(n, "infinity and NaN are not JSON values")
		return &value{kind: vLit, pos: pos}
	case *ast.StringNode:
		shift := 0
		if t := n.GetToken(); t != nil && (t.Type == token.SingleQuoteType || t.Type == token.DoubleQuoteType) {
			shift = 1
		}
		return p.template(n.Value, pos, shift)
	case *ast.LiteralNode:
		// A block scalar's text starts on the line after its indicator,
		// at that line's indentation.
		vp := Pos{pos.Line + 1, 1}
		if vp.Line-1 < len(p.lines) {
			line := p.lines[vp.Line-1]
			vp.Column = len(line) - len(strings.TrimLeft(line, " ")) + 1
		}
		v := p.template(n.Value.Value, vp, 0)
		v.block = true
		return v
	case *ast.SequenceNode:
		v := &value{kind: vList, pos: pos}
		allLit := true
		for _, it := range n.Values {
			x := p.value(it, depth+1)
			allLit = allLit && !x.dynamic()
			v.list = append(v.list, x)
		}
		if allLit {
			lit := make([]any, len(v.list))
			for i, x := range v.list {
				lit[i] = x.lit
			}
			return &value{kind: vLit, lit: lit, pos: pos, list: v.list}
		}
		return v
	case *ast.MappingNode:
		v := &value{kind: vMap, pos: pos}
		entries, _ := p.mapping(n, "value")
		allLit := true
		for _, e := range entries {
			x := p.value(e.v, depth+1)
			allLit = allLit && !x.dynamic()
			v.keys = append(v.keys, e.key)
			v.vals = append(v.vals, x)
		}
		if allLit {
			lit := make(map[string]any, len(v.keys))
			for i, k := range v.keys {
				lit[k] = v.vals[i].lit
			}
			return &value{kind: vLit, lit: lit, pos: pos, keys: v.keys, vals: v.vals}
		}
		return v
	}
	p.Errorf(n, "unsupported YAML value (%s)", yamlsrc.Kind(n))
	return &value{kind: vLit, pos: pos}
}

// template is a string scalar: a literal, one expression, or text with
// expressions.
func (p *parser) template(s string, pos Pos, shift int) *value {
	if !strings.Contains(s, "${{") {
		return &value{kind: vLit, lit: s, pos: pos}
	}
	v := &value{pos: pos, raw: s, shift: shift}
	parts, err := splitTemplate(s)
	if err != nil {
		p.errAt(pos, "expression: %v", err)
		return &value{kind: vLit, lit: s, pos: pos}
	}
	v.parts = parts
	if len(parts) == 1 || (len(parts) <= 3 && countExprs(parts) == 1 && blankText(parts)) {
		v.kind = vExpr
		for _, pt := range parts {
			if pt.text == "" {
				v.parts = []part{pt}
			}
		}
		return v
	}
	v.kind = vInterp
	return v
}

func countExprs(parts []part) int {
	n := 0
	for _, pt := range parts {
		if pt.text == "" {
			n++
		}
	}
	return n
}

func blankText(parts []part) bool {
	for _, pt := range parts {
		if pt.text != "" && strings.TrimSpace(pt.text) != "" {
			return false
		}
	}
	return true
}

// flow reads one document.
func (p *parser) flow(n ast.Node) *Flow {
	if _, ok := n.(*ast.MappingNode); !ok {
		p.Errorf(n, "a flow document must be a mapping (with steps:), not a %s", yamlsrc.Kind(n))
		return nil
	}
	entries, ok := p.mapping(n, "flow")
	if !ok {
		return nil
	}
	fl := &Flow{Pos: posOf(n), inherit: true}
	p.nsteps, p.full = 0, false
	var stepsNode ast.Node
	hasSteps := false
	for _, e := range entries {
		switch e.key {
		case "name":
			fl.Name, _ = p.Scalar(e.v, "name")
		case "description":
			fl.Description, _ = p.Scalar(e.v, "description")
		case "env":
			items, _ := p.List(e.v, "env")
			fl.Env = []string{}
			for _, it := range items {
				if s, ok := p.Scalar(it, "env"); ok {
					if !identRE.MatchString(s) {
						p.Errorf(it, "env: %q is not a variable name", s)
						continue
					}
					fl.Env = append(fl.Env, s)
				}
			}
		case "inputs":
			p.inputs(fl, e.v)
		case "clients":
			p.clients(fl, e.v)
		case "steps":
			stepsNode, hasSteps = e.v, true
		case "vars":
			fl.vars = p.assignments(e.v, "vars", 1)
		case "outputs":
			outs, _ := p.mapping(e.v, "outputs")
			for _, o := range outs {
				fl.Outputs = append(fl.Outputs, &Output{Name: o.key, Pos: posOf(o.k), val: p.value(o.v, 1)})
			}
		default:
			p.unknown(e, "flow", flowKeys...)
			if meant(e.key, "steps") != "" && !hasSteps {
				stepsNode, hasSteps = e.v, true // read as meant; its steps are checked
			}
		}
	}
	if !hasSteps {
		p.errAt(fl.Pos, "a flow needs steps:")
	} else {
		fl.Steps = p.steps(stepsNode, "steps", 1)
		if len(fl.Steps) == 0 {
			p.Errorf(stepsNode, "steps: at least one step is needed")
		}
	}
	fl.nsteps = p.nsteps
	return fl
}

func (p *parser) unknown(e entry, where string, known ...string) {
	p.Unknown(e.k, e.key, where, known...)
}
