package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// PromptRequest is what a prompt handler learns about a prompts/get request
// besides its arguments: the request (peer, headers, principal) and the
// prompt asked for.
type PromptRequest struct {
	*Request
	// Name is the prompt's name.
	Name string
	// Prompt is the prompt's definition as registered.
	Prompt *mcp.Prompt
}

// PromptFunc handles prompts/get for one prompt. args holds the arguments
// the client sent (every one a string), each required argument of the
// prompt's definition among them; arguments the definition does not declare
// are passed on as well.
//
// What it returns becomes the result; a nil result is a result with no
// messages. A non-nil error is answered as a JSON-RPC error:
//   - a *jsonrpc.Error as itself;
//   - a *PromptArgumentError (an argument value the prompt cannot use) as
//     -32602 naming the argument;
//   - anything else, and a panic, as -32603: the prompt failed.
type PromptFunc func(ctx context.Context, req *PromptRequest, args map[string]string) (*mcp.GetPromptResult, error)

// PromptArgumentError reports an argument value a prompt cannot use; a
// handler returns it to answer prompts/get with -32602 (invalid params)
// naming the argument, rather than -32603.
type PromptArgumentError struct {
	Argument string
	Reason   string
}

func (e *PromptArgumentError) Error() string {
	return fmt.Sprintf("argument %q: %s", e.Argument, e.Reason)
}

// prompt is a registered prompt.
type prompt struct {
	def    *mcp.Prompt
	handle PromptFunc
}

// promptRegistry holds the prompts; prompts/list and prompts/get join the
// method table with the first one.
type promptRegistry struct {
	methods sync.Mutex  // held while the prompt methods join the table
	served  atomic.Bool // the prompt methods are this registry's
	mu      sync.RWMutex
	set     sortedSet[*prompt] // in prompts/list order
}

// AddPrompt registers a prompt template served by prompts/get. The first
// prompt adds prompts/list and prompts/get to the method table, so the
// server declares the prompts capability with listChanged. A nil or unnamed
// prompt, an argument without a name or named twice, a nil handler and a
// name already registered are returned as a *RegistrationError (Kind
// "prompt"); AddPrompt never panics. The definition is copied. Connected
// clients are told the list changed (notifications/prompts/list_changed).
func AddPrompt(s *Server, p *mcp.Prompt, h PromptFunc) error {
	if p == nil {
		return &RegistrationError{Kind: "prompt", Reason: "prompt definition is nil"}
	}
	if h == nil {
		return &RegistrationError{Kind: "prompt", Name: p.Name, Reason: "handler is nil"}
	}
	if p.Name == "" || strings.TrimSpace(p.Name) != p.Name {
		return &RegistrationError{Kind: "prompt", Name: p.Name, Reason: "name must be non-empty, without surrounding spaces"}
	}
	seen := make(map[string]bool, len(p.Arguments))
	for i, a := range p.Arguments {
		if a.Name == "" {
			return &RegistrationError{Kind: "prompt", Name: p.Name, Reason: fmt.Sprintf("arguments[%d] has no name", i)}
		}
		if seen[a.Name] {
			return &RegistrationError{Kind: "prompt", Name: p.Name, Reason: fmt.Sprintf("argument %q is declared twice", a.Name)}
		}
		seen[a.Name] = true
	}
	def := *p
	def.Arguments = slices.Clone(p.Arguments)
	def.Icons = slices.Clone(p.Icons)
	if err := s.ensurePromptMethods(); err != nil {
		return err
	}
	r := &s.prompts
	r.mu.Lock()
	added := r.set.add(def.Name, &prompt{def: &def, handle: h})
	r.mu.Unlock()
	if !added {
		return &RegistrationError{Kind: "prompt", Name: def.Name, Reason: "a prompt with this name is already registered"}
	}
	s.listChanged(changedPrompts)
	return nil
}

// RemovePrompt unregisters a prompt and tells connected clients the list
// changed. It reports whether the prompt existed. The prompts capability
// stays declared.
func (s *Server) RemovePrompt(name string) bool {
	r := &s.prompts
	r.mu.Lock()
	ok := r.set.remove(name)
	r.mu.Unlock()
	if ok {
		s.listChanged(changedPrompts)
	}
	return ok
}

// Prompts returns the registered prompts in list order.
func (s *Server) Prompts() []*mcp.Prompt {
	r := &s.prompts
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*mcp.Prompt, 0, len(r.set.names))
	for _, p := range r.set.values() {
		out = append(out, p.def)
	}
	return out
}

// ensurePromptMethods adds prompts/list and prompts/get to the method
// table, and so the prompts capability, when the first prompt is
// registered. A table that already has them from AddMethod is an error: the
// registry would not be the one serving them.
func (s *Server) ensurePromptMethods() error {
	r := &s.prompts
	r.methods.Lock()
	defer r.methods.Unlock()
	if r.served.Load() {
		return nil
	}
	listChanged := json.RawMessage(`{"listChanged":true}`)
	if s.hasMethod(mcp.MethodListPrompts) || s.hasMethod(mcp.MethodGetPrompt) {
		return &RegistrationError{Kind: "prompt", Reason: "prompts/list or prompts/get is already in the method table (added with AddMethod)"}
	}
	if err := s.addMethod(MethodSpec{Name: mcp.MethodListPrompts, Capability: "prompts", CapabilityValue: listChanged, Cacheable: true}, s.listPrompts); err != nil {
		return err
	}
	if err := s.addMethod(MethodSpec{Name: mcp.MethodGetPrompt, Capability: "prompts", CapabilityValue: listChanged, NameParam: "name", Input: true}, s.getPrompt); err != nil {
		return err
	}
	r.served.Store(true)
	return nil
}

