// Package jsonscan walks JSON objects without allocating: it validates and
// slices, and leaves decoding to the caller. It accepts only the common,
// unambiguous shape (plain member names, each at most once, none differing
// from a known name only by case, valid UTF-8 throughout); callers fall back
// to a strict decoder (github.com/go-json-experiment/json) when it declines,
// so behaviour never depends on which path ran. What it accepts is valid JSON
// by that decoder's rules: RFC 8259 grammar, valid UTF-8 in every string, and
// every \u escape of a surrogate half paired.
package jsonscan

import (
	"unicode"
	"unicode/utf8"
)

// maxDepth bounds the recursion of Skip, which declines deeper input (and
// says so in Scanner.deep); Members reads such a value again with Nested,
// which has no limit.
const maxDepth = 1000

// maxUnknown bounds how many distinct unknown member names Members tracks
// for duplicates; an object with more is declined.
const maxUnknown = 16

// Members calls fn with each top-level member of the object in data whose
// name is in known: its name and its raw value (a slice of data). Other
// members are checked and skipped. Values may nest to any depth: nesting
// is for whoever decodes a value to limit. It returns false, having
// possibly called fn for some members, when data is not a single valid
// object with plain (unescaped) names, when any name repeats, when a name
// differs from one in known only by case (a case-insensitive decoder would
// take it for that member), when the object has more than maxUnknown
// unknown members, or when fn returns false. known must hold at most 64
// names.
func Members(data []byte, known []string, fn func(name, value []byte) bool) bool {
	s := Scanner{data: data}
	s.Space()
	if !s.Eat('{') {
		return false
	}
	s.Space()
	if s.Eat('}') {
		return s.End()
	}
	var seen uint64
	var unknown [maxUnknown][]byte
	nUnknown := 0
	for {
		s.Space()
		name, ok := s.PlainString()
		if !ok {
			return false
		}
		idx := -1
		for i, k := range known {
			if string(name) == k {
				idx = i
				break
			}
			if foldEqual(name, k) {
				return false
			}
		}
		switch {
		case idx >= 64:
			return false
		case idx >= 0:
			if seen&(1<<idx) != 0 {
				return false
			}
			seen |= 1 << idx
		default:
			for _, u := range unknown[:nUnknown] {
				if string(u) == string(name) {
					return false
				}
			}
			if nUnknown == maxUnknown {
				return false
			}
			unknown[nUnknown] = name
			nUnknown++
		}
		s.Space()
		if !s.Eat(':') {
			return false
		}
		s.Space()
		start := s.pos
		if !s.Skip(0) {
			if !s.deep {
				return false
			}
			end, _, ok := Nested(data, start)
			if !ok {
				return false
			}
			s.pos, s.deep = end, false
		}
		if idx >= 0 && !fn(name, data[start:s.pos]) {
			return false
		}
		s.Space()
		if s.Eat(',') {
			continue
		}
		if s.Eat('}') {
			return s.End()
		}
		return false
	}
}

// PlainString returns the contents of value when it is a JSON string that
// needs no unescaping.
func PlainString(value []byte) ([]byte, bool) {
	s := Scanner{data: value}
	v, ok := s.PlainString()
	return v, ok && s.pos == len(value)
}

