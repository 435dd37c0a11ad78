package jsonrpc

import (
	"strings"
	"unicode/utf8"
)

// envelope is a message's top-level members as slices of the input.
type envelope struct {
	jsonrpc, method           []byte // string contents, without quotes
	hasJSONRPC, hasMethod     bool
	id, params, result, error []byte // raw values; nil when absent
}

// scanEnvelope reads the top-level object of a message without allocating.
// It handles the common, well-formed shape only; ok is false for anything
// else (invalid JSON, escaped keys or names, repeated or case-folded members,
// very deep nesting), and the caller falls back to encoding/json, which then
// decides, so both paths accept and reject exactly the same messages.
func scanEnvelope(data []byte) (e envelope, ok bool) {
	s := scanner{data: data}
	s.space()
	if !s.eat('{') {
		return e, false
	}
	s.space()
	if s.eat('}') {
		return e, s.end()
	}
	seen := 0
	for {
		s.space()
		key, ok := s.plainString()
		if !ok {
			return e, false
		}
		s.space()
		if !s.eat(':') {
			return e, false
		}
		s.space()
		start := s.pos
		bit, dst := 0, (*[]byte)(nil)
		switch string(key) {
		case "jsonrpc":
			v, ok := s.plainString()
			if !ok || seen&1 != 0 {
				return e, false
			}
			e.jsonrpc, e.hasJSONRPC, seen = v, true, seen|1
		case "method":
			v, ok := s.plainString()
			if !ok || seen&2 != 0 {
				return e, false
			}
			e.method, e.hasMethod, seen = v, true, seen|2
		case "id":
			bit, dst = 4, &e.id
		case "params":
			bit, dst = 8, &e.params
		case "result":
			bit, dst = 16, &e.result
		case "error":
			bit, dst = 32, &e.error
		default:
			// encoding/json matches member names case-insensitively; leave
			// such names to it.
			for _, k := range [...]string{"jsonrpc", "method", "id", "params", "result", "error"} {
				if strings.EqualFold(string(key), k) {
					return e, false
				}
			}
			if !s.skip(0) {
				return e, false
			}
		}
		if dst != nil {
			if seen&bit != 0 || !s.skip(0) {
				return e, false
			}
			seen |= bit
			*dst = data[start:s.pos]
		}
		s.space()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return e, s.end()
		}
		return e, false
	}
}

type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

func (s *scanner) end() bool {
	s.space()
	return s.pos == len(s.data)
}

// plainString reads a string with no escapes and valid UTF-8, returning
// its contents.
func (s *scanner) plainString() ([]byte, bool) {
	if !s.eat('"') {
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

const scanMaxDepth = 1000

// skip passes over one value, checking it is valid JSON.
func (s *scanner) skip(depth int) bool {
	if depth > scanMaxDepth || s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		s.pos++
		s.space()
		if s.eat('}') {
			return true
		}
		for {
			s.space()
			if !s.skipString() {
				return false
			}
			s.space()
			if !s.eat(':') {
				return false
			}
			s.space()
			if !s.skip(depth + 1) {
				return false
			}
			s.space()
			if s.eat(',') {
				continue
			}
			return s.eat('}')
		}
	case c == '[':
		s.pos++
		s.space()
		if s.eat(']') {
			return true
		}
		for {
			s.space()
			if !s.skip(depth + 1) {
				return false
			}
			s.space()
			if s.eat(',') {
				continue
			}
			return s.eat(']')
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

func (s *scanner) word(w string) bool {
	if len(s.data)-s.pos >= len(w) && string(s.data[s.pos:s.pos+len(w)]) == w {
		s.pos += len(w)
		return true
	}
	return false
}

func (s *scanner) skipString() bool {
	if !s.eat('"') {
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

func (s *scanner) skipNumber() bool {
	s.eat('-')
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if !s.eat('0') && digits() == 0 {
		return false
	}
	if s.eat('.') && digits() == 0 {
		return false
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if !s.eat('+') {
			s.eat('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
