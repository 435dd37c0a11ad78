// Package wirejson decodes MCP wire JSON exactly: member names match
// case-sensitively, a duplicate member name is an error at any depth, and
// strings must be valid UTF-8 (an escaped surrogate half must be paired).
// What one reader of a message sees, every reader sees. Errors name the JSON
// location (a JSON Pointer) and the JSON kind expected, never a Go type.
//
// Unknown members are ignored, with one exception: a member whose name
// differs only by case from a member of the target struct is refused, since
// a case-insensitive reader would take it for that member while this one
// would not.
package wirejson

import (
	"bytes"
	"encoding"
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Unmarshal decodes data into v strictly. Unknown members are ignored, except
// case variants of a struct's members (see the package documentation).
func Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return describe(err)
	}
	return checkCase(data, v)
}

// useNumber decodes a JSON number into an interface value as an
// encoding/json Number holding its exact text.
var useNumber = json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported // the default decoding
	}
	val, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*v = stdjson.Number(val)
	return nil
}))

// UnmarshalUseNumber is Unmarshal, except that a number decoded into an
// interface value (any, and the values of map[string]any and []any) becomes
// an encoding/json Number holding the number's text, so that it re-encodes
// exactly as it arrived.
func UnmarshalUseNumber(data []byte, v any) error {
	if err := json.Unmarshal(data, v, useNumber); err != nil {
		return describe(err)
	}
	return checkCase(data, v)
}

// Error is a decoding failure at a JSON location.
type Error struct {
	// Pointer is the JSON Pointer of the offending value ("" for the root).
	Pointer string
	// Reason says what is wrong, in JSON terms.
	Reason string

	// err is what a decoding method (UnmarshalJSON) of the target returned,
	// so that errors.As still finds it; nil for the decoder's own errors.
	err error
}

func (e *Error) Error() string {
	if e.Pointer == "" {
		return e.Reason
	}
	return fmt.Sprintf("at %s: %s", PointerShown(e.Pointer), e.Reason)
}

// PointerShown is a JSON Pointer as an error message shows it: its first
// 200 bytes and "…" when it is longer. A pointer into deeply nested input
// is as long as the nesting (20,000 characters at MaxDepth); its start
// locates, and the error keeps the whole pointer for a caller that wants it.
func PointerShown(p string) string {
	if len(p) > maxPointerShown {
		return p[:maxPointerShown] + "…"
	}
	return p
}

// maxPointerShown bounds the pointer an error message shows.
const maxPointerShown = 200

// MaxDepth is how deeply objects and arrays may nest in the JSON Unmarshal
// reads: the strict decoder's fixed limit. Deeper input is refused with an
// *Error whose reason says so.
const MaxDepth = 10000

// Unwrap returns the error a decoding method of the target returned, if the
// failure came from one.
func (e *Error) Unwrap() error { return e.err }

// describe turns a decoder error into an *Error.
func describe(err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) {
		ptr := string(se.JSONPointer)
		cause := se.Err
		if cause != nil && hasMethod(se.GoType) {
			// The target's own decoding method failed; a nested Unmarshal
			// there reported a location relative to the value it was given.
			var inner *Error
			if errors.As(cause, &inner) && inner == cause {
				return &Error{Pointer: ptr + inner.Pointer, Reason: inner.Reason, err: inner.err}
			}
			var innerSyn *jsontext.SyntacticError
			if errors.As(cause, &innerSyn) {
				return &Error{Pointer: ptr + string(innerSyn.JSONPointer), Reason: syntaxReason(innerSyn), err: cause}
			}
			reason := cause.Error()
			if reason == "JSON value must be string type" {
				reason = fmt.Sprintf("expected a string, got %s", jsonKind(se.JSONKind))
			}
			return &Error{Pointer: ptr, Reason: reason, err: cause}
		}
		return &Error{Pointer: ptr, Reason: semanticReason(se)}
	}
	var sy *jsontext.SyntacticError
	if errors.As(err, &sy) {
		return &Error{Pointer: string(sy.JSONPointer), Reason: syntaxReason(sy)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &Error{Reason: "unexpected end of input"}
	}
	return &Error{Reason: strings.TrimPrefix(err.Error(), "json: ")}
}

