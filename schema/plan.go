package schema

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A plan is what checking JSON on its raw bytes needs of one compiled
// schema: the keywords that apply at one instance location, in a form the
// walker (check.go) can test without a decoded value. Plans exist for the
// schemas whose every keyword is local to the value it applies to (type,
// enum, const, properties, required, additionalProperties, items, the
// counts, lengths and bounds, pattern, format): such a schema never needs
// the whole value at once, so a value is checked as it is read and nothing
// is built. A schema using anything else (references, combinators,
// conditionals, uniqueItems, contains, unevaluated*, pattern or dependent
// properties, tuples, content keywords, vocabulary extensions) is a tree
// plan: the value it applies to, and that value alone, is decoded into a
// tree for the validator, as a whole value is when the root schema is such
// a schema (newPlan returns nil).
type plan struct {
	sch   *jsonschema.Schema // the compiled schema; the validator's reference
	never bool               // the false schema: no value is valid
	tree  bool               // validated as a decoded tree, by the validator
	doc   any                // for a tree plan, its document when defaults apply to it

	types     typeSet  // 0: any type
	typeNames []string // the "type" keyword's types, as the validator names them

	// Scalars. scalarKeywords is set when a scalar must be tested against
	// anything besides its type.
	scalarKeywords bool
	enum           *valueSet // enum, or const as a one-value set; nil for none
	constToo       *valueSet // const, when both enum and const are present
	minimum        *big.Rat
	maximum        *big.Rat
	exclusiveMin   *big.Rat
	exclusiveMax   *big.Rat
	multipleOf     *big.Rat
	minLength      int // -1: none
	maxLength      int // -1: none
	pattern        jsonschema.Regexp
	format         *jsonschema.Format

	// Objects.
	props        map[string]*plan
	additional   *plan // the additionalProperties schema; nil for none
	noAdditional bool  // additionalProperties: false
	required     []string
	minProps     int // -1: none
	maxProps     int // -1: none
	defaults     []propDefault

	// Arrays.
	items    *plan // nil: items are not checked
	minItems int   // -1: none
	maxItems int   // -1: none
}

// propDefault is a property's "default", applied where the property is
// absent (ApplyDefaults' rule: along "properties" from the root only).
type propDefault struct {
	name   string
	member []byte // `"name":value`, as json.Marshal writes them
	value  []byte // the value alone
}

// typeSet holds JSON types as bits.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeBits = map[string]typeSet{
	"null": tNull, "boolean": tBoolean, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

// valueSet is an enum's scalar values, ready for comparison with a value
// read from the input. Objects and arrays never equal a scalar.
type valueSet struct {
	strings                    map[string]bool
	numbers                    []*big.Rat
	hasTrue, hasFalse, hasNull bool
}

// maxPlanNodes bounds the work of planning a schema; a larger schema is
// validated through a decoded tree.
const maxPlanNodes = 10000

// newPlan returns the plan of a compiled schema, or nil when the schema
// needs a decoded tree (see plan). doc is the schema document, for the
// defaults ApplyDefaults would apply.
func newPlan(sch *jsonschema.Schema, doc any) *plan {
	budget := maxPlanNodes
	p, ok := buildPlan(sch, doc, &budget)
	if !ok || p.tree {
		return nil
	}
	return p
}

