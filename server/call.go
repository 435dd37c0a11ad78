package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// CallRequest is what a tool handler learns about the call besides its input.
type CallRequest struct {
	// Name is the tool's name.
	Name string
	// Arguments are the validated arguments, defaults applied, as JSON.
	Arguments json.RawMessage
	// Meta is the request's _meta, as the client sent it.
	Meta mcp.Meta
	// Peer describes the client and the protocol revision of this request.
	Peer PeerInfo
	// Deadline is when the tool timeout cancels the call; zero for none.
	Deadline time.Time

	progress *progress
}

// PeerInfo describes the caller of a request.
type PeerInfo struct {
	Era                mcp.Era
	ProtocolVersion    string
	ClientInfo         mcp.Implementation
	ClientCapabilities mcp.ClientCapabilities
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

// callTool runs tools/call. It returns a result, or a JSON-RPC error for the
// cases the spec routes there (unknown tool, malformed params, server bugs).
//
// cancel cancels ctx; the tool timeout fires it with ErrTimeout as the cause.
func (ss *Session) callTool(ctx context.Context, cancel context.CancelCauseFunc, params json.RawMessage, peer PeerInfo, w jsonrpc.Sender) (*mcp.CallToolResult, *jsonrpc.Error) {
	p, err := decodeCallParams(params)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tools/call params: %v", err)
	}
	if p.Name == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tools/call params: "name" is required`)
	}
	srv := ss.srv
	t := srv.lookup(p.Name)
	if t == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool: %q", p.Name)
	}
	if p.Task != nil {
		// Task-augmented execution is not offered: execution.taskSupport is
		// "forbidden" for every tool this server hosts.
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "tool %q does not support task-augmented execution", p.Name)
	}
	args := []byte(p.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	val, err := schema.DecodeValue(args)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tools/call params: arguments: %v", err)
	}
	if _, ok := val.(map[string]any); !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid tools/call params: "arguments" must be an object`)
	}
	if t.input.ApplyDefaults(val) {
		if args, err = json.Marshal(val); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot apply argument defaults: %v", err)
		}
	}
	if err := t.input.Validate(val); err != nil {
		// SEP-1303: input errors are tool errors the model can correct.
		return mcp.ErrorResult("invalid arguments for tool %q: %v", p.Name, err), nil
	}

	req := &CallRequest{Name: p.Name, Arguments: args, Meta: p.Meta, Peer: peer}
	if tok, ok := p.Meta[mcp.MetaProgressToken]; ok && tok != nil && w != nil {
		raw, _ := json.Marshal(tok)
		req.progress = &progress{token: raw, w: w}
	}
	timeout := srv.cfg.timeout
	if t.hasTimeout {
		timeout = t.timeout
	}
	res, herr := ss.run(ctx, cancel, t, req, args, timeout)
	req.progress.finish()
	if herr != nil {
		return ss.handlerError(t, herr)
	}
	if res.IsError || t.output == nil {
		return res, nil
	}
	if srv.cfg.validateOutput {
		if len(res.StructuredContent) == 0 {
			return ss.handlerError(t, &outputError{tool: t.name, err: errors.New("structuredContent is missing")})
		}
		if err := t.output.ValidateJSON(res.StructuredContent); err != nil {
			return ss.handlerError(t, &outputError{tool: t.name, err: err})
		}
	}
	return res, nil
}

// run calls the handler in the caller's goroutine, under the timeout,
// recovering a panic. The timeout cancels the handler's context with cause
// ErrTimeout (a timer on the request's own context: no context is derived per
// call); a handler that ignores its context keeps its own request open until
// it returns (Go cannot stop it), and the caller's timeout bounds the wait.
func (ss *Session) run(ctx context.Context, cancel context.CancelCauseFunc, t *tool, req *CallRequest, args []byte, timeout time.Duration) (res *mcp.CallToolResult, err error) {
	if timeout > 0 {
		req.Deadline = time.Now().Add(timeout)
		timer := time.AfterFunc(timeout, func() { cancel(ErrTimeout) })
		defer timer.Stop()
	}
	defer func() {
		if p := recover(); p != nil {
			ss.srv.cfg.logger.Error("tool handler panicked", "tool", t.name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res, err = mcp.ErrorResult("tool %q failed with an internal error", t.name), nil
		}
	}()
	res, err = t.invoke(ctx, req, args)
	if err != nil && timeout > 0 && context.Cause(ctx) == ErrTimeout {
		return timeoutResult(t.name, timeout), nil
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
func (ss *Session) handlerError(t *tool, err error) (*mcp.CallToolResult, *jsonrpc.Error) {
	var oe *outputError
	if errors.As(err, &oe) {
		ss.srv.cfg.logger.Error("tool output breaks its outputSchema", "tool", t.name, "error", oe.err)
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

var callMembers = []string{"name", "arguments", "task", "_meta"}

// decodeCallParams reads tools/call params, scanning the common shape
// without allocating and leaving anything unusual to encoding/json.
func decodeCallParams(params json.RawMessage) (mcp.CallToolParams, error) {
	var p mcp.CallToolParams
	if len(params) == 0 {
		return p, errors.New("params are missing")
	}
	var task, meta []byte
	ok := jsonscan.Members(params, callMembers, func(name, value []byte) bool {
		switch string(name) {
		case "name":
			n, ok := jsonscan.PlainString(value)
			p.Name = string(n)
			return ok
		case "arguments":
			p.Arguments = value
		case "task":
			task = value
		case "_meta":
			meta = value
		}
		return true
	})
	if !ok {
		p = mcp.CallToolParams{}
		return p, json.Unmarshal(params, &p)
	}
	if string(p.Arguments) == "null" {
		p.Arguments = nil
	}
	if task != nil && string(task) != "null" {
		if err := json.Unmarshal(task, &p.Task); err != nil {
			return p, err
		}
	}
	if meta != nil && string(meta) != "null" {
		if err := json.Unmarshal(meta, &p.Meta); err != nil {
			return p, err
		}
	}
	return p, nil
}
