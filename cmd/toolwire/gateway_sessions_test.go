package main

import (
	"regexp"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// TestGatewayCheckShowsSessions: --check says how each upstream shares its
// sessions, a per_client one with its bounds, defaults filled in.
func TestGatewayCheckShowsSessions(t *testing.T) {
	bin := testenv.Toolwire(t)
	cfg := writeConfig(t, t.TempDir(), stdioUpstreams(bin, "one")+`
  four:
    command: [`+bin+`, serve, --stdio, --data-dir, ""]
    sessions: per_client
`)
	cfg2 := writeConfig(t, t.TempDir(), "upstreams:\n"+stdioUpstream(bin, "one")+"    sessions: per_client\n    max_sessions: 2\n    idle_timeout: 90s\n")
	r := runCLI(t, "gateway", "--check", "--config", cfg)
	if r.code != 0 || !regexp.MustCompile(`(?m)^one\s+ready\s+stdio\s+\d+\s+shared\s*$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^four\s+ready\s+stdio\s+\d+\s+per_client \(max_sessions 16, idle_timeout 5m0s\)\s*$`).MatchString(r.stdout) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "gateway", "--check", "--config", cfg2)
	if r.code != 0 || !regexp.MustCompile(`(?m)^one\s+ready\s+stdio\s+\d+\s+per_client \(max_sessions 2, idle_timeout 1m30s\)\s*$`).MatchString(r.stdout) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
