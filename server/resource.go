package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Defaults for the resource limits (Limits.MaxURILength, Limits.MaxSubscriptions).
const (
	// DefaultMaxURILength bounds the URIs matched against resource templates
	// and accepted by resources/subscribe: 8 KiB.
	DefaultMaxURILength = 8 << 10
	// DefaultMaxSubscriptions bounds the resources/subscribe subscriptions
	// of one 2025-era session, and the resourceSubscriptions one
	// subscriptions/listen request is acknowledged for.
	DefaultMaxSubscriptions = 1000
)

// ErrResourceNotFound is returned by a resource handler (wrapped or as is)
// to say that the URI it was asked for does not exist, for example a
// template's variables naming no record. The client gets the same answer
// as for a URI nothing serves: "Resource not found" with data {"uri": ...},
// code -32602 in 2026-07-28 and -32002 in 2025-era sessions.
var ErrResourceNotFound = errors.New("resource not found")

type resourceConfig struct {
	maxURILength     int
	maxSubscriptions int
}

func (c resourceConfig) maxURI() int {
	if c.maxURILength < 1 {
		return DefaultMaxURILength
	}
	return c.maxURILength
}

func (c resourceConfig) maxSubs() int {
	if c.maxSubscriptions < 1 {
		return DefaultMaxSubscriptions
	}
	return c.maxSubscriptions
}

// ResourceRequest is what a resource handler learns about a resources/read
// request: the request (peer, headers, principal), the URI asked for and,
// for a template, what its variables matched.
type ResourceRequest struct {
	*Request
	// URI is the URI asked for, exactly as sent.
	URI string
	// Resource is the static resource's definition; nil for a template.
	Resource *mcp.Resource
	// Template is the matching template's definition; nil for a static
	// resource.
	Template *mcp.ResourceTemplate
	// Vars are the template variables the URI defines, percent-decoded
	// (see the internal/uritemplate rules: a variable the URI leaves out is
	// absent); nil for a static resource.
	Vars map[string]string
}

// ResourceFunc reads one resource for resources/read. Each returned content
// must be an *mcp.TextResourceContents or *mcp.BlobResourceContents; one
// whose URI is empty gets the requested URI. A nil result, or one with no
// contents, is a server bug answered with -32603: a found resource has
// contents, and a missing one is ErrResourceNotFound.
//
// A non-nil error is answered as a JSON-RPC error:
//   - a *jsonrpc.Error as itself;
//   - ErrResourceNotFound (errors.Is) as "Resource not found" with data
//     {"uri": ...}: -32602 in 2026-07-28, -32002 in 2025-era sessions;
//   - anything else, and a panic, as -32603.
type ResourceFunc func(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error)

// ResourceTemplateFunc reads the resources of one template; req.Vars holds
// what the URI's variables matched. Results and errors are as for
// ResourceFunc.
type ResourceTemplateFunc func(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error)

type resource struct {
	def    *mcp.Resource
	handle ResourceFunc
}

type resourceTemplate struct {
	def    *mcp.ResourceTemplate
	tmpl   uriTemplate
	handle ResourceTemplateFunc
}

// resourceRegistry holds resources, templates and subscriptions;
// resources/list, resources/templates/list, resources/read and (2025 era)
// resources/subscribe and unsubscribe join the method table with the first
// resource or template.
type resourceRegistry struct {
	methodGate
	mu     sync.RWMutex
	static sortedSet[*resource]         // by URI: the resources/list order
	tmpls  sortedSet[*resourceTemplate] // by uriTemplate: the templates/list and matching order

	subs subscriptions // subscribe.go
}

// Resource list cursors.
const (
	resourceCursorPrefix = "resources/v1:"
	templateCursorPrefix = "resources/templates/v1:"
)

