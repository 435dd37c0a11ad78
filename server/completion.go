package server

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// CompleteRequest is what a completion handler learns about a
// completion/complete request.
type CompleteRequest struct {
	*Request
	// Ref is what is being completed: a prompt (mcp.RefPrompt) or a
	// resource template (mcp.RefResource, URI holding the template).
	Ref mcp.CompletionReference
	// Prompt is the prompt's definition for a ref/prompt; Template the
	// template's for a ref/resource.
	Prompt   *mcp.Prompt
	Template *mcp.ResourceTemplate
	// Argument is the name of the prompt argument or template variable
	// being completed, Value what the user has typed of it so far.
	Argument string
	Value    string
	// Context holds the arguments already resolved (never nil).
	Context map[string]string
}

// CompleteFunc suggests values for one prompt argument or template
// variable. A nil result is no suggestion. A result of more than
// mcp.MaxCompletionValues values is cut to that many, with HasMore set and
// Total, when unset, the full count. Errors are answered as for a
// ResourceFunc: a *jsonrpc.Error as itself, anything else, and a panic, as
// -32603.
type CompleteFunc func(ctx context.Context, req *CompleteRequest) (*mcp.Completion, error)

// CompleteFromList returns a CompleteFunc suggesting the values that start
// with what was typed, compared case-insensitively (Unicode simple case
// folding), in the order given.
func CompleteFromList(values ...string) CompleteFunc {
	values = slices.Clone(values)
	return func(_ context.Context, req *CompleteRequest) (*mcp.Completion, error) {
		out := []string{}
		for _, v := range values {
			if hasFoldPrefix(v, req.Value) {
				out = append(out, v)
			}
		}
		return &mcp.Completion{Values: out}, nil
	}
}

// hasFoldPrefix reports whether s starts with prefix under case folding,
// comparing rune by rune (a folded character may differ in byte length).
func hasFoldPrefix(s, prefix string) bool {
	rs, rp := []rune(s), []rune(prefix)
	if len(rp) > len(rs) {
		return false
	}
	return strings.EqualFold(string(rs[:len(rp)]), prefix)
}

type completionKey struct{ ref, name, arg string }

// completionRegistry holds the completion handlers; completion/complete
// joins the method table with the first.
type completionRegistry struct {
	methodGate
	mu    sync.RWMutex
	byKey map[completionKey]CompleteFunc
}

// AddPromptCompletion completes the argument arg of the prompt named
// prompt. The prompt need not be registered yet. The first completion adds
// completion/complete to the method table, so the server declares the
// completions capability. Empty names, a nil handler and a completion
// already registered for the argument are returned as a *RegistrationError
// (Kind "completion").
func AddPromptCompletion(s *Server, prompt, arg string, f CompleteFunc) error {
	return s.addCompletion(completionKey{mcp.RefPrompt, prompt, arg}, f)
}

// AddTemplateCompletion completes the variable varName of the resource
// template uriTemplate (completion/complete with ref/resource naming the
// template), as WithVarCompletion does at AddResourceTemplate. The template
// need not be registered yet. Errors are as for AddPromptCompletion.
func AddTemplateCompletion(s *Server, uriTemplate, varName string, f CompleteFunc) error {
	return s.addCompletion(completionKey{mcp.RefResource, uriTemplate, varName}, f)
}

func (s *Server) addCompletion(k completionKey, f CompleteFunc) error {
	name := k.name + " " + k.arg
	if k.name == "" || k.arg == "" {
		return &RegistrationError{Kind: "completion", Name: name, Reason: "the prompt or template and the argument must be named"}
	}
	if f == nil {
		return &RegistrationError{Kind: "completion", Name: name, Reason: "handler is nil"}
	}
	if err := s.ensureCompletionMethod(); err != nil {
		return err
	}
	r := &s.completions
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byKey[k]; dup {
		return &RegistrationError{Kind: "completion", Name: name, Reason: "a completion for this argument is already registered"}
	}
	if r.byKey == nil {
		r.byKey = map[completionKey]CompleteFunc{}
	}
	r.byKey[k] = f
	return nil
}

