package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// parseArgs builds a tool call's arguments from the command line: one JSON
// object, or key=value pairs typed by the tool's inputSchema, or as JSON
// when there is none (untypedValue); key:=JSON passes a raw JSON value. No
// arguments is an empty object.
func parseArgs(args []string, inputSchema json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if len(args) == 1 && strings.HasPrefix(strings.TrimSpace(args[0]), "{") {
		return parseJSONArg(args[0])
	}
	props, closed := schemaProps(inputSchema)
	out := map[string]json.RawMessage{}
	for _, a := range args {
		if raw, ok := strings.CutPrefix(a, "{"); ok && raw != "" {
			return nil, usageError{"a JSON object must be the only argument"}
		}
		key, value, isJSON := "", "", false
		if k, v, ok := strings.Cut(a, ":="); ok && !strings.Contains(k, "=") {
			key, value, isJSON = k, v, true
		} else if k, v, ok := strings.Cut(a, "="); ok {
			key, value = k, v
		} else {
			return nil, usageError{fmt.Sprintf("argument %q is neither key=value, key:=JSON nor a JSON object", a)}
		}
		if key == "" {
			return nil, usageError{fmt.Sprintf("argument %q has no key", a)}
		}
		if _, dup := out[key]; dup {
			return nil, usageError{fmt.Sprintf("argument %q is given twice", key)}
		}
		typ, known := props[key]
		if !known && closed {
			return nil, usageError{fmt.Sprintf("the tool has no parameter %q (parameters: %s)", key, strings.Join(sortedKeys(props), ", "))}
		}
		var raw json.RawMessage
		var err error
		if isJSON {
			raw, err = parseJSONArg(value)
			if err != nil {
				return nil, usageError{fmt.Sprintf("%s: %v", key, err)}
			}
		} else if inputSchema == nil {
			raw = untypedValue(value)
		} else if raw, err = typedValue(value, typ); err != nil {
			return nil, usageError{fmt.Sprintf("%s=%s: %v", key, value, err)}
		}
		out[key] = raw
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// untypedValue encodes a command-line value when no schema says its type
// (a tool the server does not list): a value that is JSON (3, true, null,
// "3", [1,2]) is sent as that JSON, any other as a string.
func untypedValue(v string) json.RawMessage {
	if raw, err := parseJSONArg(v); err == nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

// typedValue encodes a command-line value as the JSON type the schema asks
// for; without a declared type it is a string.
func typedValue(v string, types []string) (json.RawMessage, error) {
	if len(types) == 0 {
		return json.Marshal(v)
	}
	var errs []string
	for _, t := range types {
		switch t {
		case "string":
			return json.Marshal(v)
		case "integer":
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				return json.RawMessage(v), nil
			}
			errs = append(errs, "an integer")
		case "number":
			if _, err := strconv.ParseFloat(v, 64); err == nil && json.Valid([]byte(v)) {
				return json.RawMessage(v), nil
			}
			errs = append(errs, "a number")
		case "boolean":
			if b, err := strconv.ParseBool(v); err == nil {
				return json.Marshal(b)
			}
			errs = append(errs, "a boolean (true or false)")
		case "null":
			if v == "null" {
				return json.RawMessage("null"), nil
			}
			errs = append(errs, "null")
		case "object", "array":
			raw, err := parseJSONArg(v)
			if err == nil {
				return raw, nil
			}
			errs = append(errs, "a JSON "+t)
		}
	}
	if len(errs) == 0 {
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("want %s", strings.Join(errs, " or "))
}

// parseJSONArg parses a JSON value as a server reads one (exact member
// names, none twice, valid UTF-8, nothing after it), pointing at the error
// on a typo.
func parseJSONArg(s string) (json.RawMessage, error) {
	var v any
	err := wirejson.UnmarshalUseNumber([]byte(s), &v)
	if err == nil {
		var buf bytes.Buffer
		if cerr := json.Compact(&buf, []byte(s)); cerr != nil {
			return nil, cerr
		}
		return buf.Bytes(), nil
	}
	// The strict reader names a JSON location; for a line, a column and a
	// caret, the tokenizer it is built on finds the byte.
	if off, reason, ok := syntaxAt(s); ok {
		return nil, usageError{fmt.Sprintf("arguments: invalid JSON %s: %s", position(s, off+1), reason) + caret(s, off+1)}
	}
	return nil, usageError{fmt.Sprintf("arguments: invalid JSON: %v", err)}
}

// syntaxAt returns the byte offset of the first error in the JSON value s
// (nothing but whitespace may follow it), and what is wrong there.
func syntaxAt(s string) (off int, reason string, ok bool) {
	dec := jsontext.NewDecoder(strings.NewReader(s))
	_, err := dec.ReadValue()
	if err == nil {
		end := int(dec.InputOffset())
		rest := strings.TrimLeft(s[end:], " \t\r\n")
		if rest == "" {
			return 0, "", false
		}
		return len(s) - len(rest), "unexpected data after the JSON value", true
	}
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return 0, "", false
	}
	switch {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		reason = fmt.Sprintf("duplicate member name %q", se.JSONPointer.LastToken())
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		reason = "unexpected end of input"
	case se.Err != nil && se.Err.Error() == "invalid UTF-8":
		reason = "invalid UTF-8 in a string"
	case se.Err != nil:
		reason = se.Err.Error()
	default:
		reason = "invalid JSON"
	}
	return int(se.ByteOffset), reason, true
}

// position names the 1-based line and column of a byte offset; the decoder
// reports the offset just past the offending byte.
func position(s string, off int) string {
	off = min(max(off-1, 0), len(s))
	line := 1 + strings.Count(s[:off], "\n")
	col := off - strings.LastIndex(s[:off], "\n")
	return fmt.Sprintf("at line %d, column %d", line, col)
}

// caret shows the offending line with a ^ under the error.
func caret(s string, off int) string {
	off = min(max(off-1, 0), len(s))
	start := strings.LastIndex(s[:off], "\n") + 1
	end := strings.IndexByte(s[off:], '\n')
	if end < 0 {
		end = len(s)
	} else {
		end += off
	}
	return "\n  " + s[start:end] + "\n  " + strings.Repeat(" ", off-start) + "^"
}

// schemaProps returns each declared property's types, and whether the
// schema forbids others (additionalProperties: false).
func schemaProps(inputSchema json.RawMessage) (map[string][]string, bool) {
	var s struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	}
	props := map[string][]string{}
	if wirejson.Unmarshal(inputSchema, &s) != nil {
		return props, false
	}
	for name, raw := range s.Properties {
		props[name] = propTypes(raw)
	}
	return props, string(bytes.TrimSpace(s.AdditionalProperties)) == "false"
}

// propTypes reads a property's "type" (a string or a list), looking through
// a top-level anyOf/oneOf of types.
func propTypes(raw json.RawMessage) []string {
	var p struct {
		Type  json.RawMessage   `json:"type"`
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
		Enum  []any             `json:"enum"`
	}
	if wirejson.Unmarshal(raw, &p) != nil {
		return nil
	}
	var types []string
	var one string
	if wirejson.Unmarshal(p.Type, &one) == nil && one != "" {
		types = []string{one}
	} else {
		_ = wirejson.Unmarshal(p.Type, &types)
	}
	for _, sub := range append(p.AnyOf, p.OneOf...) {
		for _, t := range propTypes(sub) {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	// Try the most specific reading first; "string" always succeeds.
	sort.SliceStable(types, func(i, j int) bool { return typeRank(types[i]) < typeRank(types[j]) })
	return types
}

func typeRank(t string) int {
	switch t {
	case "null":
		return 0
	case "boolean":
		return 1
	case "integer":
		return 2
	case "number":
		return 3
	case "object", "array":
		return 4
	}
	return 5
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