// AddResource registers a resource with a fixed URI, served by
// resources/read and listed by resources/list. The first resource or
// template adds the resource methods to the method table, so the server
// declares the resources capability with subscribe and listChanged. A nil
// resource, an empty URI or name, a nil handler and a URI already
// registered are returned as a *RegistrationError (Kind "resource");
// AddResource never panics. The definition is copied. Connected clients
// are told the list changed (notifications/resources/list_changed).
func AddResource(s *Server, r *mcp.Resource, h ResourceFunc) error {
	if err := checkEntry("resource", r, h == nil, "uri", func(r *mcp.Resource) (string, string) { return r.URI, r.Name }); err != nil {
		return err
	}
	def := *r
	def.Icons = slices.Clone(r.Icons)
	if r.Annotations != nil {
		a := *r.Annotations
		def.Annotations = &a
	}
	if r.Size != nil {
		n := *r.Size
		def.Size = &n
	}
	if err := s.ensureResourceMethods("resource"); err != nil {
		return err
	}
	if !addListed(s, &s.resources.mu, &s.resources.static, def.URI, &resource{def: &def, handle: h}, changedResources) {
		return &RegistrationError{Kind: "resource", Name: def.URI, Reason: "a resource with this URI is already registered"}
	}
	return nil
}

// TemplateOption configures a resource template at registration.
type TemplateOption interface{ applyTemplate(*templateConfig) }

type templateConfig struct {
	completions []varCompletion
}

type varCompletion struct {
	name string
	f    CompleteFunc
}

type templateOption func(*templateConfig)

func (f templateOption) applyTemplate(c *templateConfig) { f(c) }

// WithVarCompletion completes the template variable name in
// completion/complete requests (ref/resource naming the template), as
// AddTemplateCompletion does; naming no variable of the template is a
// registration error.
func WithVarCompletion(name string, f CompleteFunc) TemplateOption {
	return templateOption(func(c *templateConfig) { c.completions = append(c.completions, varCompletion{name, f}) })
}

// AddResourceTemplate registers a family of resources named by an RFC 6570
// URI template, listed by resources/templates/list. A resources/read URI
// that is no static resource is matched against the templates in
// uriTemplate order, the first match serving it (see ResourceRequest.Vars).
// A nil template, an empty or unparsable uriTemplate (a template naming a
// variable twice included), an empty name, a nil handler and a template
// already registered are returned as a *RegistrationError (Kind "resource
// template"); it never panics. The definition is copied.
func AddResourceTemplate(s *Server, t *mcp.ResourceTemplate, h ResourceTemplateFunc, opts ...TemplateOption) error {
	const kind = "resource template"
	if err := checkEntry(kind, t, h == nil, "uriTemplate", func(t *mcp.ResourceTemplate) (string, string) { return t.URITemplate, t.Name }); err != nil {
		return err
	}
	tmpl, err := parseURITemplate(t.URITemplate)
	if err != nil {
		return &RegistrationError{Kind: kind, Name: t.URITemplate, Reason: "not an RFC 6570 URI template", Err: err}
	}
	var cfg templateConfig
	for _, o := range opts {
		if o != nil {
			o.applyTemplate(&cfg)
		}
	}
	for _, c := range cfg.completions {
		if !tmpl.Has(c.name) {
			return &RegistrationError{Kind: kind, Name: t.URITemplate, Reason: fmt.Sprintf("WithVarCompletion: the template has no variable %q", c.name)}
		}
		if c.f == nil {
			return &RegistrationError{Kind: kind, Name: t.URITemplate, Reason: fmt.Sprintf("WithVarCompletion: completion of %q is nil", c.name)}
		}
	}
	def := *t
	def.Icons = slices.Clone(t.Icons)
	if t.Annotations != nil {
		a := *t.Annotations
		def.Annotations = &a
	}
	if err := s.ensureResourceMethods(kind); err != nil {
		return err
	}
	if !addListed(s, &s.resources.mu, &s.resources.tmpls, def.URITemplate, &resourceTemplate{def: &def, tmpl: tmpl, handle: h}, changedResources) {
		return &RegistrationError{Kind: kind, Name: def.URITemplate, Reason: "a resource template with this uriTemplate is already registered"}
	}
	for _, c := range cfg.completions {
		if err := AddTemplateCompletion(s, def.URITemplate, c.name, c.f); err != nil {
			return err
		}
	}
	return nil
}

// RemoveResource unregisters a static resource and tells connected clients
// the list changed. It reports whether the resource existed. Subscriptions
// to the URI stay: the resource may come back.
func (s *Server) RemoveResource(uri string) bool {
	return removeListed(s, &s.resources.mu, &s.resources.static, uri, changedResources)
}

