package schema

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Checked is a JSON value checked against a schema by Check.
type Checked struct {
	// JSON is the value with the schema's defaults applied (see
	// ApplyDefaults): the input itself when no default applied, else a
	// copy with each absent property that declares a default added at the
	// end of its object.
	JSON []byte
	// Kind is the JSON kind of the value: '{', '[', '"', '0' (a number),
	// 't', 'f' or 'n'.
	Kind byte
	// Invalid lists how the value (defaults applied) breaks the schema; nil
	// when it is valid.
	Invalid *ValidationError
}

// DefaultMaxViolations is how many violations Check and ValidateJSON list
// by default.
const DefaultMaxViolations = 100

// Check reads data as strictly as DecodeValue (returning the same
// *DecodeError for input it refuses), applies the schema's defaults as
// ApplyDefaults does, and validates the result as Validate does, with the
// same violations. Tool arguments go through it on every call.
//
// At most maxViolations violations are listed (DefaultMaxViolations when
// maxViolations is 0 or less), the first in path order when the value is
// checked as a tree, the first found otherwise; ValidationError.Truncated
// says more were found. A value that breaks its schema everywhere thus
// costs a bounded report, not one violation per element.
//
// Where the schema allows (its keywords each apply to one value at a time:
// type, enum, const, properties, required, additionalProperties, items,
// counts, lengths, bounds, pattern, format; as in the schemas For infers
// from Go types), the value is checked on its raw bytes as it is read: no
// tree of Go values is built, so the memory a value costs stays near its
// own size however many elements it has. A value under a subschema using
// anything else (anyOf, $ref, uniqueItems...) is decoded, alone, into a tree
// for the validator; when the root schema does, the whole value is, as
// Validate needs. Numbers compared with bounds are limited as
// MaxCheckedExponent says; nesting as MaxDepth says.
func (s *Schema) Check(data []byte, maxViolations int) (Checked, error) {
	return s.check(data, true, maxViolations)
}

func (s *Schema) check(data []byte, withDefaults bool, maxViolations int) (Checked, error) {
	if maxViolations <= 0 {
		maxViolations = DefaultMaxViolations
	}
	if s.plan == nil {
		return s.checkTree(data, withDefaults, maxViolations)
	}
	w := walker{valueDecoder: valueDecoder{data: data}, defaults: withDefaults, max: maxViolations}
	w.space()
	start := w.pos
	err := w.value(s.plan, 0)
	if err == nil {
		w.space()
		if w.pos != len(w.data) {
			err = w.fail("unexpected data after the top-level value")
		}
	}
	if err != nil {
		return Checked{}, err.done()
	}
	c := Checked{JSON: data, Kind: kindOf(data[start])}
	if len(w.splices) > 0 {
		c.JSON = w.spliced()
	}
	if len(w.out) > 0 {
		sort.SliceStable(w.out, func(i, j int) bool { return w.out[i].Path < w.out[j].Path })
		if len(w.out) > w.max {
			w.out, w.truncated = w.out[:w.max:w.max], true
		}
		c.Invalid = &ValidationError{Violations: w.out, Truncated: w.truncated}
	}
	return c, nil
}

// checkTree is Check through a decoded tree, for schemas without a plan.
func (s *Schema) checkTree(data []byte, withDefaults bool, maxViolations int) (Checked, error) {
	v, err := DecodeValue(data)
	if err != nil {
		return Checked{}, err
	}
	c := Checked{JSON: data, Kind: kindOfValue(v)}
	if withDefaults && s.ApplyDefaults(v) {
		if c.JSON, err = json.Marshal(v); err != nil {
			return Checked{}, err
		}
	}
	var ve *ValidationError
	if err := s.Validate(v); errors.As(err, &ve) {
		if len(ve.Violations) > maxViolations {
			ve.Violations, ve.Truncated = ve.Violations[:maxViolations:maxViolations], true
		}
		c.Invalid = ve
	}
	return c, nil
}

func kindOf(c byte) byte {
	if c == '-' || c >= '0' && c <= '9' {
		return '0'
	}
	return c
}

func kindOfValue(v any) byte {
	switch v := v.(type) {
	case map[string]any:
		return '{'
	case []any:
		return '['
	case string:
		return '"'
	case bool:
		if v {
			return 't'
		}
		return 'f'
	case nil:
		return 'n'
	}
	return '0'
}

// walker reads JSON as DecodeValue does, failing on the same input with
// the same errors, but builds nothing: it checks each value against its plan
// as it goes, gathering violations, and notes where defaults go.
type walker struct {
	valueDecoder
	defaults  bool
	max       int  // violations listed at most
	truncated bool // more were found

	path    []pathToken // where the value being read is
	names   [][]byte    // member names of the objects open, for duplicates
	out     []Violation
	splices []splice
}

type pathToken struct {
	name    []byte // a member name, unescaped
	index   int
	isIndex bool
}

// splice is text to put in place of data[at:end] (inserted when end is at).
type splice struct {
	at, end int
	text    []byte
}

// maxLinearNames is how many member names of one object are compared one
// by one for duplicates; past it, a map holds them.
const maxLinearNames = 16

