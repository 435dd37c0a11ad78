package gateway

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/names"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// target is what a tools/call, prompts/get, resources/read or
// completion/complete asks for, decoded once from the request's params by
// the strict reader (exact member names, no name twice at any depth, valid
// UTF-8). Tracing, personas, rate limits, audit, enrichment, routing and
// forwarding all read this one value, and what is forwarded is built from
// it: no later step reads the params again, so none can see another
// request than the one that was decided on.
type target struct {
	method  string
	feature policy.Feature
	// name is the tool or prompt name, the resource URI, or what a
	// completion's ref names (a prompt name, or a resource or template URI).
	name string
	// arguments are a tools/call's or prompts/get's arguments (an object,
	// checked to its full depth; nil when absent or null).
	arguments json.RawMessage
	// progressToken is _meta.progressToken (a string or an integer), nil
	// when absent.
	progressToken json.RawMessage
	// meta is _meta as received (read for its trace context), nil when
	// absent or null.
	meta json.RawMessage
	// task, inputResponses and requestState are a tools/call's members of
	// those names, nil when absent or null.
	task, inputResponses, requestState json.RawMessage
	// ref, argument and context are a completion/complete's.
	ref               mcp.CompletionReference
	argument, context json.RawMessage
}

// targetParams are the members of the four methods' params the gateway
// reads; which are allowed depends on the method (parseTarget).
type targetParams struct {
	Name           *string                  `json:"name"`
	URI            *string                  `json:"uri"`
	Arguments      json.RawMessage          `json:"arguments"`
	Meta           json.RawMessage          `json:"_meta"`
	Task           json.RawMessage          `json:"task"`
	InputResponses json.RawMessage          `json:"inputResponses"`
	RequestState   json.RawMessage          `json:"requestState"`
	Ref            *mcp.CompletionReference `json:"ref"`
	Argument       json.RawMessage          `json:"argument"`
	Context        json.RawMessage          `json:"context"`
}

// metaParams is the part of _meta the gateway reads.
type metaParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
}

// completionArgument is completion/complete's argument.
type completionArgument struct {
	Name  *string `json:"name"`
	Value *string `json:"value"`
}

// targeted reports the feature a method names an item of, and whether it
// is one of the four methods the gateway decides on.
func targeted(method string) (policy.Feature, bool) {
	switch method {
	case mcp.MethodCallTool:
		return policy.Tools, true
	case mcp.MethodGetPrompt:
		return policy.Prompts, true
	case mcp.MethodReadResource:
		return policy.Resources, true
	case mcp.MethodComplete:
		return policy.Prompts, true // or Resources, by the ref's type
	}
	return "", false
}

// parseTarget decodes a request's params once, strictly. A params object
// that is malformed, repeats a name, spells a member with other case, lacks
// the name (or URI, or ref) or names the empty string is -32602: the
// gateway never decides on a name it is not sure of.
func parseTarget(method string, params json.RawMessage) (*target, *jsonrpc.Error) {
	f, _ := targeted(method)
	t := &target{method: method, feature: f}
	var p targetParams
	if len(params) == 0 || string(params) == "null" {
		return nil, invalidParams(method, "params are missing")
	}
	if params[0] != '{' {
		return nil, invalidParams(method, "params must be an object")
	}
	if err := wirejson.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(method, "%v", err)
	}
	t.meta = nonNull(p.Meta)
	if t.meta != nil {
		if t.meta[0] != '{' {
			return nil, invalidParams(method, "_meta must be an object")
		}
		var m metaParams
		if err := wirejson.Unmarshal(t.meta, &m); err != nil {
			return nil, invalidParams(method, "_meta: %v", err)
		}
		tok, err := progressTokenOf(nonNull(m.ProgressToken))
		if err != nil {
			return nil, invalidParams(method, "%v", err)
		}
		t.progressToken = tok
	}
	switch method {
	case mcp.MethodCallTool, mcp.MethodGetPrompt:
		if p.Name == nil {
			return nil, invalidParams(method, `"name" is required`)
		}
		t.name = *p.Name
		t.arguments = nonNull(p.Arguments)
		if t.arguments != nil && t.arguments[0] != '{' {
			return nil, invalidParams(method, "arguments must be an object")
		}
		t.inputResponses, t.requestState = nonNull(p.InputResponses), nonNull(p.RequestState)
		if method == mcp.MethodCallTool {
			t.task = nonNull(p.Task)
		}
	case mcp.MethodReadResource:
		if p.URI == nil {
			return nil, invalidParams(method, `"uri" is required`)
		}
		t.name = *p.URI
		t.inputResponses, t.requestState = nonNull(p.InputResponses), nonNull(p.RequestState)
	case mcp.MethodComplete:
		if p.Ref == nil {
			return nil, invalidParams(method, `"ref" is required`)
		}
		t.ref = *p.Ref
		switch t.ref.Type {
		case mcp.RefPrompt:
			t.name = t.ref.Name
		case mcp.RefResource:
			t.feature, t.name = policy.Resources, t.ref.URI
		default:
			return nil, invalidParams(method, "ref.type %q is neither %s nor %s", t.ref.Type, mcp.RefPrompt, mcp.RefResource)
		}
		var a completionArgument
		if p.Argument == nil || p.Argument[0] != '{' {
			return nil, invalidParams(method, `"argument" must be an object with a string "name"`)
		}
		if err := wirejson.Unmarshal(p.Argument, &a); err != nil {
			return nil, invalidParams(method, "argument: %v", err)
		}
		if a.Name == nil {
			return nil, invalidParams(method, `"argument.name" is required`)
		}
		t.argument, t.context = p.Argument, nonNull(p.Context)
		if t.context != nil && t.context[0] != '{' {
			return nil, invalidParams(method, "context must be an object")
		}
	}
	if err := names.Problem(t.name); err != "" {
		return nil, invalidParams(method, "%s %s", targetWord(t), err)
	}
	return t, nil
}

// targetWord names what a target's name is, for messages.
func targetWord(t *target) string {
	switch {
	case t.method == mcp.MethodComplete && t.feature == policy.Resources:
		return "ref.uri"
	case t.method == mcp.MethodComplete:
		return "ref.name"
	case t.feature == policy.Resources:
		return "uri"
	}
	return "name"
}

// progressTokenOf checks a progress token: a string or an integer.
func progressTokenOf(tok json.RawMessage) (json.RawMessage, error) {
	if tok == nil {
		return nil, nil
	}
	if mcp.ValidProgressToken(tok) {
		return tok, nil
	}
	return nil, &wirejson.Error{Pointer: "/_meta/progressToken", Reason: "must be a string or an integer"}
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

func invalidParams(method, format string, args ...any) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid "+method+" params: "+format, args...)
}

// targetKey carries a request's parsed target (or why it has none) on the
// context, from the first middleware that parses it to the later ones.
type targetKey struct{}

type parsed struct {
	t   *target
	err *jsonrpc.Error
}

// targetFor returns the request's target, parsing its params the first
// time (the outermost middleware) and reading the result from ctx after.
// ok is false for the methods the gateway does not decide on.
func targetFor(ctx context.Context, req *jsonrpc.Request) (context.Context, *target, *jsonrpc.Error, bool) {
	if _, ok := targeted(req.Method); !ok {
		return ctx, nil, nil, false
	}
	if p, ok := ctx.Value(targetKey{}).(*parsed); ok {
		return ctx, p.t, p.err, true
	}
	t, err := parseTarget(req.Method, req.Params)
	return context.WithValue(ctx, targetKey{}, &parsed{t: t, err: err}), t, err, true
}