// ensureCompletionMethod adds completion/complete to the method table, and
// so the completions capability, with the first completion.
func (s *Server) ensureCompletionMethod() error {
	return s.joinMethods(&s.completions.methodGate, "completion",
		registryMethod{MethodSpec{Name: mcp.MethodComplete, Capability: "completions"}, s.complete})
}

// completeParams are the params of completion/complete as read: missing
// members are told from empty ones.
type completeParams struct {
	Ref      *mcp.CompletionReference `json:"ref"`
	Argument *struct {
		Name  *string `json:"name"`
		Value string  `json:"value"`
	} `json:"argument"`
	Context *mcp.CompletionContext `json:"context"`
	Meta    mcp.Meta               `json:"_meta"`
}

// complete serves completion/complete. An unknown prompt or template, or an
// argument it does not declare, is -32602; a known argument nothing
// completes gets no values.
func (s *Server) complete(ctx context.Context, req *Request) (any, error) {
	var p completeParams
	if err := decodeParams(req.Method, req.Params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Ref == nil:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid completion/complete params: "ref" is required`)
	case p.Argument == nil || p.Argument.Name == nil:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid completion/complete params: "argument.name" is required`)
	}
	cr := &CompleteRequest{Request: req, Ref: *p.Ref, Argument: *p.Argument.Name, Value: p.Argument.Value, Context: map[string]string{}}
	if p.Context != nil {
		for k, v := range p.Context.Arguments {
			cr.Context[k] = v
		}
	}
	key := completionKey{p.Ref.Type, "", cr.Argument}
	switch p.Ref.Type {
	case mcp.RefPrompt:
		key.name = p.Ref.Name
		pr, jerr := s.lookupPrompt(p.Ref.Name)
		if jerr != nil {
			return nil, jerr
		}
		if !slices.ContainsFunc(pr.def.Arguments, func(a mcp.PromptArgument) bool { return a.Name == cr.Argument }) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "prompt %q has no argument %q", p.Ref.Name, cr.Argument)
		}
		cr.Prompt = pr.def
	default: // mcp.RefResource: the reference decoder refuses other types
		key.name = p.Ref.URI
		reg := &s.resources
		reg.mu.RLock()
		t, _ := reg.tmpls.get(p.Ref.URI)
		_, static := reg.static.get(p.Ref.URI)
		reg.mu.RUnlock()
		switch {
		case t != nil:
		case static:
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "resource %q is no template: it has no argument %q", p.Ref.URI, cr.Argument)
		default:
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown resource template: %q", p.Ref.URI)
		}
		if !t.tmpl.Has(cr.Argument) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "resource template %q has no variable %q", p.Ref.URI, cr.Argument)
		}
		cr.Template = t.def
	}
	s.completions.mu.RLock()
	f := s.completions.byKey[key]
	s.completions.mu.RUnlock()
	res := &mcp.CompleteResult{}
	if f == nil {
		return res, nil
	}
	c, err := runHandler(s, "completion", "argument", cr.Argument, func() (*mcp.Completion, error) { return f(ctx, cr) })
	if err != nil {
		if je, ok := jsonrpc.AsError(err); ok {
			return nil, je
		}
		if err == errHandlerPanic {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "completion of %q failed with an internal error", cr.Argument)
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "completion of %q failed: %v", cr.Argument, err)
	}
	if c != nil {
		res.Completion = *c
	}
	if n := len(res.Completion.Values); n > mcp.MaxCompletionValues {
		res.Completion.Values = slices.Clone(res.Completion.Values[:mcp.MaxCompletionValues])
		res.Completion.HasMore = true
		if res.Completion.Total == nil {
			res.Completion.Total = &n
		}
	}
	return res, nil
}
