package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// CallRequest is what a tool handler learns about the call besides its
// input: the request (peer, headers, principal, the means to call the
// client) and the call's own details.
type CallRequest struct {
	*Request
	// Name is the tool's name.
	Name string
	// Arguments are the validated arguments as JSON: as the client sent
	// them, with each absent property whose schema declares a default added
	// at the end of its object (a tool whose inputSchema needs a decoded
	// tree, see schema.Check, gets them re-encoded instead).
	Arguments json.RawMessage
	// Deadline is when the tool timeout cancels the call; zero for none.
	Deadline time.Time

	progress *progress
}

// ToolResulter is implemented by errors that carry their own isError result,
// for example retry guidance for the model.
type ToolResulter interface {
	error
	ToolResult() *mcp.CallToolResult
}

// outputError is a tool whose output breaks its own outputSchema: a server
// bug, answered with -32603 and logged.
type outputError struct {
	tool string
	err  error
}

func (e *outputError) Error() string {
	return fmt.Sprintf("tool %q produced output that does not match its outputSchema: %v", e.tool, e.err)
}

// callTool serves tools/call. It returns a result, or a JSON-RPC error for
// the cases the spec routes there (unknown tool, malformed params, server
// bugs); a tool's own failures are isError results.
func (s *Server) callTool(ctx context.Context, r *Request) (any, error) {
	c := callFrom(ctx)
	p, err := decodeCallParams(r.Params)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tools/call params: %v", err)
	}
	if p.name == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tools/call params: "name" is required`)
	}
	t := s.lookup(p.name)
	if t == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool: %q", p.name)
	}
	plan, jerr := s.planTask(r, t, p.task)
	if jerr != nil {
		return nil, jerr
	}
	var token json.RawMessage
	if p.meta != nil {
		if token, err = progressToken(p.meta); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tools/call params: %v", err)
		}
	}
	// CallToolRequestParams.arguments is an optional object: absent, the
	// tool is called with {}; null is no object, and no absence either.
	args := []byte(p.arguments)
	switch {
	case len(args) == 0:
		args = []byte("{}")
	case string(args) == "null":
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tools/call params: "arguments" must be an object, not null`)
	}
	// Read once, strictly, and validated without a tree of Go values where
	// the inputSchema allows (schema.Check): the arguments cost memory near
	// their own size before the handler decodes them, and invalid ones a
	// bounded list of violations (Limits.MaxViolations). Arguments nested past
	// schema.MaxDepth are a tool error too: the model wrote them.
	checked, err := t.input.Check(args, s.cfg.maxViolations)
	if err != nil {
		// Arguments the model wrote wrong (a duplicate member, say) are a
		// tool error it can correct.
		return mcp.ErrorResult("invalid arguments for tool %q: %v", p.name, err), nil
	}
	if checked.Kind != '{' {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tools/call params: "arguments" must be an object`)
	}
	if len(t.headers) > 0 && r.http != nil && r.Peer.Era == mcp.EraModern {
		if err := checkParamHeaders(r.http.Header, t.headers, args); err != nil {
			return nil, err
		}
	}
	if checked.Invalid != nil {
		// SEP-1303: input errors are tool errors the model can correct.
		return mcp.ErrorResult("invalid arguments for tool %q: %v", p.name, checked.Invalid), nil
	}
	args = checked.JSON

	req := &CallRequest{Request: r, Name: p.name, Arguments: args}
	if token != nil && r.sender != nil {
		req.progress = &progress{token: token, w: r.sender}
	}
	timeout := s.cfg.timeout
	if t.hasTimeout {
		timeout = t.timeout
	}
	if plan.on {
		return s.callAsTask(ctx, t, req, args, plan)
	}
	res, herr := s.run(ctx, c.cancel, t, req, args, timeout)
	req.progress.finish()
	return s.finishCall(r, t, res, herr)
}

// finishCall turns what a handler returned into the tools/call answer:
// errors routed to their channel, output checked against the outputSchema,
// structuredContent fitted to the era.
func (s *Server) finishCall(r *Request, t *tool, res *mcp.CallToolResult, herr error) (any, error) {
	if herr != nil {
		return s.handlerError(t, herr)
	}
	if !res.IsError && t.output != nil && s.cfg.validateOutput {
		if len(res.StructuredContent) == 0 {
			return s.handlerError(t, &outputError{tool: t.name, err: errors.New("structuredContent is missing")})
		}
		if err := t.output.ValidateJSON(res.StructuredContent); err != nil {
			return s.handlerError(t, &outputError{tool: t.name, err: err})
		}
	}
	if r.Peer.Era == mcp.EraLegacy && len(res.StructuredContent) > 0 &&
		(res.StructuredContent[0] != '{' || t.output != nil && !t.outObject) {
		// 2025-11-25 requires an object, and a tool listed to legacy
		// sessions without its outputSchema (its root is not an object)
		// sends them none; the text block still carries the value.
		cp := *res
		cp.StructuredContent = nil
		return &cp, nil
	}
	return res, nil
}

// run calls the handler in the caller's goroutine, under the timeout,
// recovering a panic. The timeout cancels the handler's context with cause
// ErrTimeout (a timer on the request's own context: no context is derived per
// call); a handler that ignores its context keeps its own request open until
// it returns (Go cannot stop it), and the caller's timeout bounds the wait.
func (s *Server) run(ctx context.Context, cancel context.CancelCauseFunc, t *tool, req *CallRequest, args []byte, timeout time.Duration) (res *mcp.CallToolResult, err error) {
	if timeout > 0 && cancel != nil {
		req.Deadline = time.Now().Add(timeout)
		timer := time.AfterFunc(timeout, func() { cancel(ErrTimeout) })
		defer timer.Stop()
	}
	defer func() {
		if p := recover(); p != nil {
			s.cfg.logger.Error("tool handler panicked", "tool", t.name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res, err = mcp.ErrorResult("tool %q failed with an internal error", t.name), nil
		}
	}()
	res, err = t.invoke(ctx, req, args)
	if err != nil && timeout > 0 && context.Cause(ctx) == ErrTimeout {
		return timeoutResult(t.name, timeout), nil
	}
	if err == nil && res == nil {
		res = &mcp.CallToolResult{}
	}
	return res, err
}

// ErrTimeout is the cause of a handler's context when the tool timeout
// (WithTimeout) cancels it: context.Cause(ctx) == ErrTimeout.
var ErrTimeout = errors.New("server: tool call timed out")

func timeoutResult(name string, d time.Duration) *mcp.CallToolResult {
	return mcp.ErrorResult("tool %q timed out after %s", name, d)
}

// handlerError routes a handler error to its channel.
func (s *Server) handlerError(t *tool, err error) (*mcp.CallToolResult, error) {
	var oe *outputError
	if errors.As(err, &oe) {
		s.cfg.logger.Error("tool output breaks its outputSchema", "tool", t.name, "error", oe.err)
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "%s", oe.Error())
	}
	if je, ok := jsonrpc.AsError(err); ok {
		return nil, je
	}
	var tr ToolResulter
	if errors.As(err, &tr) {
		if r := tr.ToolResult(); r != nil {
			c := *r
			c.IsError = true
			return &c, nil
		}
	}
	return mcp.ErrorResult("%s", err.Error()), nil
}

// callParams are the members of tools/call params the server reads, raw.
type callParams struct {
	name                  string
	arguments, task, meta json.RawMessage
}

var callMembers = []string{"name", "arguments", "task", "_meta"}

// decodeCallParams reads tools/call params, scanning the common shape
// without allocating and leaving anything unusual to the exact decoder.
func decodeCallParams(params json.RawMessage) (callParams, error) {
	var p callParams
	if len(params) == 0 {
		return p, errors.New("params are missing")
	}
	ok := jsonscan.Members(params, callMembers, func(name, value []byte) bool {
		switch string(name) {
		case "name":
			n, ok := jsonscan.PlainString(value)
			p.name = string(n)
			return ok
		case "arguments":
			p.arguments = value
		case "task":
			p.task = value
		case "_meta":
			p.meta = value
		}
		return true
	})
	if ok {
		if string(p.meta) == "null" {
			p.meta = nil
		}
		return p, nil
	}
	var w struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Task      json.RawMessage `json:"task"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if params[0] != '{' {
		return callParams{}, errors.New("must be an object")
	}
	if err := wirejson.Unmarshal(params, &w); err != nil {
		return callParams{}, err
	}
	if w.Name != nil {
		p.name = *w.Name
	}
	p.arguments, p.task, p.meta = w.Arguments, w.Task, w.Meta
	if string(p.meta) == "null" {
		p.meta = nil
	}
	return p, nil
}

