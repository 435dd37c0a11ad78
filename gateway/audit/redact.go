package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolwire/toolwire/internal/jsonstr"
)

// Redacted replaces the value of a redacted key.
const Redacted = "[redacted]"

// MaxRedactDepth bounds the nesting of arguments Redact rewrites; deeper
// input is treated like invalid JSON.
const MaxRedactDepth = 512

// Redact returns args, which should be JSON text, made fit for the audit
// trail: the value of every object member whose name equals one of keys
// (case-insensitively, at any depth, in arrays too, whatever the value's
// type) becomes the string "[redacted]", and every string value longer than
// maxValueBytes bytes (0 or less: no limit) is cut at a UTF-8 boundary and
// ends with "…[truncated N bytes]", N being its full length. Member names,
// their order, numbers (verbatim) and literals are kept; insignificant
// whitespace is dropped, and an invalid UTF-8 byte in a string becomes
// U+FFFD.
//
// The result is always valid JSON, or nil for empty args. Input that is not
// one valid JSON value (or nests deeper than MaxRedactDepth) is never
// passed through, since it could hold a secret Redact cannot find: it
// becomes the JSON string "[invalid JSON arguments: N bytes]".
func Redact(args json.RawMessage, keys []string, maxValueBytes int) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	if out, ok := unchanged(args, keys, maxValueBytes); ok {
		return out
	}
	out, err := redact(args, keys, maxValueBytes)
	if err != nil {
		return marker(fmt.Sprintf("[invalid JSON arguments: %d bytes]", len(args)))
	}
	return out
}

var errTooDeep = errors.New("audit: arguments nest too deeply")

func redact(args []byte, keys []string, max int) ([]byte, error) {
	// The strict reader's tokenizer: names exact after unescaping, none
	// twice in an object, valid UTF-8, as the gateway read the arguments.
	dec := jsontext.NewDecoder(bytes.NewReader(args))
	rd := &redactor{dec: dec, keys: keys, max: max, out: make([]byte, 0, len(args))}
	if err := rd.value(0); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("audit: data after the JSON value")
	}
	// A last check, cheap next to the decoding: whatever the decoder let
	// through, invalid output is never returned.
	if !json.Valid(rd.out) {
		return nil, errors.New("audit: invalid JSON")
	}
	return rd.out, nil
}

type redactor struct {
	dec  *jsontext.Decoder
	keys []string
	max  int
	out  []byte
}

func (rd *redactor) secret(name string) bool {
	for _, k := range rd.keys {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// value copies one JSON value from the decoder to out.
func (rd *redactor) value(depth int) error {
	switch rd.dec.PeekKind() {
	case '{', '[':
		if depth >= MaxRedactDepth {
			return errTooDeep
		}
	default:
		return rd.scalar()
	}
	tok, err := rd.dec.ReadToken()
	if err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	switch tok.Kind() {
	case '{':
		rd.out = append(rd.out, '{')
		for i := 0; rd.dec.PeekKind() != '}'; i++ {
			if i > 0 {
				rd.out = append(rd.out, ',')
			}
			kt, err := rd.dec.ReadToken()
			if err != nil {
				return err
			}
			name := kt.String()
			rd.out = jsonstr.Append(rd.out, name)
			rd.out = append(rd.out, ':')
			if rd.secret(name) {
				if err := rd.dec.SkipValue(); err != nil {
					return err
				}
				rd.out = jsonstr.Append(rd.out, Redacted)
				continue
			}
			if err := rd.value(depth + 1); err != nil {
				return err
			}
		}
		if _, err := rd.dec.ReadToken(); err != nil {
			return errors.New("audit: unterminated object")
		}
		rd.out = append(rd.out, '}')
	case '[':
		rd.out = append(rd.out, '[')
		for i := 0; rd.dec.PeekKind() != ']'; i++ {
			if i > 0 {
				rd.out = append(rd.out, ',')
			}
			if err := rd.value(depth + 1); err != nil {
				return err
			}
		}
		if _, err := rd.dec.ReadToken(); err != nil {
			return errors.New("audit: unterminated array")
		}
		rd.out = append(rd.out, ']')
	default:
		return fmt.Errorf("audit: unexpected %v", tok.Kind())
	}
	return nil
}

// scalar copies a string (cut to max), or a number, boolean or null as
// received.
func (rd *redactor) scalar() error {
	v, err := rd.dec.ReadValue()
	if err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	if v.Kind() != '"' {
		rd.out = append(rd.out, v...)
		return nil
	}
	str, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return err
	}
	rd.out = jsonstr.Append(rd.out, truncateValue(string(str), rd.max))
	return nil
}

// truncateValue cuts s to at most max bytes (on a UTF-8 boundary) and
// marks the cut with the full length; max <= 0 keeps s.
func truncateValue(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	keep := max
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return fmt.Sprintf("%s…[truncated %d bytes]", s[:keep], len(s))
}

// unchanged is Redact's quick answer for the common case, arguments that
// plainly hold nothing to redact or cut: printable ASCII with no escape
// (so a member name is spelled as it reads and ASCII case folding is
// exact), no longer than maxValueBytes (so no string is), not nesting
// deeper than MaxRedactDepth, and holding no key, in any case, anywhere.
// They come back compacted, as redact would write them; false leaves the
// work to redact.
func unchanged(args []byte, keys []string, maxValueBytes int) ([]byte, bool) {
	if maxValueBytes > 0 && len(args) > maxValueBytes {
		return nil, false
	}
	opens := 0
	for _, c := range args {
		switch {
		case c == '\\' || c >= utf8.RuneSelf || c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r':
			return nil, false
		case c == '{' || c == '[':
			opens++
		}
	}
	if opens > MaxRedactDepth {
		return nil, false
	}
	lower := bytes.ToLower(args)
	for _, k := range keys {
		lk := strings.ToLower(k)
		if lk == "" || !isASCII(lk) || bytes.Contains(lower, []byte(lk)) {
			return nil, false
		}
	}
	// Valid as the strict reader reads (RFC 7493): a name twice in an
	// object is refused here as redact refuses it.
	out := jsontext.Value(bytes.Clone(args))
	if !out.IsValid() || out.Compact() != nil {
		return nil, false // redact says what is wrong with it
	}
	return out, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
