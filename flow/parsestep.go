package flow

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/internal/yamlsrc"
)

// kindKeys are the keys that give a step its kind.
var kindKeys = []string{"call", "list", "read", "prompt", "value", "set", "if", "switch", "for_each", "while", "try", "throw", "assert", "sleep"}

// auxKeys are the keys a kind takes besides its kind key.
var auxKeys = map[string][]string{
	"if":       {"then", "else"},
	"switch":   {"cases", "default"},
	"for_each": {"do", "concurrency", "as"},
	"while":    {"do", "max_iterations", "until"},
	"try":      {"catch", "finally"},
}

var commonKeys = []string{"name", "when", "timeout", "retry"}

// mcpKeys are the keys of the mapping under call, list, read and prompt.
var mcpKeys = map[string][]string{
	"call":   {"client", "tool", "arguments", "tool_errors"},
	"list":   {"client", "what"},
	"read":   {"client", "uri"},
	"prompt": {"client", "name", "arguments"},
}

// throwKeys are the keys of a throw step's mapping.
var throwKeys = []string{"code", "message", "data"}

// catchKeys are the keys of a catch handler.
var catchKeys = []string{"codes", "do"}

// flowKeys are the keys of a flow document.
var flowKeys = []string{"name", "description", "env", "inputs", "vars", "clients", "steps", "outputs"}

var codeRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// steps reads a list of steps under path.
func (p *parser) steps(n ast.Node, path string, depth int) []*Step {
	items, ok := p.List(n, path)
	if !ok {
		return nil
	}
	out := make([]*Step, 0, len(items))
	for i, it := range items {
		if s := p.step(it, fmt.Sprintf("%s[%d]", path, i), depth); s != nil {
			out = append(out, s)
		}
	}
	return out
}

func isCommonOrAux(k string) bool {
	for _, x := range commonKeys {
		if x == k {
			return true
		}
	}
	for _, aux := range auxKeys {
		for _, x := range aux {
			if x == k {
				return true
			}
		}
	}
	return false
}

func isKind(k string) bool {
	for _, x := range kindKeys {
		if x == k {
			return true
		}
	}
	return false
}

// step reads one step: exactly one kind key, the common keys and the
// kind's own keys.
func (p *parser) step(n ast.Node, path string, depth int) *Step {
	if depth > p.cfg.maxDepth {
		p.Errorf(n, "steps nested deeper than %d levels", p.cfg.maxDepth)
		return nil
	}
	if p.full {
		return nil
	}
	if p.nsteps++; p.nsteps > p.cfg.maxSteps {
		p.Errorf(n, "more than %d steps in the flow", p.cfg.maxSteps)
		p.full = true
		return nil
	}
	if _, ok := n.(*ast.MappingNode); !ok {
		p.Errorf(n, "%s: a step must be a mapping with one kind key (%s), not a %s", path, strings.Join(kindKeys, ", "), yamlsrc.Kind(n))
		return nil
	}
	entries, _ := p.mapping(n, path)
	s := &Step{Path: path, Pos: posOf(n), toolErrors: "throw", conc: 1, as: "item"}
	var kind, expect *entry
	for i, e := range entries {
		if isKind(e.key) {
			// assert: beside another kind key is the step's own
			// assertion on how it ran (assert: {duration: ...}).
			if kind != nil && expect == nil && kind.key == "assert" {
				expect, kind = kind, &entries[i]
				continue
			}
			if kind != nil && expect == nil && e.key == "assert" {
				expect = &entries[i]
				continue
			}
			if kind != nil {
				p.Errorf(e.k, "%s: two kind keys, %s and %s (a step has exactly one)", path, kind.key, e.key)
				continue
			}
			kind = &entries[i]
		}
	}
	if kind == nil {
		return p.kindless(s, entries)
	}
	s.Kind = kind.key
	aux := map[string]entry{}
	for _, e := range entries {
		switch e.key {
		case "name":
			if name, ok := p.Scalar(e.v, "name"); ok {
				if !identRE.MatchString(name) {
					p.Errorf(e.v, "%s: step name %q: want [A-Za-z_][A-Za-z0-9_]*", path, name)
				} else {
					s.Name = name
				}
			}
		case "when":
			s.when = p.value(e.v, depth+1)
		case "timeout":
			s.Timeout, _ = p.duration(e.v, "timeout")
		case "retry":
			s.Retry = p.retry(e.v)
		default:
			if isKind(e.key) {
				continue
			}
			found := false
			for _, a := range auxKeys[s.Kind] {
				if a == e.key {
					found = true
				}
			}
			if !found {
				known := append(append([]string{s.Kind}, commonKeys...), auxKeys[s.Kind]...)
				p.unknown(e, "a "+s.Kind+" step", known...)
				if best := meant(e.key, auxKeys[s.Kind]...); best != "" {
					if _, ok := aux[best]; !ok {
						aux[best] = e // read as meant; its contents are checked
					}
				}
				continue
			}
			aux[e.key] = e
		}
	}
	p.kind(s, *kind, aux, depth)
	if expect != nil {
		s.expect = p.stepExpect(*expect, path)
	}
	return s
}

