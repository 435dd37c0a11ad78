package transport

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolwire/toolwire/jsonrpc"
)

// RequestIDOf recovers the id of a request from its bytes, or their first
// ones, without decoding it: for a reply to a message refused before it is
// decoded (too large, past the memory budget), as Serve does, and as an
// HTTP transport refusing a body can. The rules are prefixID's.
func RequestIDOf(b []byte) jsonrpc.ID { return prefixID(b) }

// prefixID recovers the id of a request from the first bytes of a message
// too large to decode, so that the -32600 reply can be matched by the client
// (without it, a client waits for an answer that never comes or drops the
// session). It reads top-level members up to the first one the prefix cuts
// short, without decoding nested values, and returns the id only when the
// bytes read show a request: one "id" member holding a string or an integer
// (a number must end within the prefix), a "method" member, and no "result"
// or "error" member. A response's id is the server's own, so echoing it
// would fail an unrelated call of the client's. Otherwise (not an object,
// the id or method past the prefix, a repeated or invalid id) it returns
// the absent id: the reply carries null.
func prefixID(b []byte) jsonrpc.ID {
	s := prefixScan{b: b}
	s.space()
	if !s.eat('{') {
		return jsonrpc.ID{}
	}
	var id jsonrpc.ID
	var idSeen, method bool
	for {
		s.space()
		start := s.p
		if !s.skipString() {
			break
		}
		name := memberName(b[start:s.p])
		s.space()
		if !s.eat(':') {
			break
		}
		s.space()
		start = s.p
		complete := s.skipValue()
		switch name {
		case "id":
			if idSeen || !complete {
				return jsonrpc.ID{}
			}
			idSeen = true
			if err := id.UnmarshalJSON(b[start:s.p]); err != nil {
				return jsonrpc.ID{}
			}
		case "method":
			method = true
		case "result", "error":
			return jsonrpc.ID{}
		}
		if !complete {
			break
		}
		s.space()
		if !s.eat(',') {
			break
		}
	}
	if !method {
		return jsonrpc.ID{}
	}
	return id
}

// memberName returns the name a quoted member name spells ("\u0069d" is
// "id", as the envelope decoder reads it), or "" when it cannot be read.
func memberName(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	name, err := jsontext.AppendUnquote(nil, quoted)
	if err != nil {
		return ""
	}
	return string(name)
}

// prefixScan walks JSON that may be cut short at any byte.
type prefixScan struct {
	b []byte
	p int
}

func (s *prefixScan) space() {
	for s.p < len(s.b) && (s.b[s.p] == ' ' || s.b[s.p] == '\t' || s.b[s.p] == '\n' || s.b[s.p] == '\r') {
		s.p++
	}
}

func (s *prefixScan) eat(c byte) bool {
	if s.p < len(s.b) && s.b[s.p] == c {
		s.p++
		return true
	}
	return false
}

// skipString passes over a quoted string and reports whether it ended
// within the prefix.
func (s *prefixScan) skipString() bool {
	if !s.eat('"') {
		return false
	}
	for s.p < len(s.b) {
		switch s.b[s.p] {
		case '"':
			s.p++
			return true
		case '\\':
			s.p++
		}
		s.p++
	}
	return false
}

// skipValue passes over one value, nested ones by counting brackets (no
// recursion, so depth costs nothing), and reports whether it ended within
// the prefix. A scalar ends at the first delimiter after it, so a number
// running to the end of the prefix is not complete: its digits may go on.
func (s *prefixScan) skipValue() bool {
	depth := 0
	for s.p < len(s.b) {
		switch c := s.b[s.p]; c {
		case '"':
			if !s.skipString() {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the object a scalar was in
				return true
			}
			depth--
			if depth == 0 {
				s.p++
				return true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return true
			}
		}
		s.p++
	}
	return false
}
