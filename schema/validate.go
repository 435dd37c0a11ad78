package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Dialect URIs toolwire validates with. A schema without "$schema" is 2020-12.
const (
	Draft2020 = "https://json-schema.org/draft/2020-12/schema"
	Draft2019 = "https://json-schema.org/draft/2019-09/schema"
	Draft07   = "http://json-schema.org/draft-07/schema#"
	Draft06   = "http://json-schema.org/draft-06/schema#"
	Draft04   = "http://json-schema.org/draft-04/schema#"
)

// UnsupportedDialectError reports a "$schema" toolwire cannot validate with.
type UnsupportedDialectError struct{ Dialect string }

func (e *UnsupportedDialectError) Error() string {
	return fmt.Sprintf("JSON Schema dialect %q is not supported (supported: 2020-12, 2019-09, draft-07, draft-06, draft-04)", e.Dialect)
}

// Schema is a compiled schema, ready to validate many values.
type Schema struct {
	raw      json.RawMessage
	dialect  string
	compiled *jsonschema.Schema
	doc      any
	plan     *plan // nil: values are validated as decoded trees
}

var printer = message.NewPrinter(language.English)

// refuseLoader refuses every external reference: schemas are compiled from
// what the tool declares, and network or file $refs are never dereferenced.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not dereferenced", url)
}

// dialectOf maps a "$schema" value to its dialect, or "" if unknown.
func dialectOf(s string) string {
	u := strings.TrimSuffix(s, "#")
	u, ok := strings.CutPrefix(u, "http://")
	if !ok {
		u, _ = strings.CutPrefix(u, "https://")
	}
	switch u {
	case "json-schema.org/draft/2020-12/schema", "json-schema.org/schema":
		return Draft2020
	case "json-schema.org/draft/2019-09/schema":
		return Draft2019
	case "json-schema.org/draft-07/schema":
		return Draft07
	case "json-schema.org/draft-06/schema":
		return Draft06
	case "json-schema.org/draft-04/schema":
		return Draft04
	}
	return ""
}

// Compile compiles a schema by its declared dialect (2020-12 when it declares
// none). An unknown dialect is an *UnsupportedDialectError.
func Compile(raw json.RawMessage) (*Schema, error) {
	// Schemas arrive over the wire too (proxied and generated tools): read
	// exactly, so a repeated keyword is refused rather than silently won by
	// its last copy.
	doc, err := DecodeValue(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	dialect := Draft2020
	switch d := doc.(type) {
	case map[string]any:
		if v, ok := d["$schema"]; ok {
			s, ok := v.(string)
			if !ok {
				return nil, errors.New(`"$schema" must be a string`)
			}
			if dialect = dialectOf(s); dialect == "" {
				return nil, &UnsupportedDialectError{Dialect: s}
			}
		}
	case bool:
	default:
		return nil, fmt.Errorf("schema must be an object or a boolean, not %s", jsonType(doc))
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	const loc = "urn:toolwire:schema"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	compiled, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return &Schema{raw: slices.Clone(raw), dialect: dialect, compiled: compiled, doc: doc, plan: newPlan(compiled, doc)}, nil
}

// Raw returns the schema document as declared.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Dialect returns the dialect URI the schema is validated with.
func (s *Schema) Dialect() string { return s.dialect }

// RootType returns the root "type" when it names one type ("object",
// "array", ...), or "" otherwise.
func (s *Schema) RootType() string {
	if m, ok := s.doc.(map[string]any); ok {
		if t, ok := m["type"].(string); ok {
			return t
		}
	}
	return ""
}

// Violation is one way a value fails a schema: where (a JSON Pointer into the
// value, "" for the root) and what was expected.
type Violation struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + v.Message
}

// ValidationError lists the violations of one validation: every one, or
// the first ones when Truncated (Check and ValidateJSON list a bounded
// number).
type ValidationError struct {
	Violations []Violation
	// Truncated is set when more violations were found than are listed.
	Truncated bool
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	msg := strings.Join(parts, "; ")
	if e.Truncated {
		msg += fmt.Sprintf("; and more (only the first %d violations are listed)", len(e.Violations))
	}
	return msg
}

// Validate checks a value decoded with DecodeValue (numbers as json.Number).
// It returns nil or a *ValidationError.
//
// A number whose exponent math/big refuses to expand (beyond about ±10^6),
// compared with a bound (minimum, maximum, multipleOf), cannot be validated:
// it is reported as one violation, ErrNumberRange, at the root, rather than
// crash the validator.
func (s *Schema) Validate(v any) error {
	return validateWith(s.compiled, v, "")
}

// validateWith validates v against sch, placing violations under prefix.
func validateWith(sch *jsonschema.Schema, v any, prefix string) (verr error) {
	defer func() {
		if recover() != nil {
			verr = &ValidationError{Violations: []Violation{{Path: prefix, Message: ErrNumberRange}}}
		}
	}()
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ValidationError{Violations: []Violation{{Path: prefix, Message: err.Error()}}}
	}
	var out []Violation
	collect(ve, &out)
	for i := range out {
		out[i].Path = prefix + out[i].Path
	}
	if len(out) == 0 {
		out = append(out, Violation{Path: prefix, Message: ve.Error()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return &ValidationError{Violations: out}
}

// ValidateJSON validates JSON text, read as DecodeValue reads it (with no
// defaults applied). It returns nil or a *ValidationError; JSON that
// DecodeValue refuses is one violation saying so. Like Check, it reads the
// text without building a tree when the schema allows.
func (s *Schema) ValidateJSON(data []byte) error {
	c, err := s.check(data, false, DefaultMaxViolations)
	if err != nil {
		return &ValidationError{Violations: []Violation{{Message: "not valid JSON: " + err.Error()}}}
	}
	if c.Invalid != nil {
		return c.Invalid
	}
	return nil
}

func collect(e *jsonschema.ValidationError, out *[]Violation) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, out)
		}
		return
	}
	leaf(pointer(e.InstanceLocation), e.ErrorKind, out)
}

// leaf records one violation found at path.
func leaf(path string, k jsonschema.ErrorKind, out *[]Violation) {
	switch k := k.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, Violation{Path: path + "/" + wirejson.PointerToken(m), Message: "required property is missing"})
		}
		return
	case *kind.Type:
		*out = append(*out, Violation{Path: path, Message: fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got)})
		return
	}
	*out = append(*out, Violation{Path: path, Message: k.LocalizedString(printer)})
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(wirejson.PointerToken(t))
	}
	return b.String()
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "number"
}
