package server

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// ToolFunc handles a call to a typed tool. in is the arguments, already
// validated against the tool's inputSchema and decoded.
//
// What it returns becomes the result:
//   - Out of any type but those below: structuredContent, plus the same JSON
//     as a text block for clients that read only content. The inferred
//     outputSchema of a pointer is the pointed-to value's, so a nil pointer
//     breaks it (a -32603 error saying the tool returned nil); a nil slice is
//     sent as [] and a nil map as {}.
//   - Out = string: one text block, no structured content.
//   - Out = *mcp.CallToolResult: sent as it is (the handler builds content).
//   - a non-nil error: an isError result carrying the error's text, so the
//     model can read it. A *jsonrpc.Error instead answers with that JSON-RPC
//     error; an error with a ToolResult method supplies its own result.
type ToolFunc[In, Out any] func(ctx context.Context, req *CallRequest, in In) (Out, error)

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
	headers    []mcp.ParamHeader // x-mcp-header annotations of the inputSchema
	tasks      mcp.TaskSupport   // forbidden, optional or required (task.go)
	deferTask  bool              // the handler starts its task (WithDeferredTask)
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
	if err := checkToolDef(t, h == nil); err != nil {
		return err
	}
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()

	inRaw := t.InputSchema
	if len(inRaw) == 0 {
		var err error
		if inRaw, err = inferInput(inType); err != nil {
			return &RegistrationError{Kind: "tool", Name: t.Name, Reason: "cannot infer inputSchema", Err: err}
		}
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
		var err error
		if outRaw, err = schema.ForType(outType); err != nil {
			return &RegistrationError{Kind: "tool", Name: t.Name, Reason: "cannot infer outputSchema", Err: err}
		}
	}
	rt, err := newTool(t, inRaw, outRaw, opts)
	if err != nil {
		return err
	}
	rt.invoke = func(ctx context.Context, req *CallRequest, args []byte) (*mcp.CallToolResult, error) {
		var in In
		if err := wirejson.Unmarshal(args, &in); err != nil {
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
			return textResult(any(out).(string)), nil
		}
		raw, err := encodeOutput(outType, out)
		if err != nil {
			return nil, &outputError{tool: req.Name, err: fmt.Errorf("cannot encode output: %w", err)}
		}
		if string(raw) == "null" && rt.output != nil && s.cfg.validateOutput {
			// A nil pointer: the schema is the pointed-to value's (see
			// package schema), so nil is the tool's bug, said plainly.
			if verr := rt.output.ValidateJSON(raw); verr != nil {
				return nil, &outputError{tool: req.Name, err: fmt.Errorf("the tool returned nil, which encodes as null: %w", verr)}
			}
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
			StructuredContent: raw,
		}, nil
	}
	return s.register(rt)
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// encodeOutput encodes a typed tool's output as structuredContent. A nil
// slice is [] and a nil map {}, as their inferred schemas ("type": "array",
// "type": "object") require; encoding/json would write null. A type with its
// own MarshalJSON, a []byte (a base64 string) and a nil pointer are encoded
// as encoding/json encodes them.
func encodeOutput[Out any](t reflect.Type, out Out) ([]byte, error) {
	if !t.Implements(marshalerType) {
		switch t.Kind() {
		case reflect.Slice:
			if t.Elem().Kind() != reflect.Uint8 && reflect.ValueOf(out).IsNil() {
				return []byte("[]"), nil
			}
		case reflect.Map:
			if reflect.ValueOf(out).IsNil() {
				return []byte("{}"), nil
			}
		}
	}
	return json.Marshal(out)
}