// kind reads the kind key's value and the kind's own keys.
func (p *parser) kind(s *Step, k entry, aux map[string]entry, depth int) {
	path := s.Path
	sub := func(key string) []*Step {
		e, ok := aux[key]
		if !ok {
			return nil
		}
		return p.steps(e.v, path+"."+key, depth+1)
	}
	// loop reads what for_each and while share: the condition or list, the
	// do: body, and the bound (an integer from 1 to max; one outside is
	// reported, and kept so that the step reads as written), with whether
	// the bound is given.
	loop := func(boundKey string, max int) (int, bool) {
		s.cond = p.value(k.v, depth+1)
		if _, ok := aux["do"]; !ok {
			p.Errorf(k.k, "%s: %s needs do:", path, k.key)
		}
		s.body = sub("do")
		e, ok := aux[boundKey]
		if !ok {
			return 0, false
		}
		n, ok := p.intVal(e.v, boundKey)
		if ok && (n < 1 || n > max) {
			p.Errorf(e.v, "%s: %s %d: want 1 to %d", path, boundKey, n, max)
		}
		return n, true
	}
	switch s.Kind {
	case "call", "list", "read", "prompt":
		p.mcpStep(s, k)
	case "value":
		s.val = p.value(k.v, depth+1)
	case "if":
		s.cond = p.value(k.v, depth+1)
		if _, ok := aux["then"]; !ok {
			p.Errorf(k.k, "%s: if needs then:", path)
		}
		s.then, s.els = sub("then"), sub("else")
	case "switch":
		s.cond = p.value(k.v, depth+1)
		if e, ok := aux["cases"]; ok {
			cases, _ := p.mapping(e.v, "cases")
			for _, c := range cases {
				s.cases = append(s.cases, switchCase{key: c.key, steps: p.steps(c.v, fmt.Sprintf("%s.cases[%s]", path, c.key), depth+2)})
			}
		} else {
			p.Errorf(k.k, "%s: switch needs cases:", path)
		}
		_, s.hasDef = aux["default"]
		s.def = sub("default")
	case "for_each":
		s.conc, _ = loop("concurrency", MaxConcurrency)
		if e, ok := aux["as"]; ok {
			if as, ok := p.Scalar(e.v, "as"); ok {
				if !identRE.MatchString(as) || celReserved[as] || as == "index" || as == "steps" || as == "inputs" || as == "env" || as == "error" || as == "vars" {
					p.Errorf(e.v, "%s: as: %q cannot name a variable", path, as)
				} else {
					s.as = as
				}
			}
		}
	case "while":
		var bounded bool
		if s.maxIter, bounded = loop("max_iterations", MaxIterations); !bounded {
			p.Errorf(k.k, "%s: while needs a bound: max_iterations, 1 to %d", path, MaxIterations)
		}
		if e, ok := aux["until"]; ok {
			s.until = p.value(e.v, depth+1)
		}
	case "set":
		s.sets = p.assignments(k.v, path+".set", depth)
	case "try":
		s.try = p.steps(k.v, path+".try", depth+1)
		if e, ok := aux["catch"]; ok {
			items, _ := p.List(e.v, "catch")
			for i, it := range items {
				s.catches = append(s.catches, p.catch(it, fmt.Sprintf("%s.catch[%d]", path, i), depth+2))
			}
		}
		_, s.hasFinal = aux["finally"]
		s.finally = sub("finally")
		if len(s.catches) == 0 && !s.hasFinal {
			p.Errorf(k.k, "%s: try needs catch: or finally:", path)
		}
	case "throw":
		fields, _ := p.mapping(k.v, "throw")
		for _, f := range fields {
			switch f.key {
			case "code":
				s.code = p.value(f.v, depth+2)
				if c, ok := s.code.literalString(); ok && !codeRE.MatchString(c) {
					p.Errorf(f.v, "%s: code %q: want [A-Z][A-Z0-9_]*", path, c)
				}
			case "message":
				s.message = p.value(f.v, depth+2)
			case "data":
				s.data = p.value(f.v, depth+2)
			default:
				p.unknown(f, "throw", throwKeys...)
				if meant(f.key, "code") != "" {
					s.code = &value{kind: vLit, lit: "", pos: posOf(f.v)}
				}
			}
		}
		if s.code == nil {
			p.Errorf(k.k, "%s: throw needs code:", path)
		}
	case "assert":
		s.assert = p.assertSpec(k, path, depth)
	case "sleep":
		s.sleep, _ = p.duration(k.v, "sleep")
	}
}