// listPrompts serves prompts/list: one page in name order, with a cursor
// naming the last prompt of the page.
func (s *Server) listPrompts(_ context.Context, req *Request) (any, error) {
	var p mcp.ListPromptsParams
	if err := decodeParams(req.Method, req.Params, &p); err != nil {
		return nil, err
	}
	r := &s.prompts
	r.mu.RLock()
	defer r.mu.RUnlock()
	prompts, next, jerr := r.set.page(promptCursorPrefix, p.Cursor, s.cfg.pageSize, s.keep(req, ListPrompts))
	if jerr != nil {
		return nil, jerr
	}
	res := &mcp.ListPromptsResult{Prompts: make([]*mcp.Prompt, len(prompts)), NextCursor: next}
	for i, pr := range prompts {
		res.Prompts[i] = pr.def
	}
	return res, nil
}

// getPromptParams are the params of prompts/get as read: arguments raw, so
// that a value that is no string is named.
type getPromptParams struct {
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      mcp.Meta        `json:"_meta"`
}

// getPrompt serves prompts/get: an unknown prompt, arguments that are not
// an object of strings and a missing required argument are -32602.
func (s *Server) getPrompt(ctx context.Context, req *Request) (any, error) {
	if len(req.Params) == 0 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: "name" is required`)
	}
	var p getPromptParams
	if err := decodeParams(req.Method, req.Params, &p); err != nil {
		return nil, err
	}
	if p.Name == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: "name" is required`)
	}
	name := *p.Name
	s.prompts.mu.RLock()
	pr, _ := s.prompts.set.get(name)
	s.prompts.mu.RUnlock()
	if pr == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt: %q", name)
	}
	args, jerr := promptArguments(p.Arguments)
	if jerr != nil {
		return nil, jerr
	}
	var missing []string
	for _, a := range pr.def.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "prompt %q: missing required argument %q", name, missing[0])
	default:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "prompt %q: missing required arguments %s", name, quoteAll(missing))
	}
	res, err := s.runPrompt(ctx, &PromptRequest{Request: req, Name: name, Prompt: pr.def}, pr, args)
	if err != nil {
		return nil, s.promptError(name, err)
	}
	if res == nil {
		res = &mcp.GetPromptResult{}
	}
	for i, m := range res.Messages {
		if m.Content == nil || m.Role != mcp.RoleUser && m.Role != mcp.RoleAssistant {
			s.cfg.logger.Error("prompt handler returned an invalid message", "prompt", name, "index", i, "role", m.Role)
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "prompt %q produced an invalid message (messages[%d] needs a content block and role user or assistant)", name, i)
		}
	}
	return res, nil
}

// promptArguments reads prompts/get arguments: absent is none; otherwise an
// object whose every value is a string.
func promptArguments(raw json.RawMessage) (map[string]string, *jsonrpc.Error) {
	args := map[string]string{}
	if len(raw) == 0 {
		return args, nil
	}
	if raw[0] != '{' {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: "arguments" must be an object of strings, not %s`, jsonKind(raw))
	}
	var members map[string]json.RawMessage
	if err := wirejson.Unmarshal(raw, &members); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: "arguments": %v`, err)
	}
	for k, v := range members {
		if len(v) == 0 || v[0] != '"' {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: argument %q must be a string, not %s`, k, jsonKind(v))
		}
		var str string
		if err := wirejson.Unmarshal(v, &str); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: argument %q: %v`, k, err)
		}
		args[k] = str
	}
	return args, nil
}

// jsonKind names the JSON type of a valid value, for error messages.
func jsonKind(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// runPrompt calls the handler, recovering a panic as an internal error.
func (s *Server) runPrompt(ctx context.Context, req *PromptRequest, pr *prompt, args map[string]string) (res *mcp.GetPromptResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.logger.Error("prompt handler panicked", "prompt", req.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res, err = nil, errPromptPanic
		}
	}()
	return pr.handle(ctx, req, args)
}

var errPromptPanic = errors.New("internal error")

// promptError routes a handler error: a *jsonrpc.Error as itself, a
// *PromptArgumentError as -32602, anything else as -32603.
func (s *Server) promptError(name string, err error) *jsonrpc.Error {
	if je, ok := jsonrpc.AsError(err); ok {
		return je
	}
	var ae *PromptArgumentError
	if errors.As(err, &ae) {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "prompt %q: %v", name, ae)
	}
	if err == errPromptPanic {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "prompt %q failed with an internal error", name)
	}
	s.cfg.logger.Debug("prompt handler failed", "prompt", name, "error", err)
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "prompt %q failed: %v", name, err)
}