// semanticReason phrases a value that does not fit its target.
func semanticReason(se *json.SemanticError) string {
	want := "a different value"
	if se.GoType != nil {
		want = kindOf(se.GoType)
	}
	got := jsonKind(se.JSONKind)
	switch cause := se.Err; {
	case errors.Is(cause, strconv.ErrRange) && len(se.JSONValue) > 0:
		return fmt.Sprintf("%s is out of range for %s", shorten(se.JSONValue), want)
	case errors.Is(cause, strconv.ErrSyntax) && len(se.JSONValue) > 0:
		return fmt.Sprintf("expected %s, got %s", want, shorten(se.JSONValue))
	case isBase64Error(cause):
		return "expected a base64 string: " + cause.Error()
	case se.JSONKind != 0 && (cause == nil || se.GoType != nil):
		return fmt.Sprintf("expected %s, got %s", want, got)
	case cause != nil:
		return strings.TrimPrefix(cause.Error(), "json: ")
	}
	return "invalid value"
}

func isBase64Error(err error) bool {
	var ce base64.CorruptInputError
	return errors.As(err, &ce)
}

// syntaxReason phrases a syntax error; duplicate names are named.
func syntaxReason(sy *jsontext.SyntacticError) string {
	switch {
	case sy.Err == nil:
		return "invalid JSON"
	case errors.Is(sy.Err, jsontext.ErrDuplicateName):
		return fmt.Sprintf("duplicate member name %q", sy.JSONPointer.LastToken())
	case errors.Is(sy.Err, io.ErrUnexpectedEOF):
		return "unexpected end of input"
	case sy.Err.Error() == "invalid UTF-8":
		return "invalid UTF-8 in a string"
	case sy.Err.Error() == "exceeded max depth":
		return fmt.Sprintf("nested too deeply: objects and arrays may nest at most %d levels", MaxDepth)
	}
	// jsontext phrases the rest well ("invalid character 'x' after
	// top-level value", "invalid surrogate pair ... in string"); only a
	// package prefix is dropped.
	msg := sy.Err.Error()
	for _, p := range []string{"jsontext: ", "json: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// shorten returns a JSON number or string for a message, cut when long.
func shorten(v []byte) string {
	const max = 40
	if len(v) <= max {
		return string(v)
	}
	return string(v[:max]) + "…"
}

var (
	unmarshalerV1   = reflect.TypeFor[json.Unmarshaler]()
	unmarshalerFrom = reflect.TypeFor[json.UnmarshalerFrom]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsontextValue   = reflect.TypeFor[jsontext.Value]()
)

// hasMethod reports whether t decodes itself (an UnmarshalJSON,
// UnmarshalJSONFrom or UnmarshalText method), so an error for it came from
// its method.
func hasMethod(t reflect.Type) bool {
	if t == nil {
		return false
	}
	if t == jsontextValue {
		return false
	}
	pt := t
	if t.Kind() != reflect.Pointer {
		pt = reflect.PointerTo(t)
	}
	return pt.Implements(unmarshalerV1) || pt.Implements(unmarshalerFrom) || pt.Implements(textUnmarshaler)
}

func jsonKind(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "an invalid value"
}

// kindOf names the JSON kind a Go type decodes from.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	}
	return "a different value"
}

// Elements returns the elements of the JSON array in data, as slices of
// data. Everything is checked (syntax, UTF-8, nothing after the array)
// except that member names may repeat inside an element: each element is
// meant for its own Unmarshal, which refuses that and can say which element
// held it. Use it to decode a union array element by element.
func Elements(data []byte) ([][]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, describe(err)
	}
	if k := tok.Kind(); k != '[' {
		return nil, &Error{Reason: "expected an array, got " + jsonKind(k)}
	}
	var out [][]byte
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, describe(err)
		}
		end := dec.InputOffset()
		out = append(out, data[end-int64(len(v)):end:end])
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, describe(err)
	}
	switch _, err := dec.ReadToken(); {
	case err == nil:
		return nil, &Error{Reason: "unexpected data after the top-level value"}
	case err != io.EOF:
		return nil, describe(err)
	}
	return out, nil
}

// DiscardObject is a member that must be a JSON object (or null) and is
// read for its strictness only: Unmarshal checks it by every rule above
// (valid UTF-8, no member name twice at any depth) and keeps nothing, so a
// member the reader has no use for, such as the params._meta of a request
// whose _meta the server does not read, costs no memory however large it
// is. It refuses what a map[string]any member would refuse, with the same
// errors.
type DiscardObject struct{}

// UnmarshalJSONFrom reads one object or null, checking it, and keeps
// nothing.
func (*DiscardObject) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	// Read as a member decoded into a tree is read, with the same errors
	// for invalid input; the value stays in the decoder's buffer (for
	// Unmarshal, the input itself): nothing is copied.
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if k := v.Kind(); k != '{' && k != 'n' {
		return errors.New("expected an object, got " + jsonKind(k))
	}
	return nil
}
