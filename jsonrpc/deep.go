package jsonrpc

import (
	"errors"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwire/toolwire/internal/jsonscan"
)

// isMaxDepth reports whether the strict decoder stopped at its nesting limit.
func isMaxDepth(err error) bool {
	var se *jsontext.SyntacticError
	return errors.As(err, &se) && se.Err != nil && se.Err.Error() == "exceeded max depth"
}

// decodeDeep reads a message the strict decoder stopped reading at its
// nesting limit (10000 levels). Nesting is not the envelope's business: the
// message is checked without a limit (jsonscan.Nested keeps a bit per level,
// no recursion), its envelope read with every rule of decodeSlow, and its
// params or result handed on as they are, for whoever decodes them to apply
// its own limit and answer with the request's id (see Decode).
func decodeDeep(data []byte) (Message, ID, *Error) {
	start := skipSpace(data, 0)
	if start == len(data) || data[start] != '{' {
		end, _, ok := jsonscan.Nested(data, start)
		if !ok || !isBlank(data[end:]) {
			return nil, ID{}, notJSONAt(end)
		}
		if data[start] == '[' {
			return nil, ID{}, NewError(CodeInvalidRequest, "batch requests are not supported (removed in MCP 2025-06-18); send one message at a time")
		}
		return nil, ID{}, NewError(CodeInvalidRequest, "message must be a JSON object")
	}
	// The top-level members, each value checked to its full depth.
	type span struct {
		name       string
		start, end int
		deep       bool // deeper than the strict decoder reads
	}
	var members []span
	pos := start + 1
	for first := true; ; first = false {
		pos = skipSpace(data, pos)
		if pos < len(data) && data[pos] == '}' && first {
			pos++
			break
		}
		if pos >= len(data) || data[pos] != '"' {
			return nil, ID{}, notJSONAt(pos)
		}
		nameStart := pos
		end, _, ok := jsonscan.Nested(data, pos)
		if !ok {
			return nil, ID{}, notJSONAt(end)
		}
		name, nameOK := unquote(data[nameStart:end])
		if !nameOK {
			return nil, ID{}, notJSONAt(nameStart)
		}
		pos = skipSpace(data, end)
		if pos >= len(data) || data[pos] != ':' {
			return nil, ID{}, notJSONAt(pos)
		}
		pos = skipSpace(data, pos+1)
		valueStart := pos
		end, depth, ok := jsonscan.Nested(data, pos)
		if !ok {
			return nil, ID{}, notJSONAt(end)
		}
		members = append(members, span{string(name), valueStart, end, 1+depth > strictDepth})
		pos = skipSpace(data, end)
		if pos < len(data) && data[pos] == ',' {
			pos++
			continue
		}
		if pos < len(data) && data[pos] == '}' {
			pos++
			break
		}
		return nil, ID{}, notJSONAt(pos)
	}
	if !isBlank(data[pos:]) {
		return nil, ID{}, NewError(CodeParseError, "message is not valid JSON: more than one value (at offset %d)", skipSpace(data, pos))
	}
	// The envelope with each deep value replaced by an empty one of its
	// kind, read by the strict decoder: every rule of the envelope applies
	// as to the message itself.
	shallow := make([]byte, 0, len(data))
	last := 0
	for _, m := range members {
		if m.deep {
			shallow = append(shallow, data[last:m.start]...)
			shallow = append(shallow, data[m.start], data[m.start]+2) // {} or []
			last = m.end
		}
	}
	if last == 0 {
		// Nothing deep after all (the decoders disagree): refuse it as
		// the strict decoder did.
		return nil, ID{}, NewError(CodeParseError, "message is not valid JSON: exceeded max depth")
	}
	shallow = append(shallow, data[last:]...)
	msg, id, err := decodeSlowDepth(shallow, false)
	if err != nil {
		return nil, id, err
	}
	// The message, its raw members taken from the input.
	raw := func(name string) []byte {
		for _, m := range members {
			if m.name == name {
				return data[m.start:m.end]
			}
		}
		return nil
	}
	switch m := msg.(type) {
	case *Request:
		m.Params = raw("params")
	case *Notification:
		m.Params = raw("params")
	case *Response:
		m.Result = raw("result")
		if m.Error != nil {
			e, err := decodeErrorObject(raw("error"))
			if err != nil {
				return nil, ID{}, err // a response's id is not echoed (see Decode)
			}
			m.Error = e
		}
	}
	return msg, id, nil
}

// strictDepth is the nesting limit of the strict decoder
// (github.com/go-json-experiment/json/jsontext), which cannot be changed.
const strictDepth = 10000

// notJSONAt is the -32700 error for input that stops being JSON at offset.
func notJSONAt(offset int) *Error {
	return NewError(CodeParseError, "message is not valid JSON: invalid JSON (at offset %d)", offset)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, pos int) int {
	for pos < len(data) && isSpace(data[pos]) {
		pos++
	}
	return pos
}
