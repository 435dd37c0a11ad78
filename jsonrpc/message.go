// Package jsonrpc implements the JSON-RPC 2.0 envelope MCP speaks: requests,
// notifications, responses and errors, with the MCP rules on top (ids are
// strings or integers, never null; batches are refused).
package jsonrpc

import (
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/internal/jsonstr"
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

// Decode parses one message. On failure it returns an *Error carrying the code
// to answer with (-32700 for bytes that are not JSON, -32600 for JSON that is not
// a valid message, including batches) and, where it could be read, the id of the
// offending request so the reply can name it. The message's raw members (params,
// result, error data) share memory with data, which must not change afterwards.
//
// The id of a refused response is never returned. A message without
// "method" that carries "result" or "error" (in any case: a case-insensitive
// reader takes "Result" for "result") is a response, and its id names one of
// the receiver's own requests, not one of the sender's: a refusal carrying it
// could settle the sender's pending request that happens to use the same id.
// JSON-RPC 2.0 answers nothing but requests, and gives a refusal whose
// request's id cannot be determined a null id; a malformed response gets
// that, -32600 with a null id, so that its sender still learns it was not
// understood.
//
// Decoding is exact, so that whatever inspected the message before (a gateway,
// a policy filter, an audit log) saw the message toolwire serves: "JSON" means
// RFC 8259 with valid UTF-8 in every string (invalid UTF-8 anywhere, even in a
// member nobody reads, is -32700); the envelope's member names match
// case-sensitively, and a member whose name differs from "jsonrpc", "id",
// "method", "params", "result" or "error" only by case is refused, as is any
// top-level member name appearing twice (names compare after unescaping, so
// "m\u0065thod" is "method"); other members are ignored. Duplicate names
// inside params or result are left to whoever decodes them; the error object
// of a response is decoded strictly here.
//
// Nesting is likewise left to whoever decodes params or result: the envelope
// checks a value of any depth without recursion (a bit per level), so a
// request nested past a decoder's limit still reaches the method with its id,
// and the method answers it (the server's typed params: -32602 invalid
// params past wirejson.MaxDepth; tool arguments: an isError result past
// schema.MaxDepth, like any argument the model can correct). An error object
// nested past wirejson.MaxDepth is -32600.
func Decode(data []byte) (Message, ID, *Error) {
	if e, ok := scanEnvelope(data); ok {
		return build(e)
	}
	return decodeSlow(data)
}

// build checks an envelope's members against JSON-RPC and MCP's rules.
func build(w envelope) (Message, ID, *Error) {
	var id ID
	var idProblem string
	hasID := w.id != nil
	if hasID {
		id, idProblem = parseID(w.id)
	}
	// The id a refusal carries: a response's is null (see Decode).
	replyID := id
	if !w.hasMethod && !w.badMethod && (w.result != nil || w.error != nil) {
		replyID = ID{}
	}
	if !w.hasJSONRPC || string(w.jsonrpc) != "2.0" {
		return nil, replyID, NewError(CodeInvalidRequest, `"jsonrpc" must be "2.0"`)
	}
	if w.badMethod {
		return nil, id, NewError(CodeInvalidRequest, `"method" must be a string`)
	}
	if w.hasMethod {
		if len(w.method) == 0 {
			return nil, id, NewError(CodeInvalidRequest, `"method" must not be empty`)
		}
		if w.params != nil && w.params[0] != '{' && w.params[0] != '[' {
			return nil, id, NewError(CodeInvalidRequest, `"params" must be an object`)
		}
		if !hasID {
			return &Notification{Method: methodName(w.method), Params: w.params}, ID{}, nil
		}
		if idProblem != "" {
			return nil, ID{}, badID(idProblem)
		}
		return &Request{ID: id, Method: methodName(w.method), Params: w.params}, id, nil
	}
	if w.result != nil || w.error != nil {
		if idProblem != "" && !(w.error != nil && idProblem == "null") {
			return nil, ID{}, badID(idProblem)
		}
		if w.result != nil && w.error != nil {
			return nil, ID{}, NewError(CodeInvalidRequest, `response must not carry both "result" and "error"`)
		}
		r := &Response{ID: id, Result: w.result}
		if w.error != nil {
			e, err := decodeErrorObject(w.error)
			if err != nil {
				return nil, ID{}, err
			}
			r.Error = e
		}
		return r, id, nil
	}
	return nil, id, NewError(CodeInvalidRequest, `message has neither "method" nor "result"/"error"`)
}

// badID is the refusal of an id that is neither a string nor an integer;
// problem says what it is instead.
func badID(problem string) *Error {
	return NewError(CodeInvalidRequest, `"id" must be a string or an integer, not %s`, problem)
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
		b = appendCall(append(b, ','), m.Method, m.Params)
	case *Notification:
		b = appendCall(b, m.Method, m.Params)
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

// appendCall writes the members a request and a notification share: the
// method and, when there are any, the params.
func appendCall(b []byte, method string, params json.RawMessage) []byte {
	b = append(b, `"method":`...)
	b = jsonstr.Append(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return b
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

// methodName returns a message's method as a string, without allocating
// one for the methods every session sends most.
func methodName(b []byte) string {
	switch string(b) {
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	case "initialize":
		return "initialize"
	case "notifications/initialized":
		return "notifications/initialized"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/progress":
		return "notifications/progress"
	case "ping":
		return "ping"
	case "resources/read":
		return "resources/read"
	case "prompts/get":
		return "prompts/get"
	}
	return string(b)
}
