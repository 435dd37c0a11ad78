package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"sync"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// route is where a downstream name goes: an upstream and the name it
// knows the item by.
type route struct {
	up    *upstream
	name  string
	tasks mcp.TaskSupport // the upstream tool's execution.taskSupport; "" is forbidden
}

// catalog is the merged view of every ready upstream.
type catalog struct {
	tools     map[string]route     // downstream tool name
	prompts   map[string]route     // downstream prompt name
	resources map[string]*upstream // URI as listed
	templates map[string]*upstream // uriTemplate as listed
	toolDefs  map[string]*mcp.Tool // as registered downstream
	prompDefs map[string]*mcp.Prompt
	resDefs   map[string]*mcp.Resource
	tmplDefs  map[string]*mcp.ResourceTemplate
}

func newCatalog() *catalog {
	return &catalog{
		tools: map[string]route{}, prompts: map[string]route{},
		resources: map[string]*upstream{}, templates: map[string]*upstream{},
		toolDefs: map[string]*mcp.Tool{}, prompDefs: map[string]*mcp.Prompt{},
		resDefs: map[string]*mcp.Resource{}, tmplDefs: map[string]*mcp.ResourceTemplate{},
	}
}

// CollisionError: two upstream items have the same downstream name after
// the separator and renaming are applied.
type CollisionError struct {
	Kind     string // "tool" or "prompt"
	Name     string // the downstream name
	First    string // "upstream/name" of the first source
	Second   string // and of the second
	Upstream string // the second source's upstream
	// FirstUpstream is the first source's upstream.
	FirstUpstream string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("gateway: %s name %q collides: %s and %s both map to it (rename or hide one)", e.Kind, e.Name, e.First, e.Second)
}

// strictName is the tool name rule several clients enforce, stricter than
// MCP's (which allows '.' and 128 characters).
// Compiled on first use, not at package init.
var strictName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) })

