// Package enrich adds context to tool results as the gateway forwards
// them: an operator declares rules (which tools, an optional CEL
// condition, templates for text blocks, resource links and structured
// keys), and Apply splices what they render into the upstream's result
// bytes, leaving every byte the upstream sent as it was.
//
// Enrichment never fails a call: a result it cannot read is returned as
// it is, and a rule that fails is skipped whole; both are reported as
// errors for logging. Templates come only from the configuration;
// everything from the upstream or the caller is data, never parsed as a
// template or expression.
//
// Bounds: a result over MaxResult (16 MiB) is not read; what one rule or
// hook adds is bounded by Limits.MaxOutputBytes (64 KiB); one evaluation of a
// When expression by Limits.MaxCELCost and the request's context.
package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"cel.dev/cel-go/cel"

	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// Rule is one declarative enrichment: for results of the tools it names
// (and, with When, only when its condition holds), it appends text blocks
// and resource links and merges keys into structuredContent.
//
// Templates are text/template with the data .args (the call's arguments),
// .result (structuredContent, numbers as json.Number), .text (the
// result's text blocks joined by "\n"), .tool, .upstream and .caller
// (.identity, .persona, .claims). A missing value or a JSON null prints
// as nothing, an object or array as JSON. Functions: json, default (def,
// v), lower, upper, trim, trunc (n, v), pathescape, queryescape, contains
// (sub, v), hasPrefix, hasSuffix and join (sep, list). Rules see the
// upstream's result, not each other's additions.
type Rule struct {
	// Name identifies the rule in errors and logs.
	Name string
	// Tools are globs (policy.CompileGlob) over the downstream tool name;
	// at least one.
	Tools []string
	// When is an optional CEL expression of type bool over the variables
	// args (map), result (structuredContent or null), text, tool,
	// upstream (strings) and caller (map: identity, persona, claims).
	// JSON numbers are ints when integral and in range, else doubles;
	// comparisons across the two work.
	When string
	// Text are templates; each output that is not blank becomes a text
	// block appended to the content.
	Text []string
	// Links become resource_link blocks; every field is a template. A
	// link whose URI renders empty is left out; its Name defaults to the
	// URI.
	Links []Link
	// Structured maps a structuredContent key to a template whose output,
	// trimmed, is the value: as JSON when it parses as JSON, else as a
	// JSON string (an empty output sets nothing). Keys are merged only
	// into a structuredContent that is an object, and never over an
	// existing key unless Overwrite.
	Structured map[string]string
	// Overwrite lets Structured replace keys structuredContent has.
	Overwrite bool
}

// Link is a resource_link block; each field is a template.
type Link struct{ URI, Name, Title, Description, MimeType string }

// Call is what Apply knows of the tools/call a result answers.
type Call struct {
	Tool      string          // the downstream tool name
	Upstream  string          // the upstream that served it
	Arguments json.RawMessage // the call's arguments object
	Identity  string
	Persona   string
	Claims    map[string]any
}

// Hook is the Go form of a rule, for programs embedding the gateway: it
// runs on every result the rules could enrich, after the rules, and adds
// through res. Its additions are kept only if it returns nil; an error
// (or a panic) never fails the call and is reported by Apply.
type Hook func(ctx context.Context, call *Call, res *Result) error

// RuleError is an error of one rule (or hook): at New, a field that does
// not compile; at Apply, why the rule was skipped.
type RuleError struct {
	Index int    // the rule's position in the rules given to New, or the hook's among the hooks
	Name  string // the rule's Name; "" for a hook
	Hook  bool
	Field string // "Tools[0]", "When", "Text[1]", "Links[0].URI", `Structured["k"]`; "" for the rule as a whole
	Err   error
}

