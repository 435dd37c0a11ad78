// Package server hosts typed MCP tools and answers the protocol for both eras:
// legacy sessions opened by initialize (2025-11-25, 2025-06-18, 2025-03-26)
// and modern stateless requests (2026-07-28). Transports hand it decoded
// JSON-RPC messages through the jsonrpc.Session interface.
package server

import (
	"slices"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Server holds the tool registry and the sessions connected to it. It is safe
// for concurrent use; tools may be added and removed while serving.
type Server struct {
	info mcp.Implementation
	cfg  config

	mu    sync.RWMutex
	tools map[string]*tool
	names []string // sorted: the deterministic tools/list order

	sessMu   sync.Mutex
	sessions map[*Session]struct{}
}

// New returns a server that introduces itself as info.
func New(info mcp.Implementation, opts ...Option) *Server {
	s := &Server{info: info, cfg: defaultConfig(), tools: map[string]*tool{}, sessions: map[*Session]struct{}{}}
	for _, o := range opts {
		o.applyServer(&s.cfg)
	}
	return s
}

// Info returns the server's implementation info.
func (s *Server) Info() mcp.Implementation { return s.info }

// OpenSession implements jsonrpc.SessionOpener: one session per stdio
// process or HTTP session. out receives notifications that belong to no
// request; it may be nil when the transport has nowhere to send them.
func (s *Server) OpenSession(out jsonrpc.Sender) jsonrpc.Session {
	return s.NewSession(out)
}

// NewSession is OpenSession returning the concrete type.
func (s *Server) NewSession(out jsonrpc.Sender) *Session {
	ss := newSession(s, out)
	s.sessMu.Lock()
	s.sessions[ss] = struct{}{}
	s.sessMu.Unlock()
	return ss
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

func (s *Server) capabilities() mcp.ServerCapabilities {
	return mcp.ServerCapabilities{Tools: &mcp.ListChangedCapability{ListChanged: true}}
}

// Tools returns the registered tools in list order, as a 2026-07-28 client
// sees them.
func (s *Server) Tools() []*mcp.Tool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*mcp.Tool, len(s.names))
	for i, n := range s.names {
		out[i] = s.tools[n].modern
	}
	return out
}

// Tool returns one registered tool as a 2026-07-28 client sees it.
func (s *Server) Tool(name string) (*mcp.Tool, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tools[name]
	if !ok {
		return nil, false
	}
	return t.modern, true
}

// RemoveTool unregisters a tool and tells connected clients the list changed.
// It reports whether the tool existed.
func (s *Server) RemoveTool(name string) bool {
	s.mu.Lock()
	_, ok := s.tools[name]
	if ok {
		delete(s.tools, name)
		i, _ := slices.BinarySearch(s.names, name)
		s.names = slices.Delete(s.names, i, i+1)
	}
	s.mu.Unlock()
	if ok {
		s.toolsChanged()
	}
	return ok
}

func (s *Server) register(t *tool) error {
	s.mu.Lock()
	if _, dup := s.tools[t.name]; dup {
		s.mu.Unlock()
		return &RegistrationError{Tool: t.name, Reason: "a tool with this name is already registered"}
	}
	s.tools[t.name] = t
	i, _ := slices.BinarySearch(s.names, t.name)
	s.names = slices.Insert(s.names, i, t.name)
	s.mu.Unlock()
	s.toolsChanged()
	return nil
}

func (s *Server) lookup(name string) *tool {
	s.mu.RLock()
	t := s.tools[name]
	s.mu.RUnlock()
	return t
}

// toolsChanged notifies every session that wants to know.
func (s *Server) toolsChanged() {
	s.sessMu.Lock()
	sessions := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.sessMu.Unlock()
	for _, ss := range sessions {
		ss.toolsChanged()
	}
}
