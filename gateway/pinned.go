package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/jsonscan"
	"github.com/toolwire/toolwire/internal/jsonstr"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// ToolOverride is what the operator says of one upstream tool instead of
// the upstream: its title and description ("" keeps the upstream's), and
// pinned arguments. A pinned argument is the operator's: it is removed from
// the tool's advertised inputSchema (properties and required), its value
// is added to every call forwarded, and a call that supplies it with
// another value is refused (an isError result naming it, audited as
// denied) without reaching the upstream. So an operator can offer
// create_issue pinned to one repository.
type ToolOverride struct {
	Title       string
	Description string
	// Pin maps an argument name to its value, as compact JSON (a string
	// "\"acme/app\"", a number "42", ...). A caller's value is the same
	// when its JSON, compacted, is the same bytes.
	Pin map[string]json.RawMessage
}

// override applies the upstream's ToolOverride of its tool name, if any,
// to def, that tool as the catalog will list it.
func (u *upstream) override(def *mcp.Tool, name string, warn func(msg string, args ...any)) {
	o, ok := u.spec.Tools[name]
	if !ok {
		return
	}
	if o.Title != "" {
		def.Title = o.Title
	}
	if o.Description != "" {
		def.Description = o.Description
	}
	if len(o.Pin) == 0 {
		return
	}
	argNames.Store(pinKey{u, name}, knownArguments(o.Pin, def.InputSchema))
	if len(def.InputSchema) == 0 {
		return
	}
	schema, err := unpinnedSchema(def.InputSchema, o.Pin)
	if err != nil {
		warn("pinned arguments left in the advertised inputSchema (the calls are still pinned)", "upstream", u.spec.Name, "tool", def.Name, "error", err)
		return
	}
	def.InputSchema = schema
}

// checkCallerSettings checks an upstream's TokenExchange and Tools as New
// and Reload take them: an exchange only for a URL upstream, with a token
// endpoint or an issuer and a known OnAPIKey; pinned values valid compact
// JSON, at most 64 a tool.
func checkCallerSettings(u Upstream) error {
	if x := u.TokenExchange; x != nil {
		switch {
		case u.URL == "":
			return errors.New("token exchange applies to URL upstreams only")
		case x.TokenEndpoint == "" && x.Issuer == "":
			return errors.New("token exchange: no token endpoint or issuer")
		case x.OnAPIKey != "" && x.OnAPIKey != APIKeyRefuse && x.OnAPIKey != APIKeyStatic:
			return fmt.Errorf("token exchange: OnAPIKey %q: want %q or %q", x.OnAPIKey, APIKeyRefuse, APIKeyStatic)
		}
	}
	for name, o := range u.Tools {
		if len(o.Pin) > 64 {
			return fmt.Errorf("tool %q: more than 64 pinned arguments", name)
		}
		for arg, v := range o.Pin {
			var c bytes.Buffer
			if arg == "" || json.Compact(&c, v) != nil || !bytes.Equal(c.Bytes(), v) {
				return fmt.Errorf("tool %q: pinned argument %q: want a name and a compact JSON value", name, arg)
			}
		}
	}
	return nil
}

// pinKey names a tool of an upstream.
type pinKey struct {
	u    *upstream
	tool string
}

// argNames holds, per tool with pinned arguments, the argument names a
// call's arguments are scanned with (knownArguments).
var argNames sync.Map // pinKey → []string

// knownArguments are the names a call's arguments are scanned with: the
// pinned ones first, then those the upstream's inputSchema declares (at
// most 64 in all), so that a call naming many declared arguments is read
// plainly.
func knownArguments(pin map[string]json.RawMessage, schema json.RawMessage) []string {
	names := slices.Sorted(maps.Keys(pin))
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(schema) > 0 && wirejson.Unmarshal(schema, &s) == nil {
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			if len(names) == 64 {
				break
			}
			if _, pinned := pin[k]; !pinned {
				names = append(names, k)
			}
		}
	}
	return names
}

