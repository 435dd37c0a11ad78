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
	switch {
	case errors.As(err, &te):
		var content any = []any{}
		var structured any
		if te.Result != nil {
			content = contentValue(te.Result.Content)
			if len(te.Result.StructuredContent) > 0 {
				structured, _ = fromJSON(te.Result.StructuredContent)
			}
		}
		e.Data = map[string]any{"content": content, "structuredContent": structured}
	case errors.As(err, &je):
		var data any
		if len(je.Data) > 0 {
			data, _ = fromJSON(je.Data)
		}
		e.Data = map[string]any{"code": je.Code, "message": je.Message, "data": data}
	case errors.As(err, &tr):
		if tr.StatusCode != 0 {
			body := ""
			if tr.Err != nil {
				body = strings.TrimPrefix(tr.Err.Error(), http.StatusText(tr.StatusCode)+": ")
			}
			e.Data = map[string]any{"status": int64(tr.StatusCode), "body": body}
		}
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