// RemoveResourceTemplate unregisters a resource template and tells
// connected clients the list changed. It reports whether it existed.
// Completions registered for it stay.
func (s *Server) RemoveResourceTemplate(uriTemplate string) bool {
	return removeListed(s, &s.resources.mu, &s.resources.tmpls, uriTemplate, changedResources)
}

// Resources returns the registered static resources in list order (by URI).
func (s *Server) Resources() []*mcp.Resource {
	return listedDefs(&s.resources.mu, &s.resources.static, resourceDef)
}

// ResourceTemplates returns the registered resource templates in list and
// matching order (by uriTemplate).
func (s *Server) ResourceTemplates() []*mcp.ResourceTemplate {
	return listedDefs(&s.resources.mu, &s.resources.tmpls, templateDef)
}

func resourceDef(r *resource) *mcp.Resource                 { return r.def }
func templateDef(t *resourceTemplate) *mcp.ResourceTemplate { return t.def }

// ensureResourceMethods adds the resource methods to the method table, and
// so the resources capability, with the first resource or template.
func (s *Server) ensureResourceMethods(kind string) error {
	caps := json.RawMessage(`{"subscribe":true,"listChanged":true}`)
	return s.joinMethods(&s.resources.methodGate, kind,
		registryMethod{MethodSpec{Name: mcp.MethodListResources, Capability: "resources", CapabilityValue: caps, Cacheable: true},
			listMethod(s, &s.resources.mu, &s.resources.static, resourceCursorPrefix, ListResources, resourceDef, resourcesPage)},
		registryMethod{MethodSpec{Name: mcp.MethodListResourceTemplates, Capability: "resources", CapabilityValue: caps, Cacheable: true},
			listMethod(s, &s.resources.mu, &s.resources.tmpls, templateCursorPrefix, ListResourceTemplates, templateDef, templatesPage)},
		registryMethod{MethodSpec{Name: mcp.MethodReadResource, Capability: "resources", CapabilityValue: caps, NameParam: "uri", Input: true}, s.readResource},
		registryMethod{MethodSpec{Name: mcp.MethodSubscribe, Eras: Legacy, Capability: "resources", CapabilityValue: caps}, s.subscribe},
		registryMethod{MethodSpec{Name: mcp.MethodUnsubscribe, Eras: Legacy, Capability: "resources", CapabilityValue: caps}, s.unsubscribe})
}

// resourcesPage is the result of resources/list: one page in URI order.
func resourcesPage(resources []*mcp.Resource, next string) any {
	return &mcp.ListResourcesResult{Resources: resources, NextCursor: next}
}

// templatesPage is the result of resources/templates/list: one page in
// uriTemplate order.
func templatesPage(tmpls []*mcp.ResourceTemplate, next string) any {
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: tmpls, NextCursor: next}
}

// uriParams are the params of resources/read, subscribe and unsubscribe as
// read: a missing uri is told from an empty one.
type uriParams struct {
	URI  *string  `json:"uri"`
	Meta mcp.Meta `json:"_meta"`
}

