// Package testmcp is the set-up end-to-end tests begin with: a server
// served over Streamable HTTP on loopback, and a client connected to a
// server, each torn down when the test ends.
package testmcp

import (
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Path is the path of the MCP endpoint ServeHTTP's URL names.
const Path = "/mcp"

// ServeHTTP serves s over Streamable HTTP (with opts) on a loopback test
// server until the test ends, and returns the MCP endpoint's URL.
func ServeHTTP(t testing.TB, s *server.Server, opts ...streamable.HandlerOption) string {
	t.Helper()
	h := streamable.NewHandler(s, opts...)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return hs.URL + Path
}

// Connect connects a client over tr with opts, the handshake bounded by
// testwait's limit, fails the test if that fails, and closes the client
// when the test ends.
func Connect(t testing.TB, tr client.Transport, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Connect(testwait.Context(t), tr, opts...)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ConnectHTTP serves s over Streamable HTTP (ServeHTTP) and connects a
// client to it with opts (Connect).
func ConnectHTTP(t testing.TB, s *server.Server, opts ...client.Option) *client.Client {
	t.Helper()
	return Connect(t, &client.HTTP{URL: ServeHTTP(t, s)}, opts...)
}