// Int64 returns the value of a JSON number written as a plain integer (an
// optional minus and digits only, no fraction or exponent) when it fits in
// 64 bits: a JSON-RPC id, or a number a schema bound compares exactly.
// Anything else (an empty value, 20 digits or more, a fraction, an
// exponent) is false, for the caller's general path.
func Int64(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 { // 19 digits always fit in a uint64
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	switch {
	case neg && n <= 1<<63:
		return int64(-n), true
	case !neg && n < 1<<63:
		return int64(n), true
	}
	return 0, false
}

// Scanner reads JSON tokens from a byte slice.
type Scanner struct {
	data []byte
	pos  int
	deep bool // Skip stopped at maxDepth
}

// Space skips white space.
func (s *Scanner) Space() { s.pos = SkipSpace(s.data, s.pos) }

// SkipSpace returns the offset of the first byte of data at or after pos
// that is not JSON white space (RFC 8259: space, tab, line feed, carriage
// return), len(data) if there is none. It is the white-space rule of every
// hand-written JSON reader here.
func SkipSpace(data []byte, pos int) int {
	for pos < len(data) {
		switch data[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos
		}
	}
	return pos
}

// Eat consumes c if it is next.
func (s *Scanner) Eat(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// End reports whether only white space remains.
func (s *Scanner) End() bool {
	s.Space()
	return s.pos == len(s.data)
}

// PlainString reads a string with no escapes and valid UTF-8 and returns its
// contents.
func (s *Scanner) PlainString() ([]byte, bool) {
	if !s.Eat('"') {
		return nil, false
	}
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			v := s.data[start:s.pos]
			s.pos++
			return v, utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.pos++
	}
	return nil, false
}

// Skip passes over one value, checking that it is valid JSON. It declines
// (returns false) a value nested deeper than maxDepth levels.
func (s *Scanner) Skip(depth int) bool {
	if depth > maxDepth {
		s.deep = true
		return false
	}
	if s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; {
	case c == '{' || c == '[':
		return s.skipContainer(depth, c == '{')
	case c == '"':
		return s.skipString()
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.word("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.skipNumber()
	}
	return false
}

// skipContainer passes over an object (object set) or an array from its
// opening bracket: its members' names and values, or its elements, each
// one level deeper than depth.
func (s *Scanner) skipContainer(depth int, object bool) bool {
	end := closer(object)
	s.pos++
	s.Space()
	if s.Eat(end) {
		return true
	}
	for {
		if object && !s.memberName() {
			return false
		}
		s.Space()
		if !s.Skip(depth + 1) {
			return false
		}
		s.Space()
		if !s.Eat(',') {
			return s.Eat(end)
		}
	}
}

// closer is the byte that closes an object (object set) or an array.
func closer(object bool) byte {
	if object {
		return '}'
	}
	return ']'
}

// memberName passes over white space, a member's name, white space and
// the colon, stopping before the white space ahead of the member's value.
func (s *Scanner) memberName() bool {
	s.Space()
	if !s.skipString() {
		return false
	}
	s.Space()
	return s.Eat(':')
}

func (s *Scanner) word(w string) bool {
	if len(s.data)-s.pos >= len(w) && string(s.data[s.pos:s.pos+len(w)]) == w {
		s.pos += len(w)
		return true
	}
	return false
}

// skipString passes over a string, checking its escapes and that it is valid
// UTF-8: raw bytes must form valid UTF-8 sequences, and an escaped surrogate
// half must be a high one followed at once by an escaped low one.
func (s *Scanner) skipString() bool {
	if !s.Eat('"') {
		return false
	}
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.pos++
			if s.pos >= len(s.data) {
				return false
			}
			switch s.data[s.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos++
			case 'u':
				r, ok := s.hex4()
				if !ok {
					return false
				}
				switch {
				case r >= 0xDC00 && r <= 0xDFFF:
					return false // a low half with no high half before it
				case r >= 0xD800 && r <= 0xDBFF:
					if !s.Eat('\\') || s.pos >= len(s.data) || s.data[s.pos] != 'u' {
						return false
					}
					if lo, ok := s.hex4(); !ok || lo < 0xDC00 || lo > 0xDFFF {
						return false
					}
				}
			default:
				return false
			}
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			s.pos += size
		}
	}
	return false
}

