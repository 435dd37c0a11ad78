// Package jsonstr writes JSON strings (RFC 8259, section 7) for the
// hand-built parts of wire messages: ids, method names, member names.
//
// The output is what encoding/json writes without HTML escaping: '"' and
// '\\' are escaped, control characters U+0000 to U+001F are written as \b,
// \f, \n, \r, \t or \u00XX, U+2028 and U+2029 as \u2028 and \u2029 (so the
// output is also valid JavaScript), and every other character as its UTF-8
// bytes, DEL and non-printable characters included. A byte that is not part
// of valid UTF-8 becomes \ufffd (U+FFFD): JSON text is UTF-8 (RFC 8259,
// section 8.1), so such a byte has no JSON spelling. Go's strconv.Quote is
// not a substitute: it writes \a, \v, \x7f and \U000e0001, which JSON does
// not have.
package jsonstr

import "unicode/utf8"

// plain marks the ASCII bytes written as themselves: printable ASCII and
// DEL but '"' and '\\'. Bytes from 0x80 up are not plain: they start UTF-8
// sequences, which are checked.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hex = "0123456789abcdef"

// Append appends s to b as a JSON string, quotes included. It allocates
// only when b must grow; a string of plain ASCII is copied in one piece.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