var progressMember = []string{mcp.MetaProgressToken}

// progressToken returns _meta.progressToken, raw, nil when absent. MCP
// allows a string or an integer.
func progressToken(meta json.RawMessage) (json.RawMessage, error) {
	if meta[0] != '{' {
		return nil, errors.New("_meta must be an object")
	}
	var tok []byte
	if !jsonscan.Members(meta, progressMember, func(_, v []byte) bool { tok = v; return true }) {
		var m map[string]json.RawMessage
		if err := wirejson.Unmarshal(meta, &m); err != nil {
			return nil, fmt.Errorf("_meta: %v", err)
		}
		tok = m[mcp.MetaProgressToken]
	}
	if tok == nil || string(tok) == "null" {
		return nil, nil
	}
	if mcp.ValidProgressToken(tok) {
		return tok, nil
	}
	return nil, fmt.Errorf("_meta.progressToken must be a string or an integer, not %s", tok)
}

// checkParamHeaders checks each annotated argument present in the call
// against its Mcp-Param-* header (2026-07-28 over HTTP): missing or
// different is -32020. args are the arguments as received (strictly valid
// JSON, an object); only the annotated members are decoded.
func checkParamHeaders(h http.Header, hps []mcp.ParamHeader, args []byte) *jsonrpc.Error {
	for _, hp := range hps {
		v := argumentAt(args, hp.Path)
		if v == nil {
			continue
		}
		name := mcp.HeaderParamPrefix + hp.Name
		vs := h.Values(name)
		switch len(vs) {
		case 0:
			return headerMismatch("the %s header is required: argument %q is present", name, strings.Join(hp.Path, "."))
		case 1:
		default:
			return headerMismatch("header %s appears %d times", name, len(vs))
		}
		got, err := mcp.DecodeHeaderValue(vs[0])
		if err != nil {
			return headerMismatch("%s: %v", name, err)
		}
		if !mcp.HeaderMatches(got, v) {
			return headerMismatch("%s header value %q does not match argument %q", name, got, strings.Join(hp.Path, "."))
		}
	}
	return nil
}

// argumentAt decodes the argument at path (member names from the root), or
// returns nil when it is absent, null, or under a value that is not an
// object.
func argumentAt(args []byte, path []string) any {
	raw := args
	for _, name := range path {
		raw = bytes.TrimLeft(raw, " \t\r\n")
		if len(raw) == 0 || raw[0] != '{' {
			return nil
		}
		var member []byte
		if !jsonscan.Members(raw, []string{name}, func(_, v []byte) bool { member = v; return true }) {
			var m map[string]json.RawMessage
			if wirejson.Unmarshal(raw, &m) != nil {
				return nil
			}
			member = m[name]
		}
		raw = member
	}
	if raw == nil {
		return nil
	}
	v, err := schema.DecodeValue(raw)
	if err != nil {
		return nil
	}
	return v
}
