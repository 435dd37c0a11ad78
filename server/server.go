// Package server hosts MCP tools (and any other method in its method table)
// and answers the protocol for both eras: legacy sessions opened by
// initialize (2025-11-25, 2025-06-18, 2025-03-26) and modern stateless
// requests (2026-07-28). Transports hand it decoded JSON-RPC messages
// through the jsonrpc.Session interface.
package server

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/toolwire/toolwire/internal/jsonstr"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Server holds the method table, the tool registry and the sessions
// connected to it. It is safe for concurrent use; tools and methods may be
// added while serving.
type Server struct {
	info       mcp.Implementation
	infoJSON   json.RawMessage // info, encoded once
	infoMember []byte          // "io.modelcontextprotocol/serverInfo":{...}
	cfg        config

	tableMu   sync.Mutex // serialises table changes; readers load it lock-free
	table     atomic.Pointer[map[string]*method]
	capsCache [2]atomic.Pointer[mcp.ServerCapabilities] // legacy, modern

	handler jsonrpc.MethodHandler // receiving middleware around route
	sending jsonrpc.MethodHandler // sending middleware around sendToClient

	metaCache metaCache

	toolMethods sync.Mutex // held while the tool methods join the table
	mu          sync.RWMutex
	tools       sortedSet[*tool] // in tools/list order (by name)

	prompts promptRegistry

	resources   resourceRegistry   // resource.go
	completions completionRegistry // completion.go

	sessMu   sync.Mutex
	sessions map[*Session]struct{}

	tasks taskEngine // task.go
}

// New returns a server that introduces itself as info. Its method table
// starts with the lifecycle methods (initialize, ping, server/discover,
// subscriptions/listen); tools/list and tools/call join it with the first
// tool, prompts/list and prompts/get with the first prompt (AddPrompt).
func New(info mcp.Implementation, opts ...Option) *Server {
	s := &Server{info: info, cfg: defaultConfig(), sessions: map[*Session]struct{}{}}
	for _, o := range opts {
		if o != nil { // a nil option is ignored, never a panic
			o.applyServer(&s.cfg)
		}
	}
	s.cfg.input.defaults()
	if s.cfg.listFilter != nil {
		s.cfg.cacheScope = mcp.CachePrivate // lists depend on the caller
	}
	s.infoJSON, _ = json.Marshal(info)
	s.infoMember = append(jsonstr.Append(nil, mcp.MetaServerInfo), ':')
	s.infoMember = append(s.infoMember, s.infoJSON...)
	empty := map[string]*method{}
	s.table.Store(&empty)
	s.handler = jsonrpc.Chain(s.route, s.cfg.receiving...)
	s.sending = jsonrpc.Chain(s.sendToClient, s.cfg.sendingMW...)
	for _, err := range []error{
		AddMethod(s, MethodSpec{Name: mcp.MethodInitialize, Eras: Legacy},
			func(ctx context.Context, r *Request, p *initializeParams) (*mcp.InitializeResult, error) {
				return r.session.initialize(ctx, r, p)
			}),
		AddMethod(s, MethodSpec{Name: mcp.MethodPing, Eras: Legacy},
			func(context.Context, *Request, *struct{}) (*mcp.EmptyResult, error) { return &mcp.EmptyResult{}, nil }),
		AddMethod(s, MethodSpec{Name: mcp.MethodDiscover, Eras: Modern, Cacheable: true},
			func(context.Context, *Request, *struct{}) (*mcp.DiscoverResult, error) { return s.discover(), nil }),
		s.addMethod(MethodSpec{Name: mcp.MethodSubscriptionListen, Eras: Modern}, s.listen),
		AddMethod(s, MethodSpec{Name: mcp.MethodSetLevel, Eras: Legacy, Capability: "logging"}, s.setLevel),
		s.declareFeatures(),
	} {
		if err != nil {
			s.cfg.logger.Error("built-in method not registered", "error", err)
		}
	}
	return s
}

// Info returns the server's implementation info.
func (s *Server) Info() mcp.Implementation { return s.info }

// Capabilities returns what the server declares to 2026-07-28 clients in
// server/discover: derived from its method table. CapabilitiesFor gives
// either era's.
func (s *Server) Capabilities() mcp.ServerCapabilities { return s.capabilities(mcp.EraModern) }

// CapabilitiesFor returns what the server declares in era: to legacy
// sessions in the initialize result, to 2026-07-28 clients in discover.
func (s *Server) CapabilitiesFor(era mcp.Era) mcp.ServerCapabilities { return s.capabilities(era) }

// OpenSession implements jsonrpc.SessionOpener: one session per stdio
// process or HTTP session. out receives messages that belong to no request
// (list-changed notifications, server-to-client requests made outside a
// request); it may be nil when the transport has nowhere to send them.
func (s *Server) OpenSession(out jsonrpc.Sender) jsonrpc.Session {
	return s.NewSession(out)
}

// NewSession is OpenSession returning the concrete type. A session with
// nowhere to send unsolicited messages (out nil: a stateless 2026-07-28 HTTP
// request) joins the server's session set only if it subscribes.
func (s *Server) NewSession(out jsonrpc.Sender) *Session {
	ss := newSession(s, out)
	if out != nil {
		s.track(ss)
	}
	return ss
}

