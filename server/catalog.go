package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolwire/toolwire/mcp"
)

// What the prompt, resource and completion registries share: their methods
// join the method table with the first entry, their lists are paged and
// filtered alike, adding or removing an entry tells connected clients the
// list changed, and a handler's panic answers its request with -32603.

// methodGate records whether a registry's methods have joined the method
// table; they join once, with the first entry registered.
type methodGate struct {
	joining sync.Mutex  // held while the methods join the table
	served  atomic.Bool // the methods are this registry's
}

// registryMethod is one method a registry serves.
type registryMethod struct {
	spec   MethodSpec
	handle func(context.Context, *Request) (any, error)
}

// joinMethods adds a registry's methods to the method table unless they are
// already its own. A table that already has one of them from AddMethod is a
// *RegistrationError of kind: the registry would not be the one serving it.
func (s *Server) joinMethods(g *methodGate, kind string, methods ...registryMethod) error {
	g.joining.Lock()
	defer g.joining.Unlock()
	if g.served.Load() {
		return nil
	}
	for _, m := range methods {
		if s.hasMethod(m.spec.Name) {
			return &RegistrationError{Kind: kind, Reason: m.spec.Name + " is already in the method table (added with AddMethod)"}
		}
	}
	for _, m := range methods {
		if err := s.addMethod(m.spec, m.handle); err != nil {
			return err
		}
	}
	g.served.Store(true)
	return nil
}

// addListed adds an entry to a registry's set under its lock and tells
// connected clients the list changed; it reports false, changing nothing,
// when the name is taken.
func addListed[T any](s *Server, mu *sync.RWMutex, set *sortedSet[T], name string, v T, what changeSet) bool {
	mu.Lock()
	added := set.add(name, v)
	mu.Unlock()
	if added {
		s.listChanged(what)
	}
	return added
}

// removeListed removes an entry from a registry's set under its lock and,
// when it was there, tells connected clients the list changed.
func removeListed[T any](s *Server, mu *sync.RWMutex, set *sortedSet[T], name string, what changeSet) bool {
	mu.Lock()
	ok := set.remove(name)
	mu.Unlock()
	if ok {
		s.listChanged(what)
	}
	return ok
}

// listedDefs returns the definitions of every entry of a registry's set, in
// list order.
func listedDefs[T, D any](mu *sync.RWMutex, set *sortedSet[T], def func(T) D) []D {
	mu.RLock()
	defer mu.RUnlock()
	return defsOf(set.values(), def)
}

// checkEntry is what AddPrompt, AddResource and AddResourceTemplate check
// before anything else; the first that fails is a *RegistrationError of
// kind: a definition (def not nil), a handler (noHandler when it is nil),
// the entry's key (its name, URI or URI template, called field) not empty
// and without surrounding spaces, and a name. keys gives def's key and
// name.
func checkEntry[D any](kind string, def *D, noHandler bool, field string, keys func(*D) (key, name string)) error {
	if def == nil {
		return &RegistrationError{Kind: kind, Reason: kind + " definition is nil"}
	}
	key, name := keys(def)
	if noHandler {
		return &RegistrationError{Kind: kind, Name: key, Reason: "handler is nil"}
	}
	if key == "" || strings.TrimSpace(key) != key {
		return &RegistrationError{Kind: kind, Name: key, Reason: field + " must be non-empty, without surrounding spaces"}
	}
	if name == "" {
		return &RegistrationError{Kind: kind, Name: key, Reason: "name is required"}
	}
	return nil
}

// listMethod is the handler of prompts/list, resources/list or
// resources/templates/list: each request gets the entries after its
// cursor, at most the server's page size of those the list filter keeps
// for the caller, as definitions, passed with the cursor of the next page
// to result to make the method's result. A cursor that is not one of this
// list's (prefix) is -32602.
func listMethod[T, D any](s *Server, mu *sync.RWMutex, set *sortedSet[T], prefix string, kind ListKind, def func(T) D, result func(defs []D, next string) any) func(context.Context, *Request) (any, error) {
	return func(_ context.Context, req *Request) (any, error) {
		var p mcp.ListResourcesParams // the params of all three: a cursor and _meta
		if err := decodeParams(req.Method, req.Params, &p); err != nil {
			return nil, err
		}
		mu.RLock()
		defer mu.RUnlock()
		entries, next, jerr := set.page(prefix, p.Cursor, s.cfg.pageSize, s.keep(req, kind))
		if jerr != nil {
			return nil, jerr
		}
		return result(defsOf(entries, def), next), nil
	}
}

func defsOf[T, D any](entries []T, def func(T) D) []D {
	out := make([]D, len(entries))
	for i, e := range entries {
		out[i] = def(e)
	}
	return out
}

// errHandlerPanic is what runHandler returns for a handler that panicked;
// the caller answers -32603 without the panic's text.
var errHandlerPanic = errors.New("internal error")

// runHandler calls a prompt, resource or completion handler, recovering a
// panic as errHandlerPanic after logging it, with the stack, as "<what>
// handler panicked" and the key and value naming the entry.
func runHandler[R any](s *Server, what, key, name string, call func() (R, error)) (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.logger.Error(what+" handler panicked", key, name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			var zero R
			res, err = zero, errHandlerPanic
		}
	}()
	return call()
}
