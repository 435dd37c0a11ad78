// Package gateway puts many MCP servers (upstreams: child processes over
// stdio, Streamable HTTP endpoints, in-process servers) behind one MCP
// endpoint, under stable namespaced names, each upstream session kept open
// and shared by every call, or, for an upstream whose Sessions is
// SessionsPerClient, one session per caller (sessions.go).
package gateway

import (
	"net/http"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/server"
)

// Config is what a gateway serves: its upstreams, how their names appear
// downstream, and who may use them. The config file (package
// gateway/config) decodes to it; a program embedding the gateway builds it
// directly. Reload replaces all of it at once.
type Config struct {
	Upstreams []Upstream
	Naming    Naming

	// Policy decides which tools, prompts and resources each caller sees
	// and may use (personas); nil lets every caller use everything.
	Policy *policy.Policy
	// Limits rate-limits tools/call (*ratelimit.Limiter); nil: no limits.
	Limits Limiter
	// Enrich adds context to successful tool results (*enrich.Enricher);
	// nil: results pass as the upstream sent them.
	Enrich Enricher
}

// Upstream is one MCP server behind the gateway. Exactly one of Command,
// URL and Server is set.
type Upstream struct {
	// Name namespaces the upstream's tools and prompts: [a-z0-9-]{1,32}.
	Name string

	// Command starts a child process spoken to over stdio: the program
	// and its arguments. Env is added to the gateway's environment; Dir
	// is its working directory ("" the gateway's).
	Command []string
	Env     map[string]string
	Dir     string

	// URL is a Streamable HTTP endpoint (either protocol era), reached
	// with Header on every request; Timeout bounds each call (0: the
	// gateway's default).
	URL     string
	Header  http.Header
	Timeout time.Duration
	// URLTransport is how URL is spoken to: URLTransportHTTP (Streamable
	// HTTP), URLTransportSSE (the 2024-11-05 HTTP+SSE transport: URL is
	// its event stream), or URLTransportAuto (""), Streamable HTTP falling
	// back to HTTP+SSE when the server refuses initialize with 400, 404
	// or 405, as the specification's backwards-compatibility guidance says.
	URLTransport URLTransport
	// Auth authorizes the gateway's own requests to a URL upstream, for
	// example an *oauth.Authorizer with the client credentials grant,
	// which obtains and refreshes the gateway's token. A downstream
	// caller's credentials are never forwarded upstream.
	Auth client.HTTPAuth

	// Server is an MCP server in this process.
	Server *server.Server

	// MaxMessageSize bounds one message from this upstream, in bytes (0 or
	// less: the gateway's, Limits.MaxMessageBytes, 16 MiB by default); a
	// larger one fails the call it answers with an isError result.
	MaxMessageSize int

	// Sessions says who shares the upstream's sessions: SessionsShared
	// ("" too), one session for every caller, or SessionsPerClient, a
	// session (for a Command, a child process) of its own for each
	// downstream session (2025-11-25) or caller identity (2026-07-28), so
	// that a server keeping per-session state (roots, log level,
	// subscriptions, resources it made) keeps each caller's apart
	// (sessions.go).
	Sessions SessionMode
	// MaxSessions bounds a per-client upstream's sessions open at once
	// (0 or less: DefaultMaxSessions); IdleTimeout closes one unused for
	// that long (0 or less: DefaultIdleTimeout).
	MaxSessions int
	IdleTimeout time.Duration

	// TokenExchange, for a URL upstream, sends each caller's request with
	// a token the authorization server issued for the upstream in
	// exchange for the caller's own (tokenexchange.go); nil: the gateway's
	// own credentials (Header, Auth) for every caller.
	TokenExchange *TokenExchange
	// Tools overrides what the catalog says of some of the upstream's
	// tools, by their upstream names: title, description and pinned
	// arguments (pinned.go).
	Tools map[string]ToolOverride
}

// SessionMode is an upstream's Sessions: shared or per client.
type SessionMode string

// The session modes.
const (
	SessionsShared    SessionMode = "shared"
	SessionsPerClient SessionMode = "per_client"
)

// Defaults of a per-client upstream's bounds.
const (
	// DefaultMaxSessions is the per-client sessions an upstream may have
	// open at once unless MaxSessions says otherwise.
	DefaultMaxSessions = 16
	// DefaultIdleTimeout is how long a per-client session may go unused
	// unless IdleTimeout says otherwise.
	DefaultIdleTimeout = 5 * time.Minute
)

// Transport names how the upstream is reached: "stdio", "http", "sse"
// (URLTransportSSE) or "in-process".
func (u Upstream) Transport() string {
	switch {
	case len(u.Command) > 0:
		return "stdio"
	case u.URL != "" && u.URLTransport == URLTransportSSE:
		return "sse"
	case u.URL != "":
		return "http"
	default:
		return "in-process"
	}
}

// Naming says how upstream names appear downstream: a tool or prompt
// "read_file" of upstream "files" is "files" + Separator + "read_file",
// unless Rename maps that full name to another; names in Hide (full
// names, after the separator is applied and before renaming) are not
// served at all.
type Naming struct {
	Separator string // default "__"
	Rename    map[string]string
	Hide      []string
}
