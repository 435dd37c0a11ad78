package httpguard

import (
	"strings"
	"testing"
)

// TestDefaultAllowedHosts: the loopback names always; the bound host too
// when it is neither loopback nor every interface, which is reported.
func TestDefaultAllowedHosts(t *testing.T) {
	for addr, want := range map[string]struct {
		hosts string
		every bool
	}{
		"127.0.0.1:8080":  {"localhost,127.0.0.1,::1", false},
		"localhost:8080":  {"localhost,127.0.0.1,::1", false},
		"[::1]:8080":      {"localhost,127.0.0.1,::1", false},
		"10.0.0.5:8080":   {"localhost,127.0.0.1,::1,10.0.0.5", false},
		"0.0.0.0:8080":    {"localhost,127.0.0.1,::1", true},
		"[::]:8080":       {"localhost,127.0.0.1,::1", true},
		":8080":           {"localhost,127.0.0.1,::1", true},
		"mcp.example:443": {"localhost,127.0.0.1,::1,mcp.example", false},
		"no port":         {"localhost,127.0.0.1,::1", false},
	} {
		hosts, every := DefaultAllowedHosts(addr)
		if got := strings.Join(hosts, ","); got != want.hosts || every != want.every {
			t.Errorf("%s: %s every interface %v, want %s %v", addr, got, every, want.hosts, want.every)
		}
	}
}
