package daemon_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The MCP endpoint answers a Host header only when it is a loopback name,
// one of allowed_hosts or public_url's host: the names callers use to reach
// a gateway behind a Service or a load balancer, and nothing else (DNS
// rebinding).
func TestAllowedHostsReachTheEndpoint(t *testing.T) {
	for _, c := range []struct {
		name      string
		allowed   []string
		publicURL string
		host      string
		want      int
	}{
		{"loopback by default", nil, "", "localhost", http.StatusOK},
		{"another name refused by default", nil, "", "gw.example.com", http.StatusForbidden},
		{"an allowed name", []string{"gw.example.com"}, "", "gw.example.com", http.StatusOK},
		{"an allowed name on any port", []string{"gw.example.com"}, "", "gw.example.com:8443", http.StatusOK},
		{"a name not in the list", []string{"gw.example.com"}, "", "evil.example", http.StatusForbidden},
		{"public_url's host", nil, "https://mcp.example.org/mcp", "mcp.example.org", http.StatusOK},
		{"any with *", []string{"*"}, "", "whatever.example", http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := greeterFile(t)
			file.AllowedHosts = c.allowed
			file.PublicURL = c.publicURL
			addrs, stop := runDaemon(t, file)
			defer stop()
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, addrs.MCP, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = c.host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("Host %q: %d %s, want %d", c.host, resp.StatusCode, got, c.want)
			}
		})
	}
}