// catch reads one handler: {codes: [...], do: [...]}.
func (p *parser) catch(n ast.Node, path string, depth int) *catchClause {
	c := &catchClause{pos: posOf(n), anyCodes: true}
	fields, _ := p.mapping(n, "catch handler")
	hasDo := false
	for _, f := range fields {
		switch f.key {
		case "codes":
			c.anyCodes = false
			items, _ := p.List(f.v, "codes")
			for _, it := range items {
				if code, ok := p.Scalar(it, "code"); ok {
					if !codeRE.MatchString(code) {
						p.Errorf(it, "%s: code %q: want [A-Z][A-Z0-9_]*", path, code)
						continue
					}
					c.codes = append(c.codes, code)
					c.codePos = append(c.codePos, posOf(it))
				}
			}
		case "do":
			hasDo = true
			c.steps = p.steps(f.v, path+".do", depth+1)
		default:
			p.unknown(f, "catch handler", catchKeys...)
			hasDo = hasDo || meant(f.key, "do") != ""
		}
	}
	if !hasDo {
		p.errAt(c.pos, "%s: a catch handler needs do:", path)
	}
	return c
}

// mcpStep reads call, list, read and prompt.
func (p *parser) mcpStep(s *Step, k entry) {
	fields, _ := p.mapping(k.v, s.Kind)
	s.clientPos = posOf(k.k)
	seen := map[string]bool{}
	for _, f := range fields {
		seen[f.key] = true
		switch {
		case f.key == "client":
			if name, ok := p.Scalar(f.v, "client"); ok {
				s.client, s.clientPos = name, posOf(f.v)
			}
		case s.Kind == "call" && f.key == "tool":
			s.tool = p.value(f.v, 3)
		case (s.Kind == "call" || s.Kind == "prompt") && f.key == "arguments":
			s.args = p.value(f.v, 3)
			if s.args.kind == vList || s.args.kind == vInterp {
				p.Errorf(f.v, "%s: arguments: want a mapping", s.Path)
			} else if s.args.kind == vLit && s.args.lit != nil {
				if _, ok := s.args.lit.(map[string]any); !ok {
					p.Errorf(f.v, "%s: arguments: want a mapping", s.Path)
				}
			}
		case s.Kind == "call" && f.key == "tool_errors":
			if te, ok := p.Scalar(f.v, "tool_errors"); ok {
				if te != "throw" && te != "result" {
					p.Errorf(f.v, "%s: tool_errors %q: want throw or result", s.Path, te)
				}
				s.toolErrors = te
			}
		case s.Kind == "list" && f.key == "what":
			if w, ok := p.Scalar(f.v, "what"); ok {
				switch w {
				case "tools", "resources", "resource_templates", "prompts":
				default:
					p.Errorf(f.v, "%s: what %q: want tools, resources, resource_templates or prompts", s.Path, w)
				}
				s.what = w
			}
		case s.Kind == "read" && f.key == "uri":
			s.uri = p.value(f.v, 3)
		case s.Kind == "prompt" && f.key == "name":
			s.prompt = p.value(f.v, 3)
		default:
			known := mcpKeys[s.Kind]
			p.unknown(f, s.Kind, known...)
			if best := meant(f.key, known...); best != "" {
				seen[best] = true
			}
		}
	}
	need := map[string]string{"call": "tool", "list": "what", "read": "uri", "prompt": "name"}[s.Kind]
	if !seen[need] {
		p.Errorf(k.k, "%s: %s needs %s:", s.Path, s.Kind, need)
	}
}