// track adds a session to the set that list changes reach.
func (s *Server) track(ss *Session) {
	s.sessMu.Lock()
	s.sessions[ss] = struct{}{}
	s.sessMu.Unlock()
	ss.registered = true
}

func (s *Server) dropSession(ss *Session) {
	s.sessMu.Lock()
	delete(s.sessions, ss)
	s.sessMu.Unlock()
}

// SessionCount returns how many sessions are open.
func (s *Server) SessionCount() int {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	return len(s.sessions)
}

// openSessions returns the sessions open now, copied so that the caller
// can notify each without holding the server's lock (a slow peer then
// never blocks registration or another notification).
func (s *Server) openSessions() []*Session {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	sessions := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	return sessions
}

func (s *Server) discover() *mcp.DiscoverResult {
	return &mcp.DiscoverResult{
		SupportedVersions: mcp.SupportedVersions(),
		Capabilities:      s.capabilities(mcp.EraModern),
		Instructions:      s.cfg.instructions,
	}
}

// Tools returns the registered tools in list order, as a 2026-07-28 client
// sees them.
func (s *Server) Tools() []*mcp.Tool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*mcp.Tool, 0, len(s.tools.names))
	for _, t := range s.tools.values() {
		out = append(out, t.modern)
	}
	return out
}

// Tool returns one registered tool as a 2026-07-28 client sees it.
func (s *Server) Tool(name string) (*mcp.Tool, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tools.get(name)
	if !ok {
		return nil, false
	}
	return t.modern, true
}

// RemoveTool unregisters a tool and tells connected clients the list changed.
// It reports whether the tool existed.
func (s *Server) RemoveTool(name string) bool {
	s.mu.Lock()
	ok := s.tools.remove(name)
	s.mu.Unlock()
	if ok {
		s.listChanged(changedTools)
	}
	return ok
}

func (s *Server) register(t *tool) error {
	if err := s.ensureToolMethods(); err != nil {
		return err
	}
	if t.tasks != mcp.TaskForbidden {
		if err := s.startTasks(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	added := s.tools.add(t.name, t)
	s.mu.Unlock()
	if !added {
		return &RegistrationError{Kind: "tool", Name: t.name, Reason: "a tool with this name is already registered"}
	}
	s.listChanged(changedTools)
	return nil
}

// declareFeatures serves the methods of the features WithCapabilities
// names.
func (s *Server) declareFeatures() error {
	for _, f := range s.cfg.features {
		var err error
		switch f {
		case FeatureTools:
			err = s.ensureToolMethods()
		case FeaturePrompts:
			err = s.ensurePromptMethods()
		case FeatureResources:
			err = s.ensureResourceMethods("resource")
		case FeatureCompletions:
			err = s.ensureCompletionMethod()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ensureToolMethods adds tools/list and tools/call to the method table, and
// so the tools capability, when the first tool is registered.
func (s *Server) ensureToolMethods() error {
	s.toolMethods.Lock()
	defer s.toolMethods.Unlock()
	if s.hasMethod(mcp.MethodCallTool) {
		return nil
	}
	listChanged := json.RawMessage(`{"listChanged":true}`)
	if err := s.addMethod(MethodSpec{Name: mcp.MethodListTools, Capability: "tools", CapabilityValue: listChanged, Cacheable: true}, s.listTools); err != nil {
		return err
	}
	return s.addMethod(MethodSpec{Name: mcp.MethodCallTool, Capability: "tools", CapabilityValue: listChanged, NameParam: "name", Input: true}, s.callTool)
}

func (s *Server) lookup(name string) *tool {
	s.mu.RLock()
	t, _ := s.tools.get(name)
	s.mu.RUnlock()
	return t
}

// metaCache remembers decoded client capabilities and client info: a
// 2026-07-28 client sends the same bytes with every request, so they are
// decoded once. It holds at most metaCacheSize entries of each.
type metaCache struct {
	mu    sync.RWMutex
	capsM map[string]*mcp.ClientCapabilities
	infoM map[string]*mcp.Implementation
}

const metaCacheSize = 256

func (c *metaCache) caps(raw []byte) (*mcp.ClientCapabilities, error) {
	return decodeCached(&c.mu, &c.capsM, raw)
}

func (c *metaCache) info(raw []byte) (*mcp.Implementation, error) {
	return decodeCached(&c.mu, &c.infoM, raw)
}

// decodeCached returns raw decoded as a T, from *m when those bytes were
// decoded before; a new decoding is added to *m, which starts afresh when
// it holds metaCacheSize entries.
func decodeCached[T any](mu *sync.RWMutex, m *map[string]*T, raw []byte) (*T, error) {
	mu.RLock()
	v, ok := (*m)[string(raw)]
	mu.RUnlock()
	if ok {
		return v, nil
	}
	v = new(T)
	if err := wirejson.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	mu.Lock()
	if *m == nil || len(*m) >= metaCacheSize {
		*m = map[string]*T{}
	}
	(*m)[string(raw)] = v
	mu.Unlock()
	return v, nil
}
