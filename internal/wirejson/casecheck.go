package wirejson

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolwire/toolwire/internal/jsonscan"
)

// The case check. After a successful decode, checkCase walks the JSON again
// along the target's type and refuses a member that the target struct does
// not know but that differs from one of its members only by case ("Name"
// where the struct has "name"): a case-insensitive reader (encoding/json v1,
// many gateways) would take it for that member, this one ignores it, and the
// caller would report the confusing "name is required". The walk visits only
// objects that decode into structs and skips everything else at the speed of
// a byte search; types that hold no struct are not walked at all.

// plan says where, in JSON that decodes into one Go type, structs lie.
type plan struct {
	// For a struct: its members by exact name (a nil plan for a member that
	// needs no walk), and the names a case variant must be checked against
	// (every member but those matched case-insensitively anyway).
	fields   map[string]*plan
	names    []string
	isStruct bool
	// For a slice, an array or a map: the plan of the elements.
	elem *plan
}

var plans sync.Map // reflect.Type → *plan (nil: nothing to walk)

// planFor returns the plan for t, nil when JSON for t holds no struct to
// check.
func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	building := map[reflect.Type]*plan{}
	p := buildPlan(t, building)
	p = prune(p, map[*plan]bool{})
	plans.Store(t, p)
	return p
}

// buildPlan builds plans; building holds those under construction, so that
// recursive types end in a cycle rather than a loop.
func buildPlan(t reflect.Type, building map[reflect.Type]*plan) *plan {
	for t.Kind() == reflect.Pointer {
		if hasMethod(t) {
			return nil
		}
		t = t.Elem()
	}
	if hasMethod(t) {
		return nil // it decodes itself; if it uses this package, it is checked there
	}
	if p, ok := building[t]; ok {
		return p
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return nil // base64
		}
		p := &plan{}
		building[t] = p
		p.elem = buildPlan(t.Elem(), building)
		return p
	case reflect.Map:
		p := &plan{}
		building[t] = p
		p.elem = buildPlan(t.Elem(), building)
		return p
	case reflect.Struct:
		p := &plan{isStruct: true, fields: map[string]*plan{}}
		building[t] = p
		if !addFields(p, t, building, 0) {
			// A struct this model does not understand (an embedded map or
			// jsontext.Value catching unknown names, a quoted tag name) is walked into no
			// further and never refused.
			*p = plan{}
		}
		return p
	}
	return nil
}