// hex4 reads the four hex digits after the 'u' of a \u escape; s.pos is at
// the 'u' and ends after the digits.
func (s *Scanner) hex4() (rune, bool) {
	if len(s.data)-s.pos < 5 {
		return 0, false
	}
	var r rune
	for _, h := range s.data[s.pos+1 : s.pos+5] {
		switch {
		case h >= '0' && h <= '9':
			r = r<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	s.pos += 5
	return r, true
}

func (s *Scanner) skipNumber() bool {
	end, why := Number(s.data, s.pos)
	s.pos = end
	return why == ""
}

// Number passes over the JSON number that starts at data[pos], checking
// RFC 8259's grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and
// returns the offset just after it with why "". Where the text stops being
// a number, end is that offset and why says what is missing.
func Number(data []byte, pos int) (end int, why string) {
	s := Scanner{data: data, pos: pos}
	s.Eat('-')
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if !s.Eat('0') && digits() == 0 {
		return s.pos, "invalid number"
	}
	if s.Eat('.') && digits() == 0 {
		return s.pos, "invalid number: no digits after '.'"
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if !s.Eat('+') {
			s.Eat('-')
		}
		if digits() == 0 {
			return s.pos, "invalid number: no digits in the exponent"
		}
	}
	return s.pos, ""
}

// foldEqual is strings.EqualFold(string(name), k) without the conversion,
// which allocates for names over 32 bytes (the io.modelcontextprotocol/...
// _meta keys are): equal under Unicode simple case folding.
func foldEqual(name []byte, k string) bool {
	for len(name) > 0 && len(k) > 0 {
		var a, b rune
		if name[0] < utf8.RuneSelf {
			a, name = rune(name[0]), name[1:]
		} else {
			r, n := utf8.DecodeRune(name)
			a, name = r, name[n:]
		}
		if k[0] < utf8.RuneSelf {
			b, k = rune(k[0]), k[1:]
		} else {
			r, n := utf8.DecodeRuneInString(k)
			b, k = r, k[n:]
		}
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		if b < utf8.RuneSelf {
			if 'A' <= a && a <= 'Z' && b == a+'a'-'A' {
				continue
			}
			return false
		}
		r := unicode.SimpleFold(a)
		for r != a && r < b {
			r = unicode.SimpleFold(r)
		}
		if r != b {
			return false
		}
	}
	return len(name) == len(k)
}

// Nested passes over the one value that starts at data[pos] (after any
// white space), checking it as Skip does (grammar, UTF-8, escapes; not
// duplicate names) but with no limit on nesting: levels are kept in a bit
// stack, not in recursion, so a value nested a million levels deep costs a
// million bits. It returns the offset just after the value and the value's
// depth (0 for a scalar, 1 for an object or array holding only scalars), or
// ok false, with end the offset where the value stopped being valid JSON.
func Nested(data []byte, pos int) (end, depth int, ok bool) {
	s := Scanner{data: data, pos: pos}
	var objects []uint64 // bit i set: level i+1 is an object
	level := 0
	isObject := func() bool { return objects[(level-1)/64]&(1<<((level-1)%64)) != 0 }
	push := func(obj bool) {
		if level/64 == len(objects) {
			objects = append(objects, 0)
		}
		if obj {
			objects[level/64] |= 1 << (level % 64)
		} else {
			objects[level/64] &^= 1 << (level % 64)
		}
		level++
		depth = max(depth, level)
	}
	for {
		// A value starts here.
		s.Space()
		if s.pos >= len(s.data) {
			return s.pos, depth, false
		}
		switch c := s.data[s.pos]; {
		case c == '{' || c == '[':
			s.pos++
			push(c == '{')
			s.Space()
			if s.Eat(closer(c == '{')) {
				level--
				break
			}
			if c == '{' && !s.memberName() {
				return s.pos, depth, false
			}
			continue
		case c == '"':
			if !s.skipString() {
				return s.pos, depth, false
			}
		case c == 't':
			if !s.word("true") {
				return s.pos, depth, false
			}
		case c == 'f':
			if !s.word("false") {
				return s.pos, depth, false
			}
		case c == 'n':
			if !s.word("null") {
				return s.pos, depth, false
			}
		case c == '-' || c >= '0' && c <= '9':
			if !s.skipNumber() {
				return s.pos, depth, false
			}
		default:
			return s.pos, depth, false
		}
		// A value ended: close what it ends, then find the next one.
		for {
			if level == 0 {
				return s.pos, depth, true
			}
			s.Space()
			if s.Eat(',') {
				if isObject() && !s.memberName() {
					return s.pos, depth, false
				}
				break
			}
			if !s.Eat(closer(isObject())) {
				return s.pos, depth, false
			}
			level--
		}
	}
}