func (w *walker) value(p *plan, depth int) *decodeError {
	if w.pos >= len(w.data) {
		return w.fail("unexpected end of input")
	}
	if p != nil && p.tree {
		return w.tree(p, depth)
	}
	switch c := w.data[w.pos]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return w.fail("nested too deeply (more than %d levels)", MaxDepth)
		}
		if c == '{' {
			return w.object(p, depth)
		}
		return w.array(p, depth)
	case c == '"':
		raw, s, err := w.strSpan()
		if err != nil {
			return err
		}
		if p != nil {
			w.checkString(p, raw, s)
		}
	case c == 't', c == 'f', c == 'n':
		start := w.pos
		word, t := "null", tNull
		if c == 't' {
			word, t = "true", tBoolean
		} else if c == 'f' {
			word, t = "false", tBoolean
		}
		if err := w.literal(word); err != nil {
			return err
		}
		if p != nil {
			w.checkLiteral(p, t, w.data[start:w.pos])
		}
	case c == '-' || c >= '0' && c <= '9':
		raw, err := w.numberSpan()
		if err != nil {
			return err
		}
		if p != nil {
			w.checkNumber(p, raw)
		}
	default:
		return w.fail("unexpected character %q", c)
	}
	return nil
}

// container applies the checks every object or array gets first: the false
// schema and the type. It returns the plan for the members, nil when the
// value already failed (the validator looks no deeper).
func (w *walker) container(p *plan, t typeSet, got string) *plan {
	switch {
	case p == nil:
		return nil
	case p.never:
		if !w.full() {
			w.violation(&kind.FalseSchema{})
		}
		return nil
	case !p.allows(t):
		if !w.full() {
			w.violation(&kind.Type{Got: got, Want: p.typeNames})
		}
		return nil
	}
	return p
}

func (w *walker) object(p *plan, depth int) *decodeError {
	p = w.container(p, tObject, "object")
	base := len(w.names)
	defer func() { w.names = w.names[:base] }()
	var many map[string]bool // the names past maxLinearNames
	members := 0
	var additional []string
	if w.open('}') {
		return w.objectEnd(p, base, many, 0, nil, w.pos-1)
	}
	for {
		keyAt := w.pos
		raw, name, err := w.memberName()
		if err != nil {
			return err
		}
		if len(name) != len(raw)-2 {
			name = slices.Clone(name) // unescaped into scratch: keep a copy
		}
		var mp *plan
		if p != nil {
			if sp, ok := p.props[string(name)]; ok {
				mp = sp
			} else if p.additional != nil {
				mp = p.additional
			} else if p.noAdditional && !w.full() {
				additional = append(additional, string(name))
			}
		}
		w.path = append(w.path, pathToken{name: name})
		err = w.value(mp, depth+1)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err.at(string(name))
		}
		if w.seen(name, base, &many) {
			return (&decodeError{offset: keyAt, reason: "duplicate member name " + strconv.Quote(string(name))}).at(string(name))
		}
		members++
		more, err := w.more('}', "an object")
		if err != nil {
			return err
		}
		if !more {
			return w.objectEnd(p, base, many, members, additional, w.pos-1)
		}
	}
}

// seen records a member name of the object whose names start at base, and
// reports whether it was there already.
func (w *walker) seen(name []byte, base int, many *map[string]bool) bool {
	if *many != nil {
		if (*many)[string(name)] {
			return true
		}
		(*many)[string(name)] = true
		return false
	}
	for _, n := range w.names[base:] {
		if string(n) == string(name) {
			return true
		}
	}
	if len(w.names)-base < maxLinearNames {
		w.names = append(w.names, name)
		return false
	}
	*many = make(map[string]bool, 2*maxLinearNames)
	for _, n := range w.names[base:] {
		(*many)[string(n)] = true
	}
	(*many)[string(name)] = true
	return false
}

func (w *walker) has(name string, base int, many map[string]bool) bool {
	if many != nil {
		return many[name]
	}
	for _, n := range w.names[base:] {
		if string(n) == name {
			return true
		}
	}
	return false
}

// objectEnd applies the object's own keywords once its members are read;
// closing is the offset of its closing brace, where defaults go.
func (w *walker) objectEnd(p *plan, base int, many map[string]bool, members int, additional []string, closing int) *decodeError {
	if p == nil {
		return nil
	}
	if w.defaults && len(p.defaults) > 0 {
		first := members == 0
		var text []byte
		for _, d := range p.defaults {
			if w.has(d.name, base, many) {
				continue
			}
			if !first {
				text = append(text, ',')
			}
			first = false
			text = append(text, d.member...)
			members++
			w.checkDefault(p, d)
		}
		if text != nil {
			w.splices = append(w.splices, splice{at: closing, end: closing, text: text})
		}
	}
	if p.minProps >= 0 && members < p.minProps {
		if !w.full() {
			w.violation(&kind.MinProperties{Got: members, Want: p.minProps})
		}
	}
	if p.maxProps >= 0 && members > p.maxProps {
		if !w.full() {
			w.violation(&kind.MaxProperties{Got: members, Want: p.maxProps})
		}
	}
	missing := 0
	for _, r := range p.required {
		if !w.has(r, base, many) && !w.defaulted(p, r) {
			missing++
		}
	}
	if missing > 0 && !w.full() {
		names := make([]string, 0, missing)
		for _, r := range p.required {
			if !w.has(r, base, many) && !w.defaulted(p, r) {
				names = append(names, r)
			}
		}
		w.violation(&kind.Required{Missing: names})
	}
	if len(additional) > 0 {
		w.violation(&kind.AdditionalProperties{Properties: additional})
	}
	return nil
}

