// Package schema infers JSON Schemas from Go types and validates JSON values
// against schemas of the dialects MCP allows (2020-12 by default, draft-07 and
// the other drafts on request through "$schema").
//
// # Portable roots, nullable fields
//
// An inferred schema's root "type" is always one string, never a type array,
// because MCP clients decode a tool's inputSchema and outputSchema root as an
// object schema with a string "type" (mcp-go cannot read a tools/list with
// "type": ["null","object"] at a root at all, and a 2025-11-25 client sees an
// outputSchema only when its root is an object). So at the root:
//
//   - a pointer (*T, **T) is the schema of T: a tool that outputs *T outputs
//     a T, and a nil value is a tool-side decision (the server refuses it
//     as output that breaks its outputSchema), not a schema type;
//   - a slice is {"type": "array", "items": ...}: the server encodes a nil
//     slice output as [], never null.
//
// Below the root, properties and items keep the form github.com/google/jsonschema-go
// (the inference go-sdk publishes) gives them: a pointer or slice field is
// "type": ["null", T], since encoding/json writes a nil one as null when the
// field has no omitempty. A type array inside "properties" or "items" is
// plain JSON Schema in every dialect MCP allows, and the clients toolwire is
// tested against (go-sdk, mcp-go, the TypeScript SDK) read it: they keep
// nested schemas as generic JSON.
package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// For infers the schema of T. Struct fields become properties named as
// encoding/json names them; a field without omitempty or omitzero is
// required. Tags refine a property:
//
//	jsonschema:"text"   the property's description
//	enum:"a,b,c"        allowed values (parsed as the field's type)
//	default:"v"         the default value, applied to absent arguments
func For[T any]() (json.RawMessage, error) {
	return ForType(reflect.TypeFor[T]())
}

// ForType is For for a reflect.Type.
func ForType(t reflect.Type) (json.RawMessage, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		return nil, fmt.Errorf("schema: infer from %s: %w", t, err)
	}
	portableRoot(t, s)
	if err := applyTags(t, s, map[reflect.Type]bool{}); err != nil {
		return nil, fmt.Errorf("schema: infer from %s: %w", t, err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema: encode schema of %s: %w", t, err)
	}
	return raw, nil
}

// portableRoot removes "null" from the root type array that jsonschema-go
// infers for a pointer or a slice, leaving one type: a nil root value is not
// part of the schema (see the package documentation).
func portableRoot(t reflect.Type, s *jsonschema.Schema) {
	if k := t.Kind(); k != reflect.Pointer && k != reflect.Slice {
		return
	}
	if len(s.Types) == 0 {
		return
	}
	types := make([]string, 0, len(s.Types))
	for _, ty := range s.Types {
		if ty != "null" {
			types = append(types, ty)
		}
	}
	switch len(types) {
	case 0:
		// Only null: leave such a schema as it was given.
	case 1:
		s.Type, s.Types = types[0], nil
	default:
		s.Types = types
	}
}

// applyTags walks struct fields alongside their inferred property schemas and
// adds enum and default from struct tags.
func applyTags(t reflect.Type, s *jsonschema.Schema, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTags(t.Elem(), s.Items, seen)
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties, seen)
	case reflect.Struct:
	default:
		return nil
	}
	if seen[t] {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, skip := jsonName(f)
		if skip {
			continue
		}
		if f.Anonymous && name == "" {
			if err := applyTags(f.Type, s, seen); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if tag, ok := f.Tag.Lookup("enum"); ok {
			for _, part := range strings.Split(tag, ",") {
				v, err := parseTagValue(ft, strings.TrimSpace(part))
				if err != nil {
					return fmt.Errorf("field %s: enum value %q: %w", f.Name, part, err)
				}
				ps.Enum = append(ps.Enum, v)
			}
		}
		if tag, ok := f.Tag.Lookup("default"); ok {
			v, err := parseTagValue(ft, tag)
			if err != nil {
				return fmt.Errorf("field %s: default %q: %w", f.Name, tag, err)
			}
			raw, _ := json.Marshal(v)
			ps.Default = raw
		}
		if err := applyTags(f.Type, ps, seen); err != nil {
			return err
		}
	}
	return nil
}

func jsonName(f reflect.StructField) (name string, skip bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", true
	}
	name, _, _ = strings.Cut(tag, ",")
	if name == "" && f.Anonymous {
		return "", false
	}
	return name, false
}

// parseTagValue reads a tag value as a value of kind t: numbers and booleans
// are parsed, strings taken as they are, anything else read as JSON.
func parseTagValue(t reflect.Type, s string) (any, error) {
	switch t.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Bool:
		return strconv.ParseBool(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.ParseInt(s, 10, 64)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.ParseUint(s, 10, 64)
	case reflect.Float32, reflect.Float64:
		return strconv.ParseFloat(s, 64)
	}
	var v any
	if err := wirejson.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("not valid JSON for a %s: %w", t, err)
	}
	return v, nil
}