func (e *RuleError) Error() string {
	var b strings.Builder
	if e.Hook {
		fmt.Fprintf(&b, "enrich: hook %d", e.Index)
	} else {
		fmt.Fprintf(&b, "enrich: rule %d %q", e.Index, e.Name)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

func (e *RuleError) Unwrap() error { return e.Err }

// Enricher applies compiled rules and hooks. It is safe for concurrent
// use.
type Enricher struct {
	rules     []*rule
	hooks     []Hook
	maxOutput int
}

type rule struct {
	index      int
	name       string
	globs      []*policy.Glob
	when       cel.Program // nil: always
	text       []*template.Template
	links      []link
	structured []structField // by key
	overwrite  bool
}

type link struct{ uri, name, title, description, mimeType *template.Template }

type structField struct {
	key string
	tpl *template.Template
}

// New compiles rules: globs, CEL expressions (type-checked) and
// templates. An error is a *RuleError naming the rule and the field.
func New(rules []Rule, opts ...Option) (*Enricher, error) {
	o := newOptions(opts)
	e := &Enricher{hooks: o.hooks, maxOutput: o.limits.MaxOutputBytes}
	for i, rd := range rules {
		r, err := compileRule(i, rd, o)
		if err != nil {
			return nil, err
		}
		e.rules = append(e.rules, r)
	}
	return e, nil
}

func compileRule(i int, rd Rule, o options) (*rule, error) {
	fail := func(field string, err error) error {
		return &RuleError{Index: i, Name: rd.Name, Field: field, Err: err}
	}
	r := &rule{index: i, name: rd.Name, overwrite: rd.Overwrite}
	if len(rd.Tools) == 0 {
		return nil, fail("Tools", errors.New("no tool globs: a rule names at least one"))
	}
	for j, t := range rd.Tools {
		g, err := policy.CompileGlob(t)
		if err != nil {
			return nil, fail(fmt.Sprintf("Tools[%d]", j), err)
		}
		r.globs = append(r.globs, g)
	}
	if strings.TrimSpace(rd.When) != "" {
		prg, err := compileWhen(rd.When, o.limits.MaxCELCost)
		if err != nil {
			return nil, fail("When", err)
		}
		r.when = prg
	}
	if len(rd.Text) == 0 && len(rd.Links) == 0 && len(rd.Structured) == 0 {
		return nil, fail("", errors.New("adds nothing: no Text, Links or Structured"))
	}
	tpl := func(field, text string) (*template.Template, error) {
		if text == "" {
			return nil, nil
		}
		t, err := compileTemplate(fmt.Sprintf("rule %d %q %s", i, rd.Name, field), text)
		if err != nil {
			return nil, fail(field, err)
		}
		return t, nil
	}
	for j, s := range rd.Text {
		t, err := tpl(fmt.Sprintf("Text[%d]", j), s)
		if err != nil {
			return nil, err
		}
		if t != nil {
			r.text = append(r.text, t)
		}
	}
	for j, l := range rd.Links {
		f := func(name string) string { return fmt.Sprintf("Links[%d].%s", j, name) }
		if l.URI == "" {
			return nil, fail(f("URI"), errors.New("empty"))
		}
		var cl link
		var err error
		for _, x := range []struct {
			dst  **template.Template
			name string
			text string
		}{{&cl.uri, "URI", l.URI}, {&cl.name, "Name", l.Name}, {&cl.title, "Title", l.Title}, {&cl.description, "Description", l.Description}, {&cl.mimeType, "MimeType", l.MimeType}} {
			if *x.dst, err = tpl(f(x.name), x.text); err != nil {
				return nil, err
			}
		}
		r.links = append(r.links, cl)
	}
	for k, s := range rd.Structured {
		field := fmt.Sprintf("Structured[%q]", k)
		if k == "" {
			return nil, fail(field, errors.New("empty key"))
		}
		if strings.ToValidUTF8(k, "") != k {
			return nil, fail(field, errors.New("key is not valid UTF-8"))
		}
		if s == "" {
			return nil, fail(field, errors.New("empty template"))
		}
		t, err := tpl(field, s)
		if err != nil {
			return nil, err
		}
		r.structured = append(r.structured, structField{k, t})
	}
	slices.SortFunc(r.structured, func(a, b structField) int { return strings.Compare(a.key, b.key) })
	return r, nil
}

func (r *rule) matches(tool string) bool {
	for _, g := range r.globs {
		if g.Match(tool) {
			return true
		}
	}
	return false
}

func (r *rule) fail(field string, err error) *RuleError {
	return &RuleError{Index: r.index, Name: r.name, Field: field, Err: err}
}

// Apply enriches result, the raw result of call, with the rules matching
// the tool and then the hooks. It returns the result with the additions
// spliced in (the upstream's bytes kept as they were), or result itself
// when nothing was added, and the errors met: an error wrapping
// ErrUnusable when the result could not be read (out is then result),
// a *RuleError for each rule or hook skipped, and an error when the
// arguments could not be read (rules then see none). A result with
// isError true, or a resultType other than "complete", is returned as it
// is, without error; so is any result when no rule matches the tool and
// there are no hooks (it is then not even read).
//
// Rules and hooks are applied in order, each all or nothing. The first
// rule that matches decodes the arguments and structuredContent, once
// for all the rules of the call.
func (e *Enricher) Apply(ctx context.Context, call *Call, result json.RawMessage) (out json.RawMessage, errs []error) {
	if call == nil {
		call = &Call{}
	}
	var matched []*rule
	for _, r := range e.rules {
		if r.matches(call.Tool) {
			matched = append(matched, r)
		}
	}
	if len(matched) == 0 && len(e.hooks) == 0 {
		return result, nil
	}
	p, err := parseResult(result)
	if err != nil {
		return result, []error{err}
	}
	if p.skip {
		return result, nil
	}
	st := &state{p: p, call: call}
	pend := &pending{}
	for _, r := range matched {
		if err := ctx.Err(); err != nil {
			errs = append(errs, r.fail("", fmt.Errorf("not applied: %w", err)))
			break
		}
		res, rerr := e.applyRule(ctx, r, st, pend)
		if st.argsErr != nil {
			errs = append(errs, st.argsErr)
			st.argsErr = nil
		}
		if rerr != nil {
			errs = append(errs, rerr)
			continue
		}
		if res != nil {
			res.commit()
		}
	}
	for i, h := range e.hooks {
		res := newResult(p, pend, e.maxOutput)
		if err := runHook(ctx, h, call, res); err != nil {
			errs = append(errs, &RuleError{Index: i, Hook: true, Err: err})
			continue
		}
		res.commit()
	}
	if len(pend.blocks) == 0 && len(pend.values) == 0 {
		return result, errs
	}
	return splice(p, pend), errs
}

// runHook runs h, turning a panic into an error.
func runHook(ctx context.Context, h Hook, call *Call, res *Result) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return h(ctx, call, res)
}

// applyRule evaluates one rule; it returns its additions (nil when its
// condition is false), or why it was skipped.
func (e *Enricher) applyRule(ctx context.Context, r *rule, st *state, pend *pending) (*Result, *RuleError) {
	st.load()
	if r.when != nil {
		ok, err := evalWhen(ctx, r.when, st.vars)
		if err != nil {
			return nil, r.fail("When", err)
		}
		if !ok {
			return nil, nil
		}
	}
	res := newResult(st.p, pend, e.maxOutput)
	for i, t := range r.text {
		s, err := render(t, st.data, res.remaining())
		if err != nil {
			return nil, r.fail(fmt.Sprintf("Text[%d]", i), err)
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		if err := res.AppendText(s); err != nil {
			return nil, r.fail(fmt.Sprintf("Text[%d]", i), err)
		}
	}
	for i, l := range r.links {
		var rl Link
		for _, x := range []struct {
			dst  *string
			name string
			tpl  *template.Template
		}{{&rl.URI, "URI", l.uri}, {&rl.Name, "Name", l.name}, {&rl.Title, "Title", l.title}, {&rl.Description, "Description", l.description}, {&rl.MimeType, "MimeType", l.mimeType}} {
			if x.tpl == nil {
				continue
			}
			s, err := render(x.tpl, st.data, res.remaining())
			if err != nil {
				return nil, r.fail(fmt.Sprintf("Links[%d].%s", i, x.name), err)
			}
			*x.dst = strings.TrimSpace(s)
		}
		if rl.URI == "" {
			continue
		}
		if err := res.AppendLink(rl); err != nil {
			return nil, r.fail(fmt.Sprintf("Links[%d]", i), err)
		}
	}
	for _, sf := range r.structured {
		field := func() string { return fmt.Sprintf("Structured[%q]", sf.key) }
		s, err := render(sf.tpl, st.data, res.remaining())
		if err != nil {
			return nil, r.fail(field(), err)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		err = res.merge(sf.key, jsonValue(s), r.overwrite)
		switch {
		case errors.Is(err, ErrNotObject) || errors.Is(err, ErrKeyExists):
			// Not merged, by design: nothing to merge into, or not
			// over a key already there.
		case err != nil:
			return nil, r.fail(field(), err)
		}
	}
	if res.empty() {
		return nil, nil
	}
	return res, nil
}

// jsonValue is a template's output as a structured value: itself,
// compacted, when it is valid JSON (RFC 7493: no duplicate names, valid
// UTF-8), else a JSON string of it.
func jsonValue(s string) []byte {
	v := jsontextValue(s)
	if v != nil {
		return v
	}
	return appendString(nil, s)
}

// state is what the rules of one Apply read, built when the first rule
// is evaluated.
type state struct {
	p       *parsed
	call    *Call
	loaded  bool
	data    map[string]any // template data
	vars    map[string]any // CEL variables
	argsErr error
}

func (st *state) load() {
	if st.loaded {
		return
	}
	st.loaded = true
	args := map[string]any{}
	if a := strings.TrimSpace(string(st.call.Arguments)); a != "" && a != "null" {
		var m map[string]any
		if err := wirejson.UnmarshalUseNumber(st.call.Arguments, &m); err != nil {
			st.argsErr = fmt.Errorf("enrich: arguments of %q unreadable, rules see none: %w", st.call.Tool, err)
		} else if m != nil {
			args = m
		}
	}
	fromJSON(args)
	claims := map[string]any{}
	if st.call.Claims != nil {
		claims = fromGo(st.call.Claims).(map[string]any)
	}
	caller := map[string]any{"identity": st.call.Identity, "persona": st.call.Persona, "claims": claims}
	st.data = map[string]any{
		"args":     args,
		"text":     st.p.text,
		"tool":     st.call.Tool,
		"upstream": st.call.Upstream,
		"caller":   caller,
	}
	st.vars = make(map[string]any, len(st.data)+1)
	for k, v := range st.data {
		st.vars[k] = v
	}
	st.vars["result"] = nil
	if st.p.structured != nil {
		var v any
		if err := wirejson.UnmarshalUseNumber(st.p.structured, &v); err == nil {
			v = fromJSON(v)
			st.data["result"], st.vars["result"] = v, v
		}
	}
}

// StructuredKeys lists, sorted, the structuredContent keys the rules may
// merge into tool's results, so that a gateway can declare them in the
// tool's outputSchema (a client validating the result against a schema
// without them would refuse it). Keys a Hook merges are not known here.
func (e *Enricher) StructuredKeys(tool string) []string {
	var keys []string
	for _, r := range e.rules {
		if !r.matches(tool) {
			continue
		}
		for _, f := range r.structured {
			if !slices.Contains(keys, f.key) {
				keys = append(keys, f.key)
			}
		}
	}
	slices.Sort(keys)
	return keys
}