// addFields adds t's JSON members to p, following embedded structs the way
// the decoder does. It returns false for a struct it cannot model.
func addFields(p *plan, t reflect.Type, building map[reflect.Type]*plan, depth int) bool {
	if depth > 32 {
		return false
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		if !sf.IsExported() && !sf.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.HasPrefix(name, "'") {
			return false
		}
		hasName := hasTag && name != ""
		if !hasName {
			name = sf.Name
		}
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if hasOption(opts, "embed") || (sf.Anonymous && !hasName) {
			if ft.Kind() != reflect.Struct || hasMethod(ft) {
				return false // a map or jsontext.Value catching unknown members
			}
			if !addFields(p, ft, building, depth+1) {
				return false
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if _, dup := p.fields[name]; !dup {
			p.fields[name] = buildPlan(sf.Type, building)
		}
		if !hasOption(opts, "case:ignore") {
			p.names = append(p.names, name)
		}
	}
	return true
}

func hasOption(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// prune replaces with nil every plan under which no struct lies.
func prune(p *plan, seen map[*plan]bool) *plan {
	if p == nil {
		return nil
	}
	if seen[p] {
		return p // a cycle runs through a struct, so it stays
	}
	seen[p] = true
	if p.isStruct {
		for name, f := range p.fields {
			p.fields[name] = prune(f, seen)
		}
		return p
	}
	p.elem = prune(p.elem, seen)
	if p.elem == nil {
		return nil
	}
	return p
}

// checkCase walks data (valid JSON, already decoded into v) for case
// variants of struct members.
func checkCase(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil
	}
	p := planFor(t.Elem())
	if p == nil {
		return nil
	}
	w := walker{data: data}
	w.space()
	if err := w.value(p, 0); err != nil {
		return err
	}
	return nil
}

// walker reads JSON already known to be valid.
type walker struct {
	data []byte
	pos  int
}

// maxWalkDepth stops the walk (without an error) where the decoder's own
// limit would have refused the input anyway.
const maxWalkDepth = 10000

func (w *walker) value(p *plan, depth int) *Error {
	if p == nil || depth > maxWalkDepth {
		w.skip()
		return nil
	}
	switch w.data[w.pos] {
	case '{':
		return w.object(p, depth)
	case '[':
		if p.isStruct {
			w.skip()
			return nil
		}
		if w.open(']') {
			return nil
		}
		for i := 0; ; i++ {
			w.space()
			if err := w.value(p.elem, depth+1); err != nil {
				err.Pointer = "/" + strconv.Itoa(i) + err.Pointer
				return err
			}
			if !w.more(']') {
				return nil
			}
		}
	}
	w.skip()
	return nil
}

func (w *walker) object(p *plan, depth int) *Error {
	if w.open('}') {
		return nil
	}
	var buf [64]byte
	for {
		w.space()
		name := w.name(buf[:0])
		w.space()
		w.pos++ // :
		w.space()
		var next *plan
		if p.isStruct {
			f, ok := p.fields[string(name)]
			if !ok {
				if err := caseVariant(string(name), p.names); err != nil {
					return err
				}
			}
			next = f
		} else {
			next = p.elem
		}
		if err := w.value(next, depth+1); err != nil {
			err.Pointer = "/" + PointerToken(string(name)) + err.Pointer
			return err
		}
		if !w.more('}') {
			return nil
		}
	}
}

// open passes over the '{' or '[' at w.pos and the white space after it,
// and reports whether closing (its '}' or ']') follows at once, passing over
// that too: the container is empty.
func (w *walker) open(closing byte) (empty bool) {
	w.pos++
	w.space()
	if w.data[w.pos] == closing {
		w.pos++
		return true
	}
	return false
}

// more passes over the ',' or closing (the '}' or ']' of the container)
// after a member or an element, and reports whether it was a ','.
func (w *walker) more(closing byte) bool {
	w.space()
	c := w.data[w.pos]
	w.pos++
	return c != closing
}

// caseVariant refuses name when it differs from one of names only by case.
func caseVariant(name string, names []string) *Error {
	for _, known := range names {
		if strings.EqualFold(name, known) {
			return &Error{
				Pointer: "/" + PointerToken(name),
				Reason:  fmt.Sprintf("unknown member %q: member names are case-sensitive (did you mean %q?)", name, known),
			}
		}
	}
	return nil
}

// name reads a member name, unescaping it into buf when it has escapes.
func (w *walker) name(buf []byte) []byte {
	start := w.pos
	w.skipString()
	raw := w.data[start:w.pos]
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return body
	}
	out, err := jsontext.AppendUnquote(buf, raw)
	if err != nil {
		return body
	}
	return out
}

func (w *walker) space() { w.pos = jsonscan.SkipSpace(w.data, w.pos) }

// skip passes over one value.
func (w *walker) skip() {
	switch w.data[w.pos] {
	case '"':
		w.skipString()
	case '{', '[':
		depth := 0
		for w.pos < len(w.data) {
			switch w.data[w.pos] {
			case '"':
				w.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					w.pos++
					return
				}
			}
			w.pos++
		}
	default: // a number or a literal
		for w.pos < len(w.data) {
			switch w.data[w.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			w.pos++
		}
	}
}

// skipString passes over a string, w.pos at its opening quote.
func (w *walker) skipString() {
	w.pos++
	for {
		i := bytes.IndexByte(w.data[w.pos:], '"')
		if i < 0 {
			w.pos = len(w.data)
			return
		}
		end := w.pos + i
		// The quote ends the string unless an odd number of backslashes
		// precedes it.
		n := 0
		for j := end - 1; j >= w.pos && w.data[j] == '\\'; j-- {
			n++
		}
		w.pos = end + 1
		if n%2 == 0 {
			return
		}
	}
}

// PointerToken escapes s as one reference token of a JSON Pointer (RFC
// 6901: "~" as "~0", "/" as "~1"), the form every error and violation path
// here takes.
func PointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
