package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
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

// String renders the ID for logs and map keys: integers bare, strings quoted.
func (id ID) String() string {
	switch {
	case !id.set:
		return "null"
	case id.isStr:
		return strconv.Quote(id.str)
	default:
		return strconv.FormatInt(id.num, 10)
	}
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
	return id.appendJSON(nil), nil
}

func (id ID) appendJSON(b []byte) []byte {
	switch {
	case !id.set:
		return append(b, "null"...)
	case id.isStr:
		return strconv.AppendQuote(b, id.str)
	default:
		return strconv.AppendInt(b, id.num, 10)
	}
}

var errBadID = errors.New("id must be a string or an integer")

// UnmarshalJSON accepts a string or an integer; null, fractions, booleans,
// objects and arrays are rejected.
func (id *ID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errBadID
	}
	switch data[0] {
	case '"':
		if body, ok := plainJSONString(data); ok {
			*id = StringID(string(body))
			return nil
		}
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*id = StringID(s)
		return nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			// 1.0 or 1e3 are numbers but not integers MCP accepts.
			return errBadID
		}
		*id = Int64ID(n)
		return nil
	}
	return errBadID
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
