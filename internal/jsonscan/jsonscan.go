// Package jsonscan walks JSON objects without allocating: it validates and
// slices, and leaves decoding to the caller. It accepts only the common,
// unambiguous shape (plain member names, each at most once); callers fall back
// to encoding/json when it declines, so behaviour never depends on which path
// ran.
package jsonscan

import (
	"strings"
	"unicode/utf8"
)

// maxDepth bounds nesting; deeper input is declined, not rejected.
const maxDepth = 1000

// Members calls fn with each top-level member of the object in data: its name
// and its raw value (a slice of data). It returns false, having possibly called
// fn for some members, when data is not a single valid object with plain
// names, when a name repeats, when a name differs from one in known only by
// case (encoding/json would match it case-insensitively), or when fn returns
// false.
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
			if strings.EqualFold(string(name), k) {
				return false
			}
		}
		if idx >= 0 && idx < 64 {
			if seen&(1<<idx) != 0 {
				return false
			}
			seen |= 1 << idx
		}
		s.Space()
		if !s.Eat(':') {
			return false
		}
		s.Space()
		start := s.pos
		if !s.Skip(0) {
			return false
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

// Scanner reads JSON tokens from a byte slice.
type Scanner struct {
	data []byte
	pos  int
}

// Space skips white space.
func (s *Scanner) Space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
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

// Skip passes over one value, checking that it is valid JSON.
func (s *Scanner) Skip(depth int) bool {
	if depth > maxDepth || s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		s.pos++
		s.Space()
		if s.Eat('}') {
			return true
		}
		for {
			s.Space()
			if !s.skipString() {
				return false
			}
			s.Space()
			if !s.Eat(':') {
				return false
			}
			s.Space()
			if !s.Skip(depth + 1) {
				return false
			}
			s.Space()
			if s.Eat(',') {
				continue
			}
			return s.Eat('}')
		}
	case c == '[':
		s.pos++
		s.Space()
		if s.Eat(']') {
			return true
		}
		for {
			s.Space()
			if !s.Skip(depth + 1) {
				return false
			}
			s.Space()
			if s.Eat(',') {
				continue
			}
			return s.Eat(']')
		}
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

func (s *Scanner) word(w string) bool {
	if len(s.data)-s.pos >= len(w) && string(s.data[s.pos:s.pos+len(w)]) == w {
		s.pos += len(w)
		return true
	}
	return false
}

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
				if len(s.data)-s.pos < 5 {
					return false
				}
				for _, h := range s.data[s.pos+1 : s.pos+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				s.pos += 5
			default:
				return false
			}
		default:
			s.pos++
		}
	}
	return false
}

func (s *Scanner) skipNumber() bool {
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
		return false
	}
	if s.Eat('.') && digits() == 0 {
		return false
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if !s.Eat('+') {
			s.Eat('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
