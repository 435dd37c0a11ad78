package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603
)

// Server errors: JSON-RPC leaves -32000 to -32099 to implementations.
const (
	// CodeServerError is the generic server error. Servers built on the
	// TypeScript SDK answer a request for a session they do not know with
	// it (and HTTP 400), which is why a client reads it.
	CodeServerError int64 = -32000
	// CodeOverloaded refuses a request for want of capacity (the memory
	// budget for requests in flight, a session or in-flight limit, a full
	// task store): nothing ran, and the client may send it again later.
	// Over HTTP it comes with status 503 or 429 and Retry-After.
	CodeOverloaded int64 = -32005
)

// Error is a JSON-RPC error object. It is also a Go error, so a tool handler
// can return one to answer with a JSON-RPC error instead of an isError result.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewError returns an error with the given code and message.
func NewError(code int64, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Code: code, Message: msg}
}

// WithData returns a copy of e carrying data, marshalled to JSON. A value that
// cannot be marshalled is reported in the message rather than lost silently.
func (e *Error) WithData(data any) *Error {
	c := *e
	raw, err := json.Marshal(data)
	if err != nil {
		c.Message += fmt.Sprintf(" (error data could not be encoded: %v)", err)
		return &c
	}
	c.Data = raw
	return &c
}

func (e *Error) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// decodeErrorObject reads the error member of a response strictly: an
// object whose names match exactly and appear once, at any depth.
func decodeErrorObject(raw []byte) (*Error, *Error) {
	if raw[0] != '{' {
		return nil, NewError(CodeInvalidRequest, `"error" must be an object`)
	}
	var e Error
	if err := wirejson.Unmarshal(raw, &e); err != nil {
		var we *wirejson.Error
		if errors.As(err, &we) {
			err = &wirejson.Error{Pointer: "/error" + we.Pointer, Reason: we.Reason}
		}
		return nil, NewError(CodeInvalidRequest, "malformed error object: %v", err)
	}
	return &e, nil
}
