package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwire/toolwire/internal/jsonscan"
)

// envelope is a message's top-level members as slices of the input.
type envelope struct {
	jsonrpc, method           []byte // string contents, unescaped
	hasJSONRPC, hasMethod     bool   // present and a string
	badMethod                 bool   // present and not a string
	id, params, result, error []byte // raw values; nil when absent
}

var envelopeMembers = []string{"jsonrpc", "method", "id", "params", "result", "error"}

// scanEnvelope reads the top-level object of a message without allocating.
// It handles the common, well-formed shape only; ok is false for anything
// else (invalid JSON or UTF-8, escaped names or values, repeated or
// case-folded members, very deep nesting), and the caller falls back to
// decodeSlow, which then decides, so both paths accept and reject the same
// messages.
func scanEnvelope(data []byte) (e envelope, ok bool) {
	ok = jsonscan.Members(data, envelopeMembers, func(name, value []byte) bool {
		switch string(name) {
		case "jsonrpc":
			e.jsonrpc, e.hasJSONRPC = jsonscan.PlainString(value)
			return e.hasJSONRPC
		case "method":
			e.method, e.hasMethod = jsonscan.PlainString(value)
			return e.hasMethod
		case "id":
			e.id = value
		case "params":
			e.params = value
		case "result":
			e.result = value
		case "error":
			e.error = value
		}
		return true
	})
	return e, ok
}

// decodeSlow reads a message with the strict decoder (jsontext), for
// anything the scanner declines. It reads the whole input before judging
// the envelope, so that bytes that are not JSON are always -32700, whatever
// else is wrong. Duplicate names are checked here at the top level only:
// below it they belong to whoever decodes params or result. A message
// nested deeper than the strict decoder goes (MaxDepth) is read by
// decodeDeep.
func decodeSlow(data []byte) (Message, ID, *Error) {
	return decodeSlowDepth(data, true)
}

// decodeSlowDepth is decodeSlow; deep says whether a message past MaxDepth
// goes to decodeDeep (which reads the rest of it through here).
func decodeSlowDepth(data []byte, deep bool) (Message, ID, *Error) {
	notJSON := func(err error) *Error {
		if deep && isMaxDepth(err) {
			return errTooDeep
		}
		return notJSON(err)
	}
	m, id, err := decodeStrict(data, notJSON)
	if err == errTooDeep {
		return decodeDeep(data)
	}
	return m, id, err
}

// errTooDeep marks a message decodeStrict stopped reading at MaxDepth.
var errTooDeep = &Error{Code: CodeParseError, Message: "too deep"}

// decodeStrict is decodeSlow's reading; notJSON phrases decoder errors.
func decodeStrict(data []byte, notJSON func(error) *Error) (Message, ID, *Error) {
	if isBlank(data) {
		return nil, ID{}, NewError(CodeParseError, "empty message")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	if kind := dec.PeekKind(); kind != '{' {
		if _, err := dec.ReadValue(); err != nil {
			return nil, ID{}, notJSON(err)
		}
		if err := atEnd(dec, notJSON); err != nil {
			return nil, ID{}, err
		}
		if kind == '[' {
			return nil, ID{}, NewError(CodeInvalidRequest, "batch requests are not supported (removed in MCP 2025-06-18); send one message at a time")
		}
		return nil, ID{}, NewError(CodeInvalidRequest, "message must be a JSON object")
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, ID{}, notJSON(err)
	}
	var e envelope
	var problem *Error // the first thing wrong with the members
	var idRaw []byte   // the id, when it appears exactly once
	ids := 0
	seen := map[string]bool{}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, ID{}, notJSON(err)
		}
		name := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, ID{}, notJSON(err)
		}
		end := dec.InputOffset()
		raw := data[end-int64(len(val)) : end]
		if seen[name] && problem == nil {
			problem = NewError(CodeInvalidRequest, "duplicate member %q", name)
		}
		seen[name] = true
		switch name {
		case "jsonrpc":
			e.jsonrpc, e.hasJSONRPC = unquote(raw)
		case "method":
			e.method, e.hasMethod = unquote(raw)
			e.badMethod = !e.hasMethod
		case "id":
			e.id, idRaw = raw, raw
			ids++
		case "params":
			e.params = raw
		case "result":
			e.result = raw
		case "error":
			e.error = raw
		default:
			if problem == nil {
				problem = caseVariant(name)
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return nil, ID{}, notJSON(err)
	}
	if err := atEnd(dec, notJSON); err != nil {
		return nil, ID{}, err
	}
	if problem != nil {
		var id ID
		if ids == 1 && !looksLikeResponse(seen) {
			if v, bad := parseID(idRaw); bad == "" {
				id = v
			}
		}
		return nil, id, problem
	}
	return build(e)
}

// looksLikeResponse reports whether a message with the top-level member
// names in seen is a response as a case-insensitive reader takes it: no
// "method" and a "result" or an "error", in any case. Its id is not echoed
// (see Decode).
func looksLikeResponse(seen map[string]bool) bool {
	response := false
	for name := range seen {
		switch {
		case strings.EqualFold(name, "method"):
			return false
		case strings.EqualFold(name, "result"), strings.EqualFold(name, "error"):
			response = true
		}
	}
	return response
}

// caseVariant refuses a name that differs from an envelope member's only by
// case: a case-insensitive reader would take it for that member.
func caseVariant(name string) *Error {
	for _, k := range envelopeMembers {
		if strings.EqualFold(name, k) {
			return NewError(CodeInvalidRequest, "member %q is not a JSON-RPC member: names are case-sensitive (did you mean %q?)", name, k)
		}
	}
	return nil
}

// unquote returns the contents of a JSON string value, unescaped; ok is
// false for any other value.
func unquote(raw []byte) ([]byte, bool) {
	if raw[0] != '"' {
		return nil, false
	}
	if body, ok := jsonscan.PlainString(raw); ok {
		return body, true
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	return s, err == nil
}

// atEnd checks that nothing but white space follows the message.
func atEnd(dec *jsontext.Decoder, notJSON func(error) *Error) *Error {
	_, err := dec.ReadToken()
	switch {
	case err == io.EOF:
		return nil
	case err == nil:
		return NewError(CodeParseError, "message is not valid JSON: more than one value (at offset %d)", dec.InputOffset()-1)
	}
	return notJSON(err)
}

// notJSON is the -32700 error for input the decoder refused.
func notJSON(err error) *Error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return NewError(CodeParseError, "message is not valid JSON: unexpected end of input")
		}
		return NewError(CodeParseError, "message is not valid JSON: %v", err)
	}
	reason := "invalid JSON"
	switch {
	case se.Err == nil:
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		reason = "unexpected end of input"
	case se.Err.Error() == "invalid UTF-8":
		reason = "invalid UTF-8 in a string"
	default:
		reason = strings.TrimPrefix(se.Err.Error(), "jsontext: ")
	}
	where := fmt.Sprintf("offset %d", se.ByteOffset)
	if se.JSONPointer != "" {
		where = fmt.Sprintf("%s, offset %d", se.JSONPointer, se.ByteOffset)
	}
	return NewError(CodeParseError, "message is not valid JSON: %s (at %s)", reason, where)
}

// isBlank reports whether data is empty or JSON white space only.
func isBlank(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}
