package server

// ListKind names a list a ListFilter is asked about.
type ListKind string

// The lists a ListFilter sees: names are tool and prompt names, resource
// URIs and resource templates' uriTemplate.
const (
	ListTools             ListKind = "tools"
	ListPrompts           ListKind = "prompts"
	ListResources         ListKind = "resources"
	ListResourceTemplates ListKind = "resourceTemplates"
)

// ListFilter decides, per request, whether an entry appears in a list: a
// server whose callers have different rights shows each only its own.
// It is called with the list's lock held, so it must be fast and must not
// call back into the Server. Paging is over the entries it keeps (a page is
// full unless it is the last), and cursors stay valid across callers.
type ListFilter func(r *Request, kind ListKind, name string) bool

// WithListFilter filters every tools/list, prompts/list, resources/list and
// resources/templates/list by f. It only hides entries from lists: a call,
// read or get of a hidden name still reaches its handler, where rights are
// checked (a middleware, say, that answers with the reason). Because lists
// then depend on the caller, 2026-07-28 list results are marked
// cacheScope "private" whatever WithListCaching says.
func WithListFilter(f ListFilter) Option {
	return serverOption(func(c *config) { c.listFilter = f })
}

// keep adapts the configured filter to one request and list; nil keeps all.
func (s *Server) keep(r *Request, kind ListKind) func(string) bool {
	f := s.cfg.listFilter
	if f == nil {
		return nil
	}
	return func(name string) bool { return f(r, kind, name) }
}

// NotifyListsChanged tells every connected client that its tools, prompts
// and resources lists may have changed (list_changed, coalesced per
// session), as when what the list filter allows changes.
func (s *Server) NotifyListsChanged() {
	s.listChanged(changedTools | changedPrompts | changedResources)
}