// newTool compiles a tool's schemas and prepares its two views: legacy
// sessions never see 2026-only shapes.
func newTool(t *mcp.Tool, inRaw, outRaw json.RawMessage, opts []ToolOption) (*tool, error) {
	input, err := schema.Compile(inRaw)
	if err != nil {
		return nil, &RegistrationError{Kind: "tool", Name: t.Name, Reason: "invalid inputSchema", Err: err}
	}
	if input.RootType() != "object" {
		return nil, &RegistrationError{Kind: "tool", Name: t.Name, Reason: `inputSchema root must have "type": "object"`}
	}
	headers, err := mcp.ParamHeaders(input.Raw())
	if err != nil {
		return nil, &RegistrationError{Kind: "tool", Name: t.Name, Reason: "invalid x-mcp-header annotation", Err: err}
	}
	var output *schema.Schema
	if len(outRaw) > 0 {
		if output, err = schema.Compile(outRaw); err != nil {
			return nil, &RegistrationError{Kind: "tool", Name: t.Name, Reason: "invalid outputSchema", Err: err}
		}
	}
	var tc toolConfig
	for _, o := range opts {
		if o != nil {
			o.applyTool(&tc)
		}
	}
	tasks := mcp.TaskForbidden
	if t.Execution != nil && t.Execution.TaskSupport != "" {
		tasks = t.Execution.TaskSupport
	}
	if tc.taskSupport != "" {
		tasks = tc.taskSupport
	}
	switch tasks {
	case mcp.TaskForbidden, mcp.TaskOptional, mcp.TaskRequired:
	default:
		return nil, &RegistrationError{Kind: "tool", Name: t.Name, Reason: fmt.Sprintf("unknown taskSupport %q (forbidden, optional or required)", tasks)}
	}
	modern := *t
	modern.InputSchema = input.Raw()
	modern.Execution = nil // tasks left the core in 2026-07-28
	if output != nil {
		modern.OutputSchema = output.Raw()
	}
	legacy := *t
	legacy.InputSchema = input.Raw()
	if tasks != mcp.TaskForbidden {
		legacy.Execution = &mcp.ToolExecution{TaskSupport: tasks}
	}
	outObject := output != nil && output.RootType() == "object"
	if outObject {
		legacy.OutputSchema = output.Raw()
	} else {
		legacy.OutputSchema = nil
	}
	return &tool{
		name: t.Name, legacy: &legacy, modern: &modern, input: input, output: output, outObject: outObject,
		timeout: tc.timeout, hasTimeout: tc.hasTimeout, headers: headers, tasks: tasks, deferTask: tc.deferTask,
	}, nil
}

// checkToolDef is what AddTool and AddRawTool check before anything else:
// a definition, a handler (noHandler when it is nil) and a valid name; what
// fails is a *RegistrationError.
func checkToolDef(t *mcp.Tool, noHandler bool) error {
	if t == nil {
		return &RegistrationError{Kind: "tool", Reason: "tool definition is nil"}
	}
	if noHandler {
		return &RegistrationError{Kind: "tool", Name: t.Name, Reason: "handler is nil"}
	}
	if err := checkName(t.Name); err != nil {
		return &RegistrationError{Kind: "tool", Name: t.Name, Reason: err.Error()}
	}
	return nil
}

// RawToolFunc handles a call to a tool registered with AddRawTool: the
// arguments arrive as validated JSON in req.Arguments, and the handler
// builds the whole result. Errors are routed as for ToolFunc.
type RawToolFunc func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error)

// AddRawTool registers a tool whose schemas are given, not inferred from Go
// types: a proxied or generated tool. t.InputSchema is required (root type
// object) and, like t.OutputSchema, is compiled once here and served as
// written; arguments are validated against it before h runs, and
// structuredContent against the output schema after. The name is checked
// against the 2025-11-25 rule. It never panics.
func AddRawTool(s *Server, t *mcp.Tool, h RawToolFunc, opts ...ToolOption) error {
	if err := checkToolDef(t, h == nil); err != nil {
		return err
	}
	if len(t.InputSchema) == 0 {
		return &RegistrationError{Kind: "tool", Name: t.Name, Reason: "inputSchema is required"}
	}
	rt, err := newTool(t, t.InputSchema, t.OutputSchema, opts)
	if err != nil {
		return err
	}
	rt.invoke = func(ctx context.Context, req *CallRequest, _ []byte) (*mcp.CallToolResult, error) {
		return h(ctx, req)
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

// textResult is the result of a tool that returns a string: one text block,
// made in one allocation rather than three (result, content slice, block).
func textResult(text string) *mcp.CallToolResult {
	r := &struct {
		res     mcp.CallToolResult
		content [1]mcp.Content
		text    mcp.TextContent
	}{}
	r.text.Text = text
	r.content[0] = &r.text
	r.res.Content = r.content[:]
	return &r.res
}