// mcpNameOK applies the 2025-11-25 tool name rule: 1 to 128 characters of
// A-Z, a-z, 0-9, '_', '-' and '.'.
func mcpNameOK(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// downstreamName applies the naming rules; ok is false for a hidden name.
func (n Naming) downstreamName(up, name string) (string, bool) {
	full := up + n.sep() + name
	for _, h := range n.Hide {
		if h == full {
			return "", false
		}
	}
	if r, ok := n.Rename[full]; ok {
		return r, true
	}
	return full, true
}

func (n Naming) sep() string {
	if n.Separator == "" {
		return DefaultSeparator
	}
	return n.Separator
}

// merge builds the catalog of ups (in config order) under naming. A name
// colliding with one already taken is left out and reported; prev, when
// given, decides which of two colliding items keeps the name: the one it
// already routes (so a change in one upstream never evicts another's
// tool). Resources and templates keep their URIs: on a collision the
// first upstream in config order serves it, and the other is logged.
func merge(ups []*upstream, naming Naming, prev *catalog, warn func(msg string, args ...any)) (*catalog, []error) {
	cat := newCatalog()
	var errs []error
	snap := make([]listing, len(ups))
	for i, u := range ups {
		u.mu.Lock()
		snap[i] = u.list
		u.mu.Unlock()
	}
	// Names already routed by prev go first, so they keep them.
	claimTool := func(u *upstream, t *mcp.Tool, dn string) {
		if old, taken := cat.tools[dn]; taken {
			errs = append(errs, &CollisionError{Kind: "tool", Name: dn, First: old.up.spec.Name + "/" + old.name, Second: u.spec.Name + "/" + t.Name, Upstream: u.spec.Name, FirstUpstream: old.up.spec.Name})
			return
		}
		rt := route{up: u, name: t.Name, tasks: mcp.TaskForbidden}
		def := *t
		def.Name = dn
		if t.Execution != nil {
			switch t.Execution.TaskSupport {
			case mcp.TaskOptional, mcp.TaskRequired:
				rt.tasks = t.Execution.TaskSupport
			default:
				def.Execution = nil // no tasks, or a value the protocol does not know
			}
		}
		cat.tools[dn] = rt
		u.override(&def, t.Name, warn)
		if len(def.InputSchema) == 0 {
			def.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		cat.toolDefs[dn] = &def
	}
	claimPrompt := func(u *upstream, p *mcp.Prompt, dn string) {
		if old, taken := cat.prompts[dn]; taken {
			errs = append(errs, &CollisionError{Kind: "prompt", Name: dn, First: old.up.spec.Name + "/" + old.name, Second: u.spec.Name + "/" + p.Name, Upstream: u.spec.Name, FirstUpstream: old.up.spec.Name})
			return
		}
		cat.prompts[dn] = route{up: u, name: p.Name}
		def := *p
		def.Name = dn
		cat.prompDefs[dn] = &def
	}
	var later []func()
	var prevTools, prevPrompts map[string]route
	if prev != nil {
		prevTools, prevPrompts = prev.tools, prev.prompts
	}
	// claimInTurn claims now, or after every name prev routes is claimed
	// when prev routes dn to another upstream's item.
	claimInTurn := func(prevRoutes map[string]route, u *upstream, name, dn string, claim func()) {
		if r, ok := prevRoutes[dn]; ok && (r.up != u || r.name != name) {
			later = append(later, claim)
			return
		}
		claim()
	}
	for i, u := range ups {
		for _, t := range snap[i].tools {
			dn, ok := naming.downstreamName(u.spec.Name, t.Name)
			if !ok {
				continue
			}
			if !mcpNameOK(dn) {
				warn("tool left out: its name breaks the MCP tool name rule", "upstream", u.spec.Name, "tool", t.Name, "name", dn)
				continue
			}
			if !strictName().MatchString(dn) {
				warn("tool name breaks ^[a-zA-Z0-9_-]{1,64}$, which some clients enforce", "upstream", u.spec.Name, "tool", t.Name, "name", dn)
			}
			claimInTurn(prevTools, u, t.Name, dn, func() { claimTool(u, t, dn) })
		}
		for _, p := range snap[i].prompts {
			dn, ok := naming.downstreamName(u.spec.Name, p.Name)
			if !ok {
				continue
			}
			claimInTurn(prevPrompts, u, p.Name, dn, func() { claimPrompt(u, p, dn) })
		}
		for _, r := range snap[i].resources {
			if other, taken := cat.resources[r.URI]; taken {
				warn("resource served by an earlier upstream; this one's is left out", "upstream", u.spec.Name, "uri", r.URI, "served_by", other.spec.Name)
				continue
			}
			cat.resources[r.URI] = u
			cat.resDefs[r.URI] = r
		}
		for _, t := range snap[i].templates {
			if other, taken := cat.templates[t.URITemplate]; taken {
				warn("resource template served by an earlier upstream; this one's is left out", "upstream", u.spec.Name, "uriTemplate", t.URITemplate, "served_by", other.spec.Name)
				continue
			}
			dn, ok := naming.downstreamName(u.spec.Name, t.Name)
			if !ok {
				continue
			}
			cat.templates[t.URITemplate] = u
			def := *t
			def.Name = dn
			cat.tmplDefs[t.URITemplate] = &def
		}
	}
	for _, f := range later {
		f()
	}
	return cat, errs
}

// apply makes the server's registrations match cat, starting from what
// old registered: items gone are removed, changed ones replaced, new ones
// added, and cat becomes the routing table before anything is added (a
// client that sees a tool listed finds it routed). The server sends
// list_changed to its sessions (coalesced). Items the server refuses are
// logged and left out.
func (g *Gateway) apply(old, cat *catalog) {
	s := g.srv
	removeChanged(old.toolDefs, cat.toolDefs, s.RemoveTool)
	removeChanged(old.prompDefs, cat.prompDefs, s.RemovePrompt)
	removeChanged(old.resDefs, cat.resDefs, s.RemoveResource)
	removeChanged(old.tmplDefs, cat.tmplDefs, s.RemoveResourceTemplate)
	g.cat.Store(cat)
	var failed []func(*catalog)
	addChanged(old.toolDefs, cat.toolDefs, func(def *mcp.Tool) error { return server.AddRawTool(s, def, g.toolFallback) }, func(name string, err error) {
		g.opts.logger.Warn("tool left out: the gateway's server refused it", "tool", name, "upstream", cat.tools[name].up.spec.Name, "error", err)
		failed = append(failed, func(c *catalog) { delete(c.tools, name); delete(c.toolDefs, name) })
	})
	addChanged(old.prompDefs, cat.prompDefs, func(def *mcp.Prompt) error { return server.AddPrompt(s, def, g.promptFallback) }, func(name string, err error) {
		g.opts.logger.Warn("prompt left out: the gateway's server refused it", "prompt", name, "error", err)
		failed = append(failed, func(c *catalog) { delete(c.prompts, name); delete(c.prompDefs, name) })
	})
	addChanged(old.resDefs, cat.resDefs, func(def *mcp.Resource) error { return server.AddResource(s, def, g.resourceFallback) }, func(uri string, err error) {
		g.opts.logger.Warn("resource left out: the gateway's server refused it", "uri", uri, "error", err)
		failed = append(failed, func(c *catalog) { delete(c.resources, uri); delete(c.resDefs, uri) })
	})
	addChanged(old.tmplDefs, cat.tmplDefs, func(def *mcp.ResourceTemplate) error { return server.AddResourceTemplate(s, def, g.templateRead) }, func(ut string, err error) {
		g.opts.logger.Warn("resource template left out: the gateway's server refused it", "uriTemplate", ut, "error", err)
		failed = append(failed, func(c *catalog) { delete(c.templates, ut); delete(c.tmplDefs, ut) })
	})
	if len(failed) > 0 {
		c := cat.clone()
		for _, f := range failed {
			f(c)
		}
		g.cat.Store(c)
	}
}

// removeChanged calls remove with the key of each of old's definitions
// that next lacks or holds changed.
func removeChanged[D any](old, next map[string]D, remove func(key string) bool) {
	for key, def := range old {
		if nd, ok := next[key]; !ok || !sameJSON(def, nd) {
			remove(key)
		}
	}
}

// addChanged registers with add each of next's definitions that old lacks
// or holds changed, and calls refused with the key of each one add refuses
// and why.
func addChanged[D any](old, next map[string]D, add func(D) error, refused func(key string, err error)) {
	for key, def := range next {
		if od, ok := old[key]; ok && sameJSON(od, def) {
			continue
		}
		if err := add(def); err != nil {
			refused(key, err)
		}
	}
}

func (c *catalog) clone() *catalog {
	n := newCatalog()
	maps.Copy(n.tools, c.tools)
	maps.Copy(n.prompts, c.prompts)
	maps.Copy(n.resources, c.resources)
	maps.Copy(n.templates, c.templates)
	maps.Copy(n.toolDefs, c.toolDefs)
	maps.Copy(n.prompDefs, c.prompDefs)
	maps.Copy(n.resDefs, c.resDefs)
	maps.Copy(n.tmplDefs, c.tmplDefs)
	return n
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// declareCompletions adds the gateway's completion/complete.
func (g *Gateway) declareCompletions() error {
	return server.AddMethod(g.srv, completeSpec, g.complete)
}

// templateRead reads a URI matching an upstream's template from that
// upstream (resources/read of a listed URI is forwarded raw by the
// middleware; a templated URI comes here, matched by the server).
func (g *Gateway) templateRead(ctx context.Context, req *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
	cat := g.cat.Load()
	u := cat.templates[req.Template.URITemplate]
	if u == nil {
		return nil, server.ErrResourceNotFound
	}
	start := time.Now()
	var res *mcp.ReadResourceResult
	err := g.forward(ctx, u, func(ctx context.Context, c *client.Client) error {
		var err error
		res, err = c.ReadResource(ctx, req.URI, client.WithTimeout(u.timeout()))
		return err
	})
	g.observe(ctx, u, mcp.MethodReadResource, "", outcomeOf(ctx, err), start)
	if err != nil {
		if client.IsResourceNotFound(err) {
			return nil, server.ErrResourceNotFound
		}
		return nil, rpcError(u, err)
	}
	return res, nil
}
