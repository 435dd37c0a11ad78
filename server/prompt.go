package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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
	methodGate
	mu  sync.RWMutex
	set sortedSet[*prompt] // in prompts/list order
}

// AddPrompt registers a prompt template served by prompts/get. The first
// prompt adds prompts/list and prompts/get to the method table, so the
// server declares the prompts capability with listChanged. A nil or unnamed
// prompt, an argument without a name or named twice, a nil handler and a
// name already registered are returned as a *RegistrationError (Kind
// "prompt"); AddPrompt never panics. The definition is copied. Connected
// clients are told the list changed (notifications/prompts/list_changed).
func AddPrompt(s *Server, p *mcp.Prompt, h PromptFunc) error {
	if err := checkEntry("prompt", p, h == nil, "name", func(p *mcp.Prompt) (string, string) { return p.Name, p.Name }); err != nil {
		return err
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
	if !addListed(s, &s.prompts.mu, &s.prompts.set, def.Name, &prompt{def: &def, handle: h}, changedPrompts) {
		return &RegistrationError{Kind: "prompt", Name: def.Name, Reason: "a prompt with this name is already registered"}
	}
	return nil
}

// RemovePrompt unregisters a prompt and tells connected clients the list
// changed. It reports whether the prompt existed. The prompts capability
// stays declared.
func (s *Server) RemovePrompt(name string) bool {
	return removeListed(s, &s.prompts.mu, &s.prompts.set, name, changedPrompts)
}

// Prompts returns the registered prompts in list order.
func (s *Server) Prompts() []*mcp.Prompt {
	return listedDefs(&s.prompts.mu, &s.prompts.set, promptDef)
}

func promptDef(p *prompt) *mcp.Prompt { return p.def }

// ensurePromptMethods adds prompts/list and prompts/get to the method
// table, and so the prompts capability, when the first prompt is
// registered.
func (s *Server) ensurePromptMethods() error {
	listChanged := json.RawMessage(`{"listChanged":true}`)
	return s.joinMethods(&s.prompts.methodGate, "prompt",
		registryMethod{MethodSpec{Name: mcp.MethodListPrompts, Capability: "prompts", CapabilityValue: listChanged, Cacheable: true},
			listMethod(s, &s.prompts.mu, &s.prompts.set, promptCursorPrefix, ListPrompts, promptDef, promptsPage)},
		registryMethod{MethodSpec{Name: mcp.MethodGetPrompt, Capability: "prompts", CapabilityValue: listChanged, NameParam: "name", Input: true}, s.getPrompt})
}

// promptsPage is the result of prompts/list: one page in name order, with
// a cursor naming the last prompt of the page.
func promptsPage(prompts []*mcp.Prompt, next string) any {
	return &mcp.ListPromptsResult{Prompts: prompts, NextCursor: next}
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
	pr, jerr := s.lookupPrompt(name)
	if jerr != nil {
		return nil, jerr
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
	preq := &PromptRequest{Request: req, Name: name, Prompt: pr.def}
	res, err := runHandler(s, "prompt", "prompt", name, func() (*mcp.GetPromptResult, error) { return pr.handle(ctx, preq, args) })
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
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: "arguments" must be an object of strings, not %s`, wirejson.KindOf(raw))
	}
	var members map[string]json.RawMessage
	if err := wirejson.Unmarshal(raw, &members); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: "arguments": %v`, err)
	}
	for k, v := range members {
		if len(v) == 0 || v[0] != '"' {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: argument %q must be a string, not %s`, k, wirejson.KindOf(v))
		}
		var str string
		if err := wirejson.Unmarshal(v, &str); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid prompts/get params: argument %q: %v`, k, err)
		}
		args[k] = str
	}
	return args, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// lookupPrompt returns the prompt named name; an unknown prompt is -32602.
func (s *Server) lookupPrompt(name string) (*prompt, *jsonrpc.Error) {
	s.prompts.mu.RLock()
	pr, _ := s.prompts.set.get(name)
	s.prompts.mu.RUnlock()
	if pr == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt: %q", name)
	}
	return pr, nil
}

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
	if err == errHandlerPanic {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "prompt %q failed with an internal error", name)
	}
	s.cfg.logger.Debug("prompt handler failed", "prompt", name, "error", err)
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "prompt %q failed: %v", name, err)
}