// defaulted reports whether a default supplies the absent property name.
func (w *walker) defaulted(p *plan, name string) bool {
	if !w.defaults {
		return false
	}
	for _, d := range p.defaults {
		if d.name == name {
			return true
		}
	}
	return false
}

// checkDefault validates a default put in place of an absent property, as
// the validator sees it in the defaulted value. Defaults are not applied
// inside a default (nor are they by ApplyDefaults).
func (w *walker) checkDefault(p *plan, d propDefault) {
	sp := p.props[d.name]
	if sp == nil {
		return
	}
	saved := w.valueDecoder
	w.valueDecoder = valueDecoder{data: d.value, scratch: saved.scratch}
	w.defaults = false
	w.path = append(w.path, pathToken{name: []byte(d.name)})
	_ = w.value(sp, 0) // written by json.Marshal from a decoded value: valid JSON
	w.path = w.path[:len(w.path)-1]
	w.defaults = true
	w.valueDecoder = saved
}

// tree checks a value whose schema needs it decoded (a tree plan): read
// strictly first, then decoded alone, its defaults applied (replacing its
// text when any applied), and validated by the validator.
func (w *walker) tree(p *plan, depth int) *decodeError {
	start := w.pos
	if err := w.value(nil, depth); err != nil {
		return err
	}
	if w.truncated {
		return nil // the list is full: nothing found here would be listed
	}
	v, err := DecodeValue(w.data[start:w.pos])
	if err != nil {
		return nil // not reached: the walk read it
	}
	if w.defaults && p.doc != nil && applyDefaults(p.doc, v) {
		if b, err := json.Marshal(v); err == nil {
			w.splices = append(w.splices, splice{at: start, end: w.pos, text: b})
		}
	}
	w.add(validateWith(p.sch, v, w.pathString()))
	return nil
}

func (w *walker) array(p *plan, depth int) *decodeError {
	p = w.container(p, tArray, "array")
	var ip *plan
	if p != nil {
		ip = p.items
	}
	n := 0
	if w.open(']') {
		w.arrayEnd(p, 0)
		return nil
	}
	for {
		w.path = append(w.path, pathToken{index: n, isIndex: true})
		err := w.value(ip, depth+1)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err.at(strconv.Itoa(n))
		}
		n++
		more, err := w.more(']', "an array")
		if err != nil {
			return err
		}
		if !more {
			w.arrayEnd(p, n)
			return nil
		}
	}
}

func (w *walker) arrayEnd(p *plan, n int) {
	if p == nil {
		return
	}
	if p.minItems >= 0 && n < p.minItems {
		if !w.full() {
			w.violation(&kind.MinItems{Got: n, Want: p.minItems})
		}
	}
	if p.maxItems >= 0 && n > p.maxItems {
		if !w.full() {
			w.violation(&kind.MaxItems{Got: n, Want: p.maxItems})
		}
	}
}

// full reports whether the violations listed reached the limit; it is
// asked when there is another one, which will go unlisted, so the list is
// marked truncated. The violation is built only when it is not full: a
// value that breaks its schema in every element costs no more than the
// list holds.
func (w *walker) full() bool {
	if len(w.out) >= w.max {
		w.truncated = true
		return true
	}
	return false
}

// violation records a violation of the value being read.
func (w *walker) violation(k jsonschema.ErrorKind) {
	if !w.full() {
		leaf(w.pathString(), k, &w.out)
	}
}

// violationMessage records a violation of the value being read, in words.
func (w *walker) violationMessage(msg string) {
	if !w.full() {
		w.out = append(w.out, Violation{Path: w.pathString(), Message: msg})
	}
}

// add records what the validator found, as much as the list holds.
func (w *walker) add(err error) {
	var ve *ValidationError
	if errors.As(err, &ve) {
		for _, v := range ve.Violations {
			if w.full() {
				return
			}
			w.out = append(w.out, v)
		}
	}
}

func (w *walker) pathString() string {
	if len(w.path) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range w.path {
		b.WriteByte('/')
		if t.isIndex {
			b.WriteString(strconv.Itoa(t.index))
		} else {
			b.WriteString(wirejson.PointerToken(string(t.name)))
		}
	}
	return b.String()
}

// spliced returns the input with the defaults inserted.
func (w *walker) spliced() []byte {
	n := len(w.data)
	for _, s := range w.splices {
		n += len(s.text) - (s.end - s.at)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, s := range w.splices {
		out = append(out, w.data[last:s.at]...)
		out = append(out, s.text...)
		last = s.end
	}
	return append(out, w.data[last:]...)
}
