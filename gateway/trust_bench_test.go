package gateway_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/sqlite"
	"github.com/toolwire/toolwire/gateway/policy"
)

// BenchmarkTrustedCall is one forwarded call in process, plain and with
// a persona and the audit trail (SQLite without fsync: the journal), to
// see what the trust layer adds per call:
// go test -run '^$' -bench TrustedCall ./gateway/
func BenchmarkTrustedCall(b *testing.B) {
	pol, err := policy.New([]policy.Persona{{Name: "all", Match: policy.Match{Anonymous: true}, Tools: policy.Rules{Allow: []string{"*"}}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		trust bool
	}{{"plain", false}, {"persona+audit", true}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := gateway.Config{Upstreams: []gateway.Upstream{{Name: "files", Server: echoServer("files")}}}
			var opts []gateway.Option
			if c.trust {
				s, err := sqlite.Open(filepath.Join(b.TempDir(), "audit.db"), audit.WithFsync(false))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				cfg.Policy = pol
				opts = append(opts, gateway.WithAudit(s))
			}
			g, err := gateway.New(cfg, opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = g.Close(context.Background()) })
			cl := downstream(b, g)
			args := map[string]any{"text": "hello"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cl.CallTool(context.Background(), "files__echo", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