// forgetPins drops what was kept of u's tools.
func (u *upstream) forgetPins() {
	argNames.Range(func(k, _ any) bool {
		if k.(pinKey).u == u {
			argNames.Delete(k)
		}
		return true
	})
}

// unpinnedSchema is schema without the pinned names in its properties and
// required.
func unpinnedSchema(schema json.RawMessage, pin map[string]json.RawMessage) (json.RawMessage, error) {
	var s map[string]json.RawMessage
	if err := wirejson.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	if raw, ok := s["properties"]; ok {
		var props map[string]json.RawMessage
		if err := wirejson.Unmarshal(raw, &props); err != nil {
			return nil, fmt.Errorf("properties: %w", err)
		}
		for k := range pin {
			delete(props, k)
		}
		b, err := json.Marshal(props)
		if err != nil {
			return nil, err
		}
		s["properties"] = b
	}
	if raw, ok := s["required"]; ok {
		var req []string
		if err := wirejson.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("required: %w", err)
		}
		req = slices.DeleteFunc(req, func(n string) bool { _, p := pin[n]; return p })
		if len(req) == 0 {
			delete(s, "required")
		} else {
			b, err := json.Marshal(req)
			if err != nil {
				return nil, err
			}
			s["required"] = b
		}
	}
	return json.Marshal(s)
}

// pin applies the pinned arguments of r's tool to args, the call's
// arguments as the request's one decode left them (an object checked to
// its full depth, or nil): the pinned members the caller left out are
// added, those it gave with the same value kept; a different value, or
// arguments whose member names the scanner cannot read plainly (an
// escaped name, a case variant of a pinned name), is refused with the
// isError result returned, the request's audit outcome noted as denied.
func (g *Gateway) pin(ctx context.Context, r route, args json.RawMessage) (json.RawMessage, *mcp.CallToolResult) {
	o, ok := r.up.spec.Tools[r.name]
	if !ok || len(o.Pin) == 0 {
		return args, nil
	}
	known, _ := argNames.Load(pinKey{r.up, r.name})
	scan, _ := known.([]string)
	if scan == nil {
		scan = knownArguments(o.Pin, nil)
	}
	names := scan[:len(o.Pin)] // the pinned ones come first
	given := map[string]bool{}
	var conflict string
	if args != nil {
		ok := jsonscan.Members(args, scan, func(name, value []byte) bool {
			if _, pinned := o.Pin[string(name)]; !pinned {
				return true
			}
			given[string(name)] = true
			var c bytes.Buffer
			if json.Compact(&c, value) != nil || !bytes.Equal(c.Bytes(), o.Pin[string(name)]) {
				conflict = string(name)
				return false
			}
			return true
		})
		if !ok && conflict == "" {
			return nil, pinRefusal(ctx, fmt.Sprintf("tool %q has pinned arguments (%s), and its arguments cannot be read plainly (an escaped or case-varied member name, or more than 16 the tool does not declare): refused", r.name, joinQuoted(names)))
		}
	}
	if conflict != "" {
		return nil, pinRefusal(ctx, fmt.Sprintf("argument %q of tool %q is pinned by the gateway to %s: a call may leave it out or give that value, not another", conflict, r.name, o.Pin[conflict]))
	}
	var out []byte
	out = append(out, '{')
	added := false
	for _, k := range names {
		if given[k] {
			continue
		}
		if added {
			out = append(out, ',')
		}
		out = jsonstr.Append(out, k)
		out = append(out, ':')
		out = append(out, o.Pin[k]...)
		added = true
	}
	if !added {
		return args, nil
	}
	if args == nil {
		return append(out, '}'), nil
	}
	rest := bytes.TrimLeft(args[1:], " \t\r\n")
	if rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), nil
}

// pinRefusal is the isError result of a call refused for its pinned
// arguments; the request's audit record says denied.
func pinRefusal(ctx context.Context, why string) *mcp.CallToolResult {
	if n, ok := ctx.Value(outcomeKey{}).(*outcomeNote); ok {
		n.outcome = string(audit.OutcomeDenied)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: why}}}
}

func joinQuoted(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", n)
	}
	return b.String()
}
