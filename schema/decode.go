package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// maxDepth bounds nesting, as encoding/json does, so hostile input cannot
// exhaust the stack.
const maxDepth = 10000

// DecodeValue decodes JSON the way the validator expects: objects as
// map[string]any, arrays as []any, numbers as json.Number (exact), strings,
// booleans and nil. It gives the same values and accepts the same inputs as
// encoding/json with UseNumber, with fewer allocations: this runs on every
// tool call.
func DecodeValue(data []byte) (any, error) {
	d := valueDecoder{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.pos != len(d.data) {
		return nil, d.errorf("unexpected data after the top-level value")
	}
	return v, nil
}

type valueDecoder struct {
	data []byte
	pos  int
}

func (d *valueDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *valueDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *valueDecoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.errorf("nested too deeply")
	}
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	default:
		return nil, d.errorf("unexpected character %q", c)
	}
}

func (d *valueDecoder) literal(word string) error {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.errorf("invalid literal, want %s", word)
	}
	d.pos += len(word)
	return nil
}

func (d *valueDecoder) object(depth int) (any, error) {
	d.pos++ // {
	m := map[string]any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return m, nil
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("want an object key")
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("want ':' after an object key")
		}
		d.pos++
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.space()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input in an object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return m, nil
		default:
			return nil, d.errorf("want ',' or '}' in an object")
		}
	}
}

func (d *valueDecoder) array(depth int) (any, error) {
	d.pos++ // [
	a := []any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return a, nil
	}
	for {
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.space()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input in an array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return a, nil
		default:
			return nil, d.errorf("want ',' or ']' in an array")
		}
	}
}

// str reads a string. Plain ASCII-or-valid-UTF-8 strings without escapes
// are sliced directly; anything else goes through encoding/json, whose
// unescaping (surrogate pairs, invalid UTF-8 to U+FFFD) is the reference.
func (d *valueDecoder) str() (string, error) {
	start := d.pos
	d.pos++ // opening quote
	simple := true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			raw := d.data[start:d.pos]
			if simple {
				body := raw[1 : len(raw)-1]
				if utf8.Valid(body) {
					return string(body), nil
				}
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", d.errorf("invalid string: %v", err)
			}
			return s, nil
		case c == '\\':
			simple = false
			d.pos += 2
		case c < 0x20:
			return "", d.errorf("control character in a string")
		default:
			d.pos++
		}
	}
	return "", errors.New("invalid JSON: unterminated string")
}

// number reads a number, checking JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *valueDecoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if digits() == 0 {
		return nil, d.errorf("invalid number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return nil, d.errorf("invalid number: no digits after '.'")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return nil, d.errorf("invalid number: no digits in the exponent")
		}
	}
	return json.Number(d.data[start:d.pos]), nil
}
