// Package jsonrpc implements the JSON-RPC 2.0 envelope MCP speaks: requests,
// notifications, responses and errors, with the MCP rules on top (ids are
// strings or integers, never null; batches are refused).
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Message is a Request, a Notification or a Response.
type Message interface{ isMessage() }

// Request is a call that expects a Response with the same ID.
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage // nil when absent
}

// Notification is a one-way message: no ID, no reply.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Response answers a Request: exactly one of Result and Error is set.
type Response struct {
	ID     ID // absent only for errors about requests whose id could not be read
	Result json.RawMessage
	Error  *Error
}

func (*Request) isMessage()      {}
func (*Notification) isMessage() {}
func (*Response) isMessage()     {}

// wire is the envelope as it appears on the wire; pointers and raw fields let the
// decoder tell "absent" from "null".
type wire struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Decode parses one message. On failure it returns an *Error carrying the code
// to answer with (-32700 for bytes that are not JSON, -32600 for JSON that is not
// a valid message, including batches) and, where it could be read, the id of the
// offending request so the reply can name it. The message's raw members (params,
// result, error data) share memory with data, which must not change afterwards.
func Decode(data []byte) (Message, ID, *Error) {
	if e, ok := scanEnvelope(data); ok {
		return build(e)
	}
	return decodeSlow(data)
}

// decodeSlow is the reference path through encoding/json; Decode takes it for
// anything the allocation-free scanner does not handle.
func decodeSlow(data []byte) (Message, ID, *Error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, ID{}, NewError(CodeParseError, "empty message")
	}
	switch data[0] {
	case '[':
		if !json.Valid(data) {
			return nil, ID{}, NewError(CodeParseError, "message is not valid JSON")
		}
		return nil, ID{}, NewError(CodeInvalidRequest, "batch requests are not supported (removed in MCP 2025-06-18); send one message at a time")
	case '{':
	default:
		if !json.Valid(data) {
			return nil, ID{}, NewError(CodeParseError, "message is not valid JSON")
		}
		return nil, ID{}, NewError(CodeInvalidRequest, "message must be a JSON object")
	}
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		if !json.Valid(data) {
			return nil, ID{}, NewError(CodeParseError, "message is not valid JSON: %v", err)
		}
		return nil, ID{}, NewError(CodeInvalidRequest, "malformed message: %v", err)
	}
	e := envelope{id: w.ID, params: w.Params, result: w.Result, error: w.Error}
	if w.JSONRPC != nil {
		e.jsonrpc, e.hasJSONRPC = []byte(*w.JSONRPC), true
	}
	if w.Method != nil {
		e.method, e.hasMethod = []byte(*w.Method), true
	}
	return build(e)
}

// build checks an envelope's members against JSON-RPC and MCP's rules.
func build(w envelope) (Message, ID, *Error) {
	var id ID
	var idErr error
	hasID := w.id != nil
	if hasID {
		idErr = id.UnmarshalJSON(w.id)
	}
	if !w.hasJSONRPC || string(w.jsonrpc) != "2.0" {
		return nil, id, NewError(CodeInvalidRequest, `"jsonrpc" must be "2.0"`)
	}
	if w.hasMethod {
		if len(w.method) == 0 {
			return nil, id, NewError(CodeInvalidRequest, `"method" must not be empty`)
		}
		if w.params != nil {
			p := bytes.TrimSpace(w.params)
			if len(p) == 0 || (p[0] != '{' && p[0] != '[') {
				return nil, id, NewError(CodeInvalidRequest, `"params" must be an object`)
			}
		}
		if !hasID {
			return &Notification{Method: string(w.method), Params: w.params}, ID{}, nil
		}
		if idErr != nil {
			return nil, ID{}, NewError(CodeInvalidRequest, `"id" must be a string or an integer, never null`)
		}
		return &Request{ID: id, Method: string(w.method), Params: w.params}, id, nil
	}
	if w.result != nil || w.error != nil {
		if idErr != nil && !(w.error != nil && string(bytes.TrimSpace(w.id)) == "null") {
			return nil, ID{}, NewError(CodeInvalidRequest, `response "id" must be a string or an integer`)
		}
		if w.result != nil && w.error != nil {
			return nil, id, NewError(CodeInvalidRequest, `response must not carry both "result" and "error"`)
		}
		r := &Response{ID: id, Result: w.result}
		if w.error != nil {
			var e Error
			if err := json.Unmarshal(w.error, &e); err != nil {
				return nil, id, NewError(CodeInvalidRequest, "malformed error object: %v", err)
			}
			r.Error = &e
		}
		return r, id, nil
	}
	return nil, id, NewError(CodeInvalidRequest, `message has neither "method" nor "result"/"error"`)
}

// Encode renders a message as one line of JSON (no trailing newline).
func Encode(m Message) ([]byte, error) {
	n := 64
	switch m := m.(type) {
	case *Request:
		n += len(m.Method) + len(m.Params)
	case *Notification:
		n += len(m.Method) + len(m.Params)
	case *Response:
		n += len(m.Result)
		if m.Error != nil {
			n += len(m.Error.Message) + len(m.Error.Data)
		}
	}
	return Append(make([]byte, 0, n), m)
}

// Append renders a message onto b.
func Append(b []byte, m Message) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0",`...)
	switch m := m.(type) {
	case *Request:
		if !m.ID.IsValid() {
			return nil, fmt.Errorf("jsonrpc: request %q has no id", m.Method)
		}
		b = append(b, `"id":`...)
		b = m.ID.appendJSON(b)
		b = append(b, `,"method":`...)
		b = strconv.AppendQuote(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			b = append(b, m.Params...)
		}
	case *Notification:
		b = append(b, `"method":`...)
		b = strconv.AppendQuote(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			b = append(b, m.Params...)
		}
	case *Response:
		b = append(b, `"id":`...)
		b = m.ID.appendJSON(b)
		if m.Error != nil {
			eb, err := json.Marshal(m.Error)
			if err != nil {
				return nil, err
			}
			b = append(b, `,"error":`...)
			b = append(b, eb...)
		} else {
			b = append(b, `,"result":`...)
			if len(m.Result) == 0 {
				b = append(b, "{}"...)
			} else {
				b = append(b, m.Result...)
			}
		}
	default:
		return nil, fmt.Errorf("jsonrpc: cannot encode %T", m)
	}
	return append(b, '}'), nil
}

// AppendResultHead appends the start of a success response up to its result
// value, `{"jsonrpc":"2.0","id":ID,"result":`; the caller appends the result
// and a closing brace. Transports use it to send a large result without
// copying it into a new envelope.
func AppendResultHead(b []byte, id ID) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = id.appendJSON(b)
	return append(b, `,"result":`...)
}

// NewResponse builds a success response, marshalling result.
func NewResponse(id ID, result any) (*Response, error) {
	raw, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	return &Response{ID: id, Result: raw}, nil
}

// NewNotification builds a notification, marshalling params (nil for none).
func NewNotification(method string, params any) (*Notification, error) {
	n := &Notification{Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		n.Params = raw
	}
	return n, nil
}
