package server

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// ToolFunc handles a call to a typed tool. in is the arguments, already
// validated against the tool's inputSchema and decoded.
//
// What it returns becomes the result:
//   - Out of any type but those below: structuredContent, plus the same JSON
//     as a text block for clients that read only content.
//   - Out = string: one text block, no structured content.
//   - Out = *mcp.CallToolResult: sent as it is (the handler builds content).
//   - a non-nil error: an isError result carrying the error's text, so the
//     model can read it. A *jsonrpc.Error instead answers with that JSON-RPC
//     error; an error with a ToolResult method supplies its own result.
type ToolFunc[In, Out any] func(ctx context.Context, req *CallRequest, in In) (Out, error)

// RegistrationError says why a tool could not be registered.
type RegistrationError struct {
	Tool   string
	Reason string
	Err    error
}

func (e *RegistrationError) Error() string {
	msg := fmt.Sprintf("server: tool %q: %s", e.Tool, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RegistrationError) Unwrap() error { return e.Err }

type outputKind int

const (
	outStructured outputKind = iota
	outText
	outResult
)

// tool is a registered tool with its compiled schemas and the two views of
// its definition: legacy sessions never see 2026-only shapes.
type tool struct {
	name       string
	legacy     *mcp.Tool
	modern     *mcp.Tool
	input      *schema.Schema
	output     *schema.Schema
	outObject  bool // output schema root is an object (legacy may see it)
	timeout    time.Duration
	hasTimeout bool
	invoke     func(ctx context.Context, req *CallRequest, args []byte) (*mcp.CallToolResult, error)
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	resultType     = reflect.TypeFor[*mcp.CallToolResult]()
	stringType     = reflect.TypeFor[string]()
	anyType        = reflect.TypeFor[any]()
)

// AddTool registers a typed tool. Unless t declares them, its inputSchema is
// inferred from In and its outputSchema from Out, so schemas and handler cannot
// drift. Schemas are compiled here, once; a bad schema, an unknown dialect, a
// duplicate or invalid name are returned as a *RegistrationError. AddTool never
// panics and never prints. Connected clients are told the list changed.
func AddTool[In, Out any](s *Server, t *mcp.Tool, h ToolFunc[In, Out], opts ...ToolOption) error {
	if t == nil {
		return &RegistrationError{Reason: "tool definition is nil"}
	}
	if h == nil {
		return &RegistrationError{Tool: t.Name, Reason: "handler is nil"}
	}
	if err := checkName(t.Name); err != nil {
		return &RegistrationError{Tool: t.Name, Reason: err.Error()}
	}
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()

	inRaw := t.InputSchema
	if len(inRaw) == 0 {
		var err error
		if inRaw, err = inferInput(inType); err != nil {
			return &RegistrationError{Tool: t.Name, Reason: "cannot infer inputSchema", Err: err}
		}
	}
	input, err := schema.Compile(inRaw)
	if err != nil {
		return &RegistrationError{Tool: t.Name, Reason: "invalid inputSchema", Err: err}
	}
	if input.RootType() != "object" {
		return &RegistrationError{Tool: t.Name, Reason: `inputSchema root must have "type": "object"`}
	}

	kind := outStructured
	switch outType {
	case resultType:
		kind = outResult
	case stringType:
		kind = outText
	}
	outRaw := t.OutputSchema
	if len(outRaw) == 0 && kind == outStructured && outType != rawMessageType && outType != anyType {
		if outRaw, err = schema.ForType(outType); err != nil {
			return &RegistrationError{Tool: t.Name, Reason: "cannot infer outputSchema", Err: err}
		}
	}
	var output *schema.Schema
	if len(outRaw) > 0 {
		if output, err = schema.Compile(outRaw); err != nil {
			return &RegistrationError{Tool: t.Name, Reason: "invalid outputSchema", Err: err}
		}
	}

	var tc toolConfig
	for _, o := range opts {
		o.applyTool(&tc)
	}
	modern := *t
	modern.InputSchema = input.Raw()
	modern.Execution = nil // tasks left the core in 2026-07-28
	if output != nil {
		modern.OutputSchema = output.Raw()
	}
	legacy := *t
	legacy.InputSchema = input.Raw()
	outObject := output != nil && output.RootType() == "object"
	if outObject {
		legacy.OutputSchema = output.Raw()
	} else {
		legacy.OutputSchema = nil
	}

	rt := &tool{
		name: t.Name, legacy: &legacy, modern: &modern, input: input, output: output, outObject: outObject,
		timeout: tc.timeout, hasTimeout: tc.hasTimeout,
	}
	rt.invoke = func(ctx context.Context, req *CallRequest, args []byte) (*mcp.CallToolResult, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return mcp.ErrorResult("invalid arguments for tool %q: %v", req.Name, err), nil
		}
		out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		switch kind {
		case outResult:
			r := any(out).(*mcp.CallToolResult)
			if r == nil {
				return &mcp.CallToolResult{}, nil
			}
			return r, nil
		case outText:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: any(out).(string)}}}, nil
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return nil, &outputError{tool: req.Name, err: fmt.Errorf("cannot encode output: %w", err)}
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
			StructuredContent: raw,
		}, nil
	}
	return s.register(rt)
}

// inferInput infers an input schema; untyped inputs accept any object.
func inferInput(t reflect.Type) (json.RawMessage, error) {
	switch {
	case t == rawMessageType || t == anyType:
		return json.RawMessage(`{"type":"object"}`), nil
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem() == anyType:
		return json.RawMessage(`{"type":"object"}`), nil
	}
	return schema.ForType(t)
}

// checkName applies the 2025-11-25 tool name rules: 1 to 128 characters of
// A-Z, a-z, 0-9, '_', '-' and '.'.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("name must not be empty")
	}
	if len(name) > 128 {
		return fmt.Errorf("name is %d characters long; at most 128 are allowed", len(name))
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			return fmt.Errorf("name has %q at offset %d; only A-Z, a-z, 0-9, '_', '-' and '.' are allowed", r, i)
		}
	}
	return nil
}
