package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// A 2025-era session's state can move between processes: Snapshot encodes
// what the session negotiated (revision, client info and capabilities)
// and what its client asked since (notifications/initialized, its log
// level, its resource subscriptions), and Server.ResumeSession rebuilds the
// session from it elsewhere, so that replicas sharing a session store serve
// any session. What is in flight (requests, requests sent to the client)
// stays in the process that runs it.

// MaxSnapshotSize bounds a snapshot ResumeSession and ApplySnapshot accept.
// A snapshot holds at most Limits.MaxSubscriptions URIs of Limits.MaxURILength
// bytes each, so the bound only stops damage.
const MaxSnapshotSize = 4 << 20

// sessionState is a snapshot's JSON.
type sessionState struct {
	Version       string                 `json:"version"`
	ClientInfo    mcp.Implementation     `json:"clientInfo"`
	Capabilities  mcp.ClientCapabilities `json:"capabilities"`
	Ready         bool                   `json:"ready,omitempty"`
	LogLevel      mcp.LoggingLevel       `json:"logLevel,omitempty"`
	Subscriptions []string               `json:"subscriptions,omitempty"`
}

// snapshotMembers are the member names of sessionState: a snapshot holding
// any other was not written by Snapshot.
var snapshotMembers = func() map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeFor[sessionState]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names[name] = true
	}
	return names
}()

var (
	_ jsonrpc.StatefulSession = (*Session)(nil)
	_ jsonrpc.SessionResumer  = (*Server)(nil)
)

// ErrNotEstablished is Snapshot of a session before initialize succeeded.
var ErrNotEstablished = errors.New("server: the session is not initialized: nothing to snapshot")

// StateRevision implements jsonrpc.StatefulSession.
func (ss *Session) StateRevision() uint64 { return ss.stateRev.Load() }

// Snapshot implements jsonrpc.StatefulSession.
func (ss *Session) Snapshot() ([]byte, error) {
	ss.mu.Lock()
	if !ss.initialized {
		ss.mu.Unlock()
		return nil, ErrNotEstablished
	}
	st := sessionState{Version: ss.version, ClientInfo: ss.clientInfo, Capabilities: ss.capsLocked(), Ready: ss.ready, LogLevel: ss.logs.level}
	ss.mu.Unlock()
	subs := &ss.srv.resources.subs
	subs.mu.Lock()
	for uri := range subs.bySession[ss] {
		st.Subscriptions = append(st.Subscriptions, uri)
	}
	subs.mu.Unlock()
	slices.Sort(st.Subscriptions)
	return json.Marshal(&st)
}

// ResumeSession implements jsonrpc.SessionResumer: the session a snapshot
// describes, established (initialize is not served again), with its log
// level and subscriptions. A snapshot that is damaged, of a revision this
// server does not speak, or past its limits is an error.
func (s *Server) ResumeSession(state []byte, out jsonrpc.Sender) (jsonrpc.Session, error) {
	st, err := s.decodeState(state)
	if err != nil {
		return nil, err
	}
	ss := s.NewSession(out)
	ss.mu.Lock()
	// Requests this copy sends the client are numbered apart from those of
	// the copies elsewhere (a random start below 2^52, within JSON's exact
	// integers), so that the client's answer reaches the one that asked.
	ss.firstCallID = rand.Int64N(1<<52) &^ 0xffff
	ss.initialized, ss.ready = true, st.Ready
	ss.version, ss.clientInfo, ss.clientCaps = st.Version, st.ClientInfo, keptCaps(st.Capabilities)
	ss.logs.level = st.LogLevel
	ss.mu.Unlock()
	s.setSubscriptions(ss, st.Subscriptions)
	ss.stateRev.Add(1)
	return ss, nil
}

// ApplySnapshot implements jsonrpc.StatefulSession: the client's later
// requests, served by another process, change this copy of the session
// too. The negotiated part must be the session's own.
func (ss *Session) ApplySnapshot(state []byte) error {
	st, err := ss.srv.decodeState(state)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	if !ss.initialized || ss.version != st.Version || ss.clientInfo.Name != st.ClientInfo.Name || ss.clientInfo.Version != st.ClientInfo.Version {
		ss.mu.Unlock()
		return errors.New("server: the snapshot is of another session")
	}
	ss.ready = ss.ready || st.Ready
	ss.logs.level = st.LogLevel
	closed := ss.closed
	ss.mu.Unlock()
	if !closed {
		ss.srv.setSubscriptions(ss, st.Subscriptions)
	}
	ss.stateRev.Add(1)
	return nil
}

// decodeState reads a snapshot by the strict reader (members named as
// written, none repeated at any depth, none unknown at the top), within the
// server's limits.
func (s *Server) decodeState(state []byte) (*sessionState, error) {
	if len(state) > MaxSnapshotSize {
		return nil, fmt.Errorf("server: session snapshot of %d bytes, more than %d", len(state), MaxSnapshotSize)
	}
	var st sessionState
	if err := wirejson.Unmarshal(state, &st); err != nil {
		return nil, fmt.Errorf("server: session snapshot: %w", err)
	}
	var top map[string]jsontext.Value
	_ = wirejson.Unmarshal(state, &top) // read above
	for name := range top {
		if !snapshotMembers[name] {
			return nil, fmt.Errorf("server: session snapshot: unknown member %q", name)
		}
	}
	if !slices.Contains(mcp.LegacyVersions(), st.Version) {
		return nil, fmt.Errorf("server: session snapshot of revision %q, which this server does not speak", st.Version)
	}
	if st.LogLevel != "" && !st.LogLevel.Valid() {
		return nil, fmt.Errorf("server: session snapshot: log level %q", st.LogLevel)
	}
	if n := s.cfg.resources.maxSubs(); len(st.Subscriptions) > n {
		return nil, fmt.Errorf("server: session snapshot holds %d subscriptions, more than the %d allowed", len(st.Subscriptions), n)
	}
	for _, uri := range st.Subscriptions {
		if n := s.cfg.resources.maxURI(); uri == "" || len(uri) > n {
			return nil, fmt.Errorf("server: session snapshot holds a subscription URI of %d bytes (1 to %d)", len(uri), n)
		}
	}
	return &st, nil
}

// setSubscriptions makes uris the session's subscriptions.
func (s *Server) setSubscriptions(ss *Session, uris []string) {
	subs := &s.resources.subs
	subs.mu.Lock()
	defer subs.mu.Unlock()
	if len(uris) == 0 {
		delete(subs.bySession, ss)
		return
	}
	set := make(map[string]struct{}, len(uris))
	for _, u := range uris {
		set[u] = struct{}{}
	}
	if subs.bySession == nil {
		subs.bySession = map[*Session]map[string]struct{}{}
	}
	subs.bySession[ss] = set
}