// buildPlan plans sch; doc is the schema's document when the location is
// reached from the root through "properties" alone (where defaults apply),
// and nil otherwise.
func buildPlan(s *jsonschema.Schema, doc any, budget *int) (*plan, bool) {
	if *budget--; *budget < 0 || s == nil {
		return nil, false
	}
	p := &plan{sch: s, minLength: -1, maxLength: -1, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1}
	if s.Bool != nil {
		p.never = !*s.Bool
		return p, true
	}
	if s.Ref != nil || s.RecursiveRef != nil || s.DynamicRef != nil || s.Not != nil ||
		len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.If != nil || s.Then != nil || s.Else != nil ||
		s.PropertyNames != nil || len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 ||
		len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil ||
		s.UniqueItems || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil ||
		len(s.PrefixItems) > 0 || s.AdditionalItems != nil || s.UnevaluatedItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil || len(s.Extensions) > 0 {
		return treePlan(s, doc, budget)
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		p.typeNames = s.Types.ToStrings()
		for _, t := range p.typeNames {
			p.types |= typeBits[t]
		}
	}
	if s.Enum != nil || s.Const != nil {
		// A container compared with an enum needs its decoded value; with
		// "type" ruling containers out, the type check fails first.
		if p.types == 0 || p.types&(tObject|tArray) != 0 {
			return treePlan(s, doc, budget)
		}
		if s.Enum != nil {
			p.enum = newValueSet(s.Enum.Values)
		}
		if s.Const != nil {
			c := newValueSet([]any{*s.Const})
			if p.enum == nil {
				p.enum = c
			} else {
				p.constToo = c
			}
		}
	}
	p.minimum, p.maximum = s.Minimum, s.Maximum
	p.exclusiveMin, p.exclusiveMax, p.multipleOf = s.ExclusiveMinimum, s.ExclusiveMaximum, s.MultipleOf
	p.pattern, p.format = s.Pattern, s.Format
	if s.MinLength != nil {
		p.minLength = *s.MinLength
	}
	if s.MaxLength != nil {
		p.maxLength = *s.MaxLength
	}
	p.scalarKeywords = p.enum != nil || p.minimum != nil || p.maximum != nil || p.exclusiveMin != nil ||
		p.exclusiveMax != nil || p.multipleOf != nil || p.minLength >= 0 || p.maxLength >= 0 ||
		p.pattern != nil || p.format != nil

	var docProps map[string]any
	if m, ok := doc.(map[string]any); ok {
		docProps, _ = m["properties"].(map[string]any)
	}
	if len(s.Properties) > 0 {
		p.props = make(map[string]*plan, len(s.Properties))
		for name, sub := range s.Properties {
			var subDoc any
			if docProps != nil {
				subDoc = docProps[name]
			}
			sp, ok := buildPlan(sub, subDoc, budget)
			if !ok {
				return nil, false
			}
			p.props[name] = sp
		}
	}
	for name, d := range docProps {
		ps, ok := d.(map[string]any)
		if !ok {
			continue
		}
		def, has := ps["default"]
		if !has {
			continue
		}
		qname, err := json.Marshal(name)
		if err != nil {
			return nil, false
		}
		value, err := json.Marshal(def)
		if err != nil {
			return nil, false
		}
		member := append(append(qname, ':'), value...)
		p.defaults = append(p.defaults, propDefault{name: name, member: member, value: value})
	}
	slices.SortFunc(p.defaults, func(a, b propDefault) int { return strings.Compare(a.name, b.name) })
	switch a := s.AdditionalProperties.(type) {
	case bool:
		p.noAdditional = !a
	case *jsonschema.Schema:
		sp, ok := buildPlan(a, nil, budget)
		if !ok {
			return nil, false
		}
		p.additional = sp
	}
	p.required = s.Required
	if s.MinProperties != nil {
		p.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		p.maxProps = *s.MaxProperties
	}

	items := s.Items2020
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		items = it
	case nil:
	default: // a tuple ([]*Schema)
		return nil, false
	}
	if items != nil {
		sp, ok := buildPlan(items, nil, budget)
		if !ok {
			return nil, false
		}
		p.items = sp
	}
	if s.MinItems != nil {
		p.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		p.maxItems = *s.MaxItems
	}
	return p, true
}

// treePlan is the plan of a schema the walker cannot apply: the validator
// validates the value under it as a tree, by itself, which is the same as in
// place unless the schema reaches a dynamic reference (those depend on the
// schemas around it: then there is no plan at all).
func treePlan(s *jsonschema.Schema, doc any, budget *int) (*plan, bool) {
	if dynamic(s, map[*jsonschema.Schema]bool{}, budget) {
		return nil, false
	}
	return &plan{sch: s, tree: true, doc: doc}, true
}

// dynamic reports whether s reaches a $dynamicRef or $recursiveRef (or is
// too large to tell).
func dynamic(s *jsonschema.Schema, seen map[*jsonschema.Schema]bool, budget *int) bool {
	if s == nil || seen[s] {
		return false
	}
	if *budget--; *budget < 0 {
		return true
	}
	seen[s] = true
	if s.DynamicRef != nil || s.RecursiveRef != nil {
		return true
	}
	subs := []*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else, s.PropertyNames, s.UnevaluatedProperties,
		s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema}
	subs = append(subs, s.AllOf...)
	subs = append(subs, s.AnyOf...)
	subs = append(subs, s.OneOf...)
	subs = append(subs, s.PrefixItems...)
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.DependentSchemas} {
		for _, sub := range m {
			subs = append(subs, sub)
		}
	}
	for _, sub := range s.PatternProperties {
		subs = append(subs, sub)
	}
	for _, d := range s.Dependencies {
		if sub, ok := d.(*jsonschema.Schema); ok {
			subs = append(subs, sub)
		}
	}
	for _, a := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch a := a.(type) {
		case *jsonschema.Schema:
			subs = append(subs, a)
		case []*jsonschema.Schema:
			subs = append(subs, a...)
		}
	}
	for _, sub := range subs {
		if dynamic(sub, seen, budget) {
			return true
		}
	}
	return false
}

func newValueSet(values []any) *valueSet {
	vs := &valueSet{}
	for _, v := range values {
		switch v := v.(type) {
		case string:
			if vs.strings == nil {
				vs.strings = map[string]bool{}
			}
			vs.strings[v] = true
		case json.Number:
			if r, ok := new(big.Rat).SetString(string(v)); ok {
				vs.numbers = append(vs.numbers, r)
			}
		case bool:
			if v {
				vs.hasTrue = true
			} else {
				vs.hasFalse = true
			}
		case nil:
			vs.hasNull = true
		}
	}
	return vs
}

// allows reports whether the "type" keyword admits t.
func (p *plan) allows(t typeSet) bool { return p.types == 0 || p.types&t != 0 }
