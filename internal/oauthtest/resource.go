package oauthtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// Resource protects an MCP handler with a simple bearer check against an
// authorization server, and serves its Protected Resource Metadata at the
// path-suffixed well-known URL. Mount Handler at the origin's root.
type Resource struct {
	AS *Server
	// Resource is the identifier published in the metadata and required of
	// tokens (their resource parameter).
	Resource string
	// Path is the MCP endpoint's path, e.g. "/mcp".
	Path string
	// AuthorizationServers overrides the metadata's list (default: AS.URL).
	AuthorizationServers []string
	ScopesSupported      []string
	// Required gives the scopes a JSON-RPC method needs ("" for any other);
	// a token without them gets 403 insufficient_scope.
	Required map[string][]string
	// ChallengeScope is the scope parameter of the 401 challenge.
	ChallengeScope string
	MCP            http.Handler

	mu   sync.Mutex
	seen []string // the Authorization header of every MCP request
}

// PRMPath is where the metadata is served.
func (rs *Resource) PRMPath() string { return "/.well-known/oauth-protected-resource" + rs.Path }

// SetResource changes the identifier published and required (safe while
// the handler serves).
func (rs *Resource) SetResource(r string) {
	rs.mu.Lock()
	rs.Resource = r
	rs.mu.Unlock()
}

func (rs *Resource) resource() string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.Resource
}

// Seen returns the Authorization header values the endpoint received.
func (rs *Resource) Seen() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.seen)
}

// Handler serves the metadata and the protected endpoint.
func (rs *Resource) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == rs.PRMPath() {
			servers := rs.AuthorizationServers
			if servers == nil {
				servers = []string{rs.AS.URL}
			}
			md := map[string]any{"resource": rs.resource(), "authorization_servers": servers}
			if rs.ScopesSupported != nil {
				md["scopes_supported"] = rs.ScopesSupported
			}
			writeJSON(w, http.StatusOK, md)
			return
		}
		if r.URL.Path != rs.Path {
			http.NotFound(w, r)
			return
		}
		rs.mu.Lock()
		rs.seen = append(rs.seen, r.Header.Get("Authorization"))
		rs.mu.Unlock()
		prm := "http://" + r.Host + rs.PRMPath()
		challenge := fmt.Sprintf(`Bearer resource_metadata="%s"`, prm)
		if rs.ChallengeScope != "" {
			challenge += fmt.Sprintf(`, scope="%s"`, rs.ChallengeScope)
		}
		h := r.Header.Get("Authorization")
		if !strings.HasPrefix(h, "Bearer ") {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		info, ok := rs.AS.Verify(strings.TrimPrefix(h, "Bearer "))
		if !ok || info.Resource != rs.resource() {
			w.Header().Set("WWW-Authenticate", challenge+`, error="invalid_token"`)
			http.Error(w, "invalid token", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && rs.Required != nil {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			if wirejson.Unmarshal(body, &msg) != nil {
				msg.Method = ""
			}
			for _, need := range rs.Required[msg.Method] {
				if !slices.Contains(info.Scopes, need) {
					w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s"`,
						strings.Join(rs.Required[msg.Method], " "), prm))
					http.Error(w, "insufficient scope", http.StatusForbidden)
					return
				}
			}
		}
		rs.MCP.ServeHTTP(w, r)
	})
}
