package load

import (
	"fmt"
	"net/http"
)

// ModernVersion is the stateless revision modern callers speak.
const ModernVersion = "2026-07-28"

// NewStateless returns a caller of the stateless 2026-07-28 revision: no
// handshake, every tools/call a self-contained POST (see Session.Modern).
func NewStateless(c *http.Client, url string) *Session {
	return &Session{URL: url, HTTP: c, Modern: true}
}

// modernMeta is the params._meta of every 2026-07-28 request: the version,
// the (empty) client capabilities, both required, and the client's identity.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + ModernVersion +
	`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"toolwire-bench","version":"1.0.0"}}`

// modernCallBody builds a 2026-07-28 tools/call request.
func modernCallBody(id int64, tool string, args []byte) []byte {
	return appendCall(id, tool, args, modernMeta)
}

// ModernCallBody builds the 2026-07-28 tools/call request with the given id.
func ModernCallBody(id int64, tool string, args []byte) []byte { return modernCallBody(id, tool, args) }

// CheckComplete expects what every 2026-07-28 result carries: resultType
// "complete" and the server's identity in _meta (there is no initialize
// result to carry it).
func CheckComplete(res *CallResult) error {
	if res.ResultType != "complete" {
		return fmt.Errorf("resultType = %q, want \"complete\"", res.ResultType)
	}
	if si := res.Meta.ServerInfo; si == nil || si.Name == "" {
		return fmt.Errorf("no _meta %q with a name", "io.modelcontextprotocol/serverInfo")
	}
	return nil
}
