package jsonrpc

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/jsonstr"
)

// ID identifies a request. MCP allows strings and integers, never null; the zero
// ID is "absent", which marks a notification or an error reply to an
// unidentifiable request.
type ID struct {
	str   string
	num   int64
	isStr bool
	set   bool
}

// StringID returns an ID holding a string.
func StringID(s string) ID { return ID{str: s, isStr: true, set: true} }

// Int64ID returns an ID holding an integer.
func Int64ID(n int64) ID { return ID{num: n, set: true} }

// IsValid reports whether the ID is present.
func (id ID) IsValid() bool { return id.set }

// IsString reports whether the ID holds a string.
func (id ID) IsString() bool { return id.isStr }

// Int returns the integer value (0 for a string ID).
func (id ID) Int() int64 { return id.num }

// Str returns the string value ("" for an integer ID).
func (id ID) Str() string { return id.str }

// String renders the ID as a reply carries it, in JSON: an integer, a
// string (quoted and escaped as JSON), or null for an absent ID.
func (id ID) String() string {
	var buf [64]byte
	return string(id.appendJSON(buf[:0]))
}

// Value returns the ID as a Go value (string, int64 or nil).
func (id ID) Value() any {
	switch {
	case !id.set:
		return nil
	case id.isStr:
		return id.str
	default:
		return id.num
	}
}

// MarshalJSON writes a string, an integer, or null for an absent ID.
func (id ID) MarshalJSON() ([]byte, error) {
	n := 20 // the longest integer, -9223372036854775808
	if id.isStr {
		n = len(id.str) + 2 // more only if characters need escaping
	}
	return id.appendJSON(make([]byte, 0, n)), nil
}

// appendJSON appends the ID as JSON. A string ID is a JSON string that
// decodes to the ID itself, whatever characters it holds (an ID read from
// a message is valid UTF-8; a byte of a StringID that is not is written as
// U+FFFD, which JSON can spell).
func (id ID) appendJSON(b []byte) []byte {
	switch {
	case !id.set:
		return append(b, "null"...)
	case id.isStr:
		return jsonstr.Append(b, id.str)
	default:
		return strconv.AppendInt(b, id.num, 10)
	}
}

// idError is the refusal of an id that is neither a string nor an integer.
type idError struct{ problem string }

func (e *idError) Error() string {
	return "id must be a string or an integer, not " + e.problem
}

// UnmarshalJSON accepts a string or an integer; null, fractions, exponents,
// integers beyond 64 bits, booleans, objects and arrays are rejected with an
// error saying which.
func (id *ID) UnmarshalJSON(data []byte) error {
	v, problem := parseID(data)
	if problem != "" {
		return &idError{problem}
	}
	*id = v
	return nil
}

// parseID reads an id, a string or an integer. When the value is neither,
// problem says what it is instead: "null", "a boolean", "a fraction (1.5)",
// and so on. It allocates only for a string id (and when refusing a number).
func parseID(data []byte) (id ID, problem string) {
	data = trimJSONSpace(data)
	if len(data) == 0 {
		return ID{}, "empty"
	}
	switch data[0] {
	case '"':
		if body, ok := plainJSONString(data); ok {
			return StringID(string(body)), ""
		}
		s, err := jsontext.AppendUnquote(nil, data)
		if err != nil {
			return ID{}, "an invalid string"
		}
		return StringID(string(s)), ""
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if n, ok := jsonscan.Int64(data); ok {
			return Int64ID(n), ""
		}
		return ID{}, describeNumber(data)
	case 't', 'f':
		return ID{}, "a boolean"
	case 'n':
		return ID{}, "null"
	case '{':
		return ID{}, "an object"
	case '[':
		return ID{}, "an array"
	}
	return ID{}, "an invalid value"
}

// describeNumber says why a JSON number is not an id MCP accepts.
func describeNumber(b []byte) string {
	shown := string(b)
	if len(shown) > 32 {
		shown = shown[:32] + "…"
	}
	switch {
	case bytes.IndexByte(b, '.') >= 0:
		return fmt.Sprintf("a fraction (%s)", shown)
	case bytes.ContainsAny(b, "eE"):
		return fmt.Sprintf("a number with an exponent (%s)", shown)
	}
	for _, c := range b[1:] {
		if c < '0' || c > '9' {
			return fmt.Sprintf("an invalid number (%s)", shown)
		}
	}
	return fmt.Sprintf("an integer beyond 64 bits (%s)", shown)
}

func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// plainJSONString returns the contents of a quoted JSON string that needs no
// unescaping: no backslash, no control character, valid UTF-8.
func plainJSONString(data []byte) ([]byte, bool) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return nil, false
	}
	body := data[1 : len(data)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			return nil, false
		}
	}
	return body, utf8.Valid(body)
}
