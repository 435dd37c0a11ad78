package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Eras is the set of protocol eras a method exists in.
type Eras uint8

// Era sets.
const (
	// Legacy: sessions opened by initialize (2025-11-25 and older).
	Legacy Eras = 1 << iota
	// Modern: stateless 2026-07-28 requests.
	Modern
	// AnyEra: both.
	AnyEra = Legacy | Modern
)

// Has reports whether the set holds era.
func (e Eras) Has(era mcp.Era) bool {
	switch era {
	case mcp.EraLegacy:
		return e&Legacy != 0
	case mcp.EraModern:
		return e&Modern != 0
	}
	return false
}

// MethodSpec describes one request method a server serves: its entry in the
// server's method table.
type MethodSpec struct {
	// Name is the JSON-RPC method name, such as "prompts/list".
	Name string
	// Eras are the eras the method exists in; zero means AnyEra. A request
	// of another era gets -32601.
	Eras Eras
	// Capability is the server capability the method belongs to (a member
	// of ServerCapabilities, such as "prompts"); the server declares it
	// once a method naming it is registered. "" for none.
	Capability string
	// CapabilityValue is what the capability is declared as; nil means {}.
	CapabilityValue json.RawMessage
	// NameParam is the params member that 2026-07-28 clients mirror in the
	// Mcp-Name HTTP header ("name" for tools/call); "" for none. The server
	// refuses a request whose header and body disagree (-32020).
	NameParam string
	// Cacheable marks a list-like result: 2026-07-28 results get ttlMs and
	// cacheScope (WithListCaching) unless the handler set them.
	Cacheable bool
	// Extension is the extension the method belongs to in 2026-07-28
	// requests (such as "io.modelcontextprotocol/tasks"): it is declared
	// under capabilities.extensions in server/discover instead of
	// Capability (which then holds for 2025-era sessions only), and a
	// request whose client capabilities lack it is answered with -32021.
	Extension string
	// Input marks a method whose handler may ask the client for input
	// (Request.Input, Elicit, CreateMessage, ListRoots) in a 2026-07-28
	// request: the answer is then an input_required result, and the
	// client's retry carries inputResponses and requestState. The spec
	// allows it on tools/call, prompts/get and resources/read.
	Input bool
}

// MethodFunc handles a request whose params decode into P; what it returns
// becomes the result. A *jsonrpc.Error is answered as that error; any other
// error as -32603 with its text.
type MethodFunc[P, R any] func(ctx context.Context, req *Request, params *P) (R, error)

// method is an entry of the method table.
type method struct {
	MethodSpec
	handle func(ctx context.Context, r *Request) (any, error)
}

// AddMethod adds a method to the server's method table: the way built-in
// methods are defined too. Params are decoded exactly (member names match
// case-sensitively; duplicate names are refused) into P, and a failure is
// answered with -32602 naming the JSON location. Adding a method whose name
// is taken is an error; AddMethod never panics.
func AddMethod[P, R any](s *Server, spec MethodSpec, h MethodFunc[P, R]) error {
	if h == nil {
		return &RegistrationError{Kind: "method", Name: spec.Name, Reason: "handler is nil"}
	}
	return s.addMethod(spec, func(ctx context.Context, r *Request) (any, error) {
		p := new(P)
		if err := decodeParams(r.Method, r.Params, p); err != nil {
			return nil, err
		}
		return h(ctx, r, p)
	})
}

// decodeParams decodes request params exactly into v.
func decodeParams(method string, params json.RawMessage, v any) *jsonrpc.Error {
	if len(params) == 0 {
		return nil
	}
	if params[0] != '{' {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid %s params: must be an object", method)
	}
	if err := wirejson.Unmarshal(params, v); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid %s params: %v", method, err)
	}
	return nil
}

func (s *Server) addMethod(spec MethodSpec, handle func(context.Context, *Request) (any, error)) error {
	if spec.Name == "" || strings.TrimSpace(spec.Name) != spec.Name {
		return &RegistrationError{Kind: "method", Name: spec.Name, Reason: "method name must be non-empty, without surrounding spaces"}
	}
	if spec.Eras == 0 {
		spec.Eras = AnyEra
	}
	if spec.CapabilityValue != nil && !json.Valid(spec.CapabilityValue) {
		return &RegistrationError{Kind: "method", Name: spec.Name, Reason: "CapabilityValue is not valid JSON"}
	}
	s.tableMu.Lock()
	defer s.tableMu.Unlock()
	old := *s.table.Load()
	if _, dup := old[spec.Name]; dup {
		return &RegistrationError{Kind: "method", Name: spec.Name, Reason: "a method with this name is already registered"}
	}
	next := maps.Clone(old)
	next[spec.Name] = &method{MethodSpec: spec, handle: handle}
	s.table.Store(&next)
	s.capsCache[0].Store(nil)
	s.capsCache[1].Store(nil)
	return nil
}

// hasMethod reports whether a method is in the table.
func (s *Server) hasMethod(name string) bool {
	_, ok := (*s.table.Load())[name]
	return ok
}

// capabilities are derived from the method table: each capability some
// method belongs to is declared, with the value that method gives it; in
// 2026-07-28, methods of an extension declare it under extensions instead.
func (s *Server) capabilities(era mcp.Era) mcp.ServerCapabilities {
	slot := 0
	if era == mcp.EraModern {
		slot = 1
	}
	if c := s.capsCache[slot].Load(); c != nil {
		return *c
	}
	caps := map[string]json.RawMessage{}
	exts := map[string]json.RawMessage{}
	for _, m := range *s.table.Load() {
		if era == mcp.EraModern && m.Extension != "" {
			exts[m.Extension] = json.RawMessage(`{}`)
			continue
		}
		if m.Capability == "" {
			continue
		}
		v := m.CapabilityValue
		if v == nil {
			v = json.RawMessage(`{}`)
		}
		if prev, ok := caps[m.Capability]; !ok || string(prev) == "{}" {
			caps[m.Capability] = v
		}
	}
	// Each capability is read on its own by the strict reader, so that one
	// a method declares wrongly (a member named twice, a value of the wrong
	// kind, a case variant of a capability's name) is left out, and logged,
	// without taking the others with it.
	var out mcp.ServerCapabilities
	for _, name := range slices.Sorted(maps.Keys(caps)) {
		one, err := json.Marshal(map[string]json.RawMessage{name: caps[name]})
		next := out
		if err == nil {
			err = wirejson.Unmarshal(one, &next)
		}
		if err != nil {
			s.cfg.logger.Error("a server capability does not decode: it is not declared", "capability", name, "error", err)
			continue
		}
		out = next
	}
	if len(exts) > 0 {
		out.Extensions = exts
	}
	s.capsCache[slot].Store(&out)
	return out
}

// RegistrationError says why a tool, prompt or method could not be
// registered.
type RegistrationError struct {
	// Kind is "tool", "prompt" or "method".
	Kind string
	// Name is the tool's or method's name.
	Name   string
	Reason string
	Err    error
}

func (e *RegistrationError) Error() string {
	msg := fmt.Sprintf("server: %s %q: %s", e.Kind, e.Name, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RegistrationError) Unwrap() error { return e.Err }