// requestURI reads the uri member every resource method requires.
func requestURI(req *Request) (string, *jsonrpc.Error) {
	var p uriParams
	if err := decodeParams(req.Method, req.Params, &p); err != nil {
		return "", err
	}
	if p.URI == nil {
		return "", jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid %s params: "uri" is required`, req.Method)
	}
	return *p.URI, nil
}

// resourceNotFound is the answer to a read of a URI nothing serves: -32602
// (SEP-2164) in 2026-07-28, -32002 as the 2025-11-25 specification gives it
// in 2025-era sessions; data {"uri": ...} in both.
func resourceNotFound(era mcp.Era, uri string) *jsonrpc.Error {
	code := mcp.CodeResourceNotFound
	if era == mcp.EraModern {
		code = jsonrpc.CodeInvalidParams
	}
	return jsonrpc.NewError(code, "Resource not found").WithData(mcp.ResourceNotFoundData{URI: uri})
}

// readResource serves resources/read: the static resource with the URI, or
// else the first template (in uriTemplate order) that matches it.
func (s *Server) readResource(ctx context.Context, req *Request) (any, error) {
	uri, jerr := requestURI(req)
	if jerr != nil {
		return nil, jerr
	}
	rr := &ResourceRequest{Request: req, URI: uri}
	var handle func(context.Context, *ResourceRequest) (*mcp.ReadResourceResult, error)
	reg := &s.resources
	reg.mu.RLock()
	if r, ok := reg.static.get(uri); ok {
		rr.Resource, handle = r.def, r.handle
	}
	var tmpls []*resourceTemplate
	if handle == nil {
		tmpls = reg.tmpls.values()
	}
	reg.mu.RUnlock()
	if handle == nil && len(tmpls) > 0 {
		if limit := s.cfg.resources.maxURI(); len(uri) > limit {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "uri is %d bytes, longer than the %d this server matches against resource templates", len(uri), limit)
		}
		for _, t := range tmpls {
			if vars, ok := t.tmpl.Match(uri); ok {
				rr.Template, rr.Vars, handle = t.def, vars, t.handle
				break
			}
		}
	}
	if handle == nil {
		return nil, resourceNotFound(req.Peer.Era, uri)
	}
	res, err := runHandler(s, "resource", "uri", uri, func() (*mcp.ReadResourceResult, error) { return handle(ctx, rr) })
	if err != nil {
		return nil, s.resourceError(req.Peer.Era, uri, err)
	}
	if res == nil || len(res.Contents) == 0 {
		s.cfg.logger.Error("resource handler returned no contents", "uri", uri)
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "resource %q produced no contents (a handler returns ErrResourceNotFound for a resource that does not exist)", uri)
	}
	out := *res
	out.Contents = make([]mcp.ResourceContents, len(res.Contents))
	for i, c := range res.Contents {
		if out.Contents[i] = contentsFor(c, uri); out.Contents[i] != nil {
			continue
		}
		s.cfg.logger.Error("resource handler returned an invalid content", "uri", uri, "index", i)
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "resource %q produced an invalid content (contents[%d] must be a non-nil *mcp.TextResourceContents or *mcp.BlobResourceContents)", uri, i)
	}
	if req.Peer.Era == mcp.EraModern {
		// 2026-07-28 reads carry cache hints: what the handler set, else
		// "do not reuse" (ttlMs 0) for this caller only.
		if out.TTLMs == nil {
			zero := int64(0)
			out.TTLMs = &zero
		}
		if out.CacheScope == "" {
			out.CacheScope = mcp.CachePrivate
		}
	} else {
		out.TTLMs, out.CacheScope = nil, ""
	}
	return &out, nil
}

// contentsFor returns a content a handler returned as it is read from uri:
// one without a uri gets this one (in a copy: the handler's value stays as
// it was). A nil content, or one of no known type, is nil.
func contentsFor(c mcp.ResourceContents, uri string) mcp.ResourceContents {
	switch c := c.(type) {
	case *mcp.TextResourceContents:
		if c != nil {
			return withURI(c, func(cc *mcp.TextResourceContents) { cc.URI = uri })
		}
	case *mcp.BlobResourceContents:
		if c != nil {
			return withURI(c, func(cc *mcp.BlobResourceContents) { cc.URI = uri })
		}
	}
	return nil
}

func withURI[C any, P interface {
	*C
	mcp.ResourceContents
}](c P, setURI func(P)) mcp.ResourceContents {
	if c.ResourceURI() != "" {
		return c
	}
	cc := *c
	setURI(&cc)
	return P(&cc)
}

// resourceError routes a handler error: a *jsonrpc.Error as itself,
// ErrResourceNotFound as not found, anything else as -32603.
func (s *Server) resourceError(era mcp.Era, uri string, err error) *jsonrpc.Error {
	if je, ok := jsonrpc.AsError(err); ok {
		return je
	}
	if errors.Is(err, ErrResourceNotFound) {
		return resourceNotFound(era, uri)
	}
	if err == errHandlerPanic {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "resource %q failed with an internal error", uri)
	}
	s.cfg.logger.Debug("resource handler failed", "uri", uri, "error", err)
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "resource %q failed: %v", uri, err)
}
