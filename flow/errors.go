package flow

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolwire/toolwire/client"
)

// Error codes the runner raises besides the client's five and user-thrown
// ones.
const (
	CodeStepTimeout = "ERR_STEP_TIMEOUT" // a step's timeout passed
	CodeAssertion   = "ERR_ASSERTION"    // an assert step failed
	CodeExpression  = "ERR_EXPRESSION"   // a CEL evaluation failed at run time
	CodeLoopLimit   = "ERR_LOOP_LIMIT"   // a while loop exceeded max_iterations
	// CodeCancelled: the run's context ended (not a step's timeout).
	CodeCancelled = "ERR_CANCELLED"
)

// Error is a step failure: what a catch handler sees as `error` and what
// Result.Err holds when nothing caught it.
type Error struct {
	Code    string
	Message string
	Data    any    // JSON-like: nil, bool, int64, float64, string, []any, map[string]any
	Step    string // the failing step's name, or its path when unnamed
	Pos     Pos
}

func (e *Error) Error() string {
	s := e.Code
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Step != "" {
		s += fmt.Sprintf(" (step %s at %d:%d)", e.Step, e.Pos.Line, e.Pos.Column)
	}
	return s
}

// value is the error as CEL sees it in catch handlers and finally.
func (e *Error) value() map[string]any {
	return map[string]any{"code": e.Code, "message": e.Message, "data": e.Data, "step": e.Step}
}

// Diagnostic is a static problem of a manifest, with its place.
type Diagnostic struct {
	File         string
	Line, Column int
	Msg          string
}

func (d *Diagnostic) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Column, d.Msg)
}

// errorOf turns any error from a step into an *Error: client errors keep
// their code and get their data; a timeout of the step itself is
// ERR_STEP_TIMEOUT.
func errorOf(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	code := string(client.CodeOf(err))
	e := &Error{Code: code, Message: err.Error()}
	var te *client.ToolError
	var je *client.JSONRPCError
	var tr *client.TransportError
	var pe *client.ProtocolError
	var se *client.SessionInvalidError
	switch {
	case errors.As(err, &pe):
		e.Data = protocolData(pe)
	case errors.As(err, &se):
		e.Data = map[string]any{"status": int64(se.StatusCode), "sessionId": se.SessionID}
	case errors.As(err, &te):
		var content any = []any{}
		var structured any
		if te.Result != nil {
			content = contentValue(te.Result.Content)
			if len(te.Result.StructuredContent) > 0 {
				structured, _ = fromJSON(te.Result.StructuredContent)
			}
		}
		e.Data = map[string]any{"content": content, "structuredContent": structured, "isError": true}
	case errors.As(err, &je):
		var data any
		if len(je.Data) > 0 {
			data, _ = fromJSON(je.Data)
		}
		e.Data = map[string]any{"code": je.Code, "message": je.Message, "data": data}
	case errors.As(err, &tr):
		var status, body any // null when no HTTP status came back
		if tr.StatusCode != 0 {
			b := ""
			if tr.Err != nil {
				b = strings.TrimPrefix(tr.Err.Error(), http.StatusText(tr.StatusCode)+": ")
			}
			status, body = int64(tr.StatusCode), b
		}
		e.Data = map[string]any{"status": status, "body": body, "op": tr.Op}
	}
	if code == "" {
		switch {
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			e.Code = CodeCancelled
		default:
			e.Code = string(client.CodeTransport)
		}
	}
	return e
}

// JSON-RPC's error codes for a message that breaks the protocol: one that
// is not JSON at all, and one that is JSON but not a valid envelope or
// result.
const (
	rpcParseError     = -32700
	rpcInvalidMessage = -32600
)

// protocolData is ERR_MCP_PROTOCOL's data: the JSON-RPC error envelope
// describing the violation, {code, message, data: {op, path}}: code
// -32700 when the server's answer was not JSON (or not SSE), -32600 when
// it was but broke the envelope or the result's schema; message the
// reason; op what was being done, path the JSON Pointer or content block
// at fault ("" when the whole answer was).
func protocolData(pe *client.ProtocolError) map[string]any {
	code := int64(rpcInvalidMessage)
	if strings.HasPrefix(pe.Reason, "malformed") && pe.Err != nil {
		code = rpcParseError
	}
	msg := pe.Reason
	if pe.Err != nil {
		msg += ": " + pe.Err.Error()
	}
	return map[string]any{"code": code, "message": msg, "data": map[string]any{"op": pe.Op, "path": pe.Path}}
}
