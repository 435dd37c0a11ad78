package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// MaxDepth bounds nesting: at most this many objects and arrays may be open
// at once in the JSON DecodeValue and Check read (the value's own outermost
// object counting as one), as in the strict decoder the wire is read with,
// so hostile input cannot exhaust the stack. Deeper input is a *DecodeError
// saying so.
const MaxDepth = 10000

// DecodeError is input DecodeValue refuses: where (a JSON Pointer to the
// offending value or member, and a byte offset) and why.
type DecodeError struct {
	// Path is the JSON Pointer of the offending value ("" for the root);
	// for a duplicate member name, the pointer of that member.
	Path string
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Reason says what is wrong.
	Reason string
}

func (e *DecodeError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("invalid JSON at %s (offset %d): %s", wirejson.PointerShown(e.Path), e.Offset, e.Reason)
}

// DecodeValue decodes JSON the way the validator expects: objects as
// map[string]any, arrays as []any, numbers as json.Number (exact), strings,
// booleans and nil. It is strict, so that the arguments a tool validates are
// the arguments any other reader of the message sees: a member name that
// appears twice in one object (compared after unescaping) and invalid UTF-8
// (including an unpaired surrogate escape) are refused, at any depth, with a
// *DecodeError carrying the path. It accepts what
// github.com/go-json-experiment/json accepts by default, with fewer
// allocations: this runs on every tool call.
func DecodeValue(data []byte) (any, error) {
	d := valueDecoder{data: data}
	d.space()
	v, err := d.value(0)
	if err == nil {
		d.space()
		if d.pos != len(d.data) {
			err = d.fail("unexpected data after the top-level value")
		}
	}
	if err != nil {
		return nil, err.done()
	}
	return v, nil
}

type valueDecoder struct {
	data    []byte
	pos     int
	scratch []byte // unescaped strings, reused
}

// decodeError is a DecodeError under construction: the path's tokens are
// gathered innermost first as the error travels out of the nesting.
type decodeError struct {
	tokens []string
	offset int
	reason string
}

func (e *decodeError) at(token string) *decodeError {
	e.tokens = append(e.tokens, token)
	return e
}

func (e *decodeError) done() *DecodeError {
	slices.Reverse(e.tokens)
	return &DecodeError{Path: pointer(e.tokens), Offset: e.offset, Reason: e.reason}
}

func (d *valueDecoder) fail(format string, args ...any) *decodeError {
	return &decodeError{offset: d.pos, reason: fmt.Sprintf(format, args...)}
}

func (d *valueDecoder) space() { d.pos = jsonscan.SkipSpace(d.data, d.pos) }

// value reads one value; depth is the number of objects and arrays open
// around it.
func (d *valueDecoder) value(depth int) (any, *decodeError) {
	if d.pos >= len(d.data) {
		return nil, d.fail("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return nil, d.fail("nested too deeply (more than %d levels)", MaxDepth)
		}
		if c == '{' {
			return d.object(depth)
		}
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
		return nil, d.fail("unexpected character %q", c)
	}
}

func (d *valueDecoder) literal(word string) *decodeError {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.fail("invalid literal, want %s", word)
	}
	d.pos += len(word)
	return nil
}

func (d *valueDecoder) object(depth int) (any, *decodeError) {
	m := map[string]any{}
	if d.open('}') {
		return m, nil
	}
	for {
		keyAt := d.pos
		_, name, err := d.memberName()
		if err != nil {
			return nil, err
		}
		k := string(name)
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err.at(k)
		}
		n := len(m)
		if m[k] = v; len(m) == n {
			return nil, (&decodeError{offset: keyAt, reason: fmt.Sprintf("duplicate member name %q", k)}).at(k)
		}
		more, err := d.more('}', "an object")
		if err != nil {
			return nil, err
		}
		if !more {
			return m, nil
		}
	}
}

func (d *valueDecoder) array(depth int) (any, *decodeError) {
	a := []any{}
	if d.open(']') {
		return a, nil
	}
	for {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err.at(strconv.Itoa(len(a)))
		}
		a = append(a, v)
		more, err := d.more(']', "an array")
		if err != nil {
			return nil, err
		}
		if !more {
			return a, nil
		}
	}
}

// open passes over the '{' or '[' at d.pos and the white space after it,
// and reports whether closing (its '}' or ']') follows at once, passing over
// that too: the container is empty. Otherwise d is at its first member or
// element.
func (d *valueDecoder) open(closing byte) (empty bool) {
	d.pos++
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == closing {
		d.pos++
		return true
	}
	return false
}

// memberName reads an object member's name and the colon after it, white
// space around them included, leaving d at the member's value. raw and name
// are as strSpan returns them.
func (d *valueDecoder) memberName() (raw, name []byte, _ *decodeError) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, nil, d.fail("want an object key")
	}
	raw, name, err := d.strSpan()
	if err != nil {
		return nil, nil, err
	}
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != ':' {
		return nil, nil, d.fail("want ':' after an object key")
	}
	d.pos++
	d.space()
	return raw, name, nil
}

// more reads what follows a member of an object or an element of an array
// (what names which, for errors), white space first: a ',' (more is true,
// and d is at the next member or element) or closing, its '}' or ']' (more
// is false). Anything else is an error, with more false.
func (d *valueDecoder) more(closing byte, what string) (more bool, _ *decodeError) {
	d.space()
	if d.pos >= len(d.data) {
		return false, d.fail("unexpected end of input in %s", what)
	}
	switch d.data[d.pos] {
	case ',':
		d.pos++
		d.space()
		return true, nil
	case closing:
		d.pos++
		return false, nil
	}
	return false, d.fail("want ',' or '%c' in %s", closing, what)
}

// str reads a string.
func (d *valueDecoder) str() (string, *decodeError) {
	_, s, err := d.strSpan()
	return string(s), err
}

// strSpan reads a string without making a Go string of it: raw is the
// quoted string as it is in the input, s its contents unescaped (a slice of
// the input when there is no escape, of d.scratch otherwise, valid until
// the next call). Strings without escapes are sliced directly once their
// UTF-8 is checked; anything else is unescaped by jsontext, which refuses
// invalid UTF-8 and unpaired surrogate escapes.
func (d *valueDecoder) strSpan() (raw, s []byte, _ *decodeError) {
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
					return raw, body, nil
				}
				return nil, nil, &decodeError{offset: start + 1 + invalidUTF8At(body), reason: "invalid UTF-8 in a string"}
			}
			s, err := jsontext.AppendUnquote(d.scratch[:0], raw)
			if err != nil {
				return nil, nil, &decodeError{offset: start, reason: "invalid string: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
			}
			d.scratch = s
			return raw, s, nil
		case c == '\\':
			simple = false
			d.pos += 2
		case c < 0x20:
			return nil, nil, d.fail("control character in a string")
		default:
			d.pos++
		}
	}
	return nil, nil, &decodeError{offset: len(d.data), reason: "unterminated string"}
}

// invalidUTF8At returns the offset of the first invalid UTF-8 in b.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// number reads a number as a json.Number holding its text.
func (d *valueDecoder) number() (any, *decodeError) {
	raw, err := d.numberSpan()
	if err != nil {
		return nil, err
	}
	return json.Number(raw), nil
}

// numberSpan reads a number, checking JSON's grammar (jsonscan.Number),
// and returns its text.
func (d *valueDecoder) numberSpan() ([]byte, *decodeError) {
	start := d.pos
	end, why := jsonscan.Number(d.data, d.pos)
	d.pos = end
	if why != "" {
		return nil, d.fail("%s", why)
	}
	return d.data[start:end], nil
}
