package config

import (
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway"
)

// TestLimitsSection: the limits section decodes every bound into the value the
// gateway's options take, leaves what it omits zero (the option's
// default), and reports each mistake at its line and column.
func TestLimitsSection(t *testing.T) {
	src := `limits:
  max_conns: 512
  max_in_flight: 256
  max_body: 1MiB
  memory: 16MiB
  anonymous_memory: 4MiB
  address_memory: 1MiB
  min_body_rate: 2048
  body_grace: 3s
  sessions: {max: 100, per_caller: 10, anonymous: 20, idle_timeout: 2h, unused_timeout: 10s}
  inputs: {pending: 64, per_caller: 4, timeout: 15s}
  upstream_lists: {max_pages: 10, max_items: 500, max_bytes: 2MiB}
`
	f, err := Parse([]byte(src), "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{
		MaxConns: 512, MaxInFlight: 256, MaxBody: 1 << 20, Memory: 16 << 20, AnonymousMemory: 4 << 20, AddressMemory: 1 << 20,
		MinBodyRate: 2048, BodyGrace: 3 * time.Second,
		Sessions:      SessionLimits{Max: 100, PerCaller: 10, Anonymous: 20, IdleTimeout: 2 * time.Hour, UnusedTimeout: 10 * time.Second},
		Inputs:        gateway.InputLimits{Pending: 64, PerCaller: 4, Timeout: 15 * time.Second},
		UpstreamLists: gateway.ListLimits{Pages: 10, Items: 500, Bytes: 2 << 20},
	}
	if f.Limits != want {
		t.Fatalf("limits:\n got %+v\nwant %+v", f.Limits, want)
	}
	if f, err := Parse([]byte("upstreams: {}\n"), "g.yaml", env(nil)); err != nil || f.Limits != (Limits{}) {
		t.Fatalf("no limits section: %+v, %v", f.Limits, err)
	}
	if f, err := Parse([]byte("limits: {min_body_rate: off}\n"), "g.yaml", env(nil)); err != nil || f.Limits.MinBodyRate != -1 {
		t.Fatalf("min_body_rate off: %+v, %v", f.Limits, err)
	}
	for _, c := range []struct{ src, want string }{
		{"limits: 5\n", "g.yaml:1:9: limits: want a mapping"},
		{"limits: {max_con: 5}\n", `g.yaml:1:10: unknown key "max_con" in limits`},
		{"limits: {max_conns: 0}\n", "g.yaml:1:21: limits.max_conns: 0 is not from 1 to 1000000"},
		{"limits: {max_conns: lots}\n", `g.yaml:1:21: limits.max_conns: "lots" is not a whole number`},
		{"limits: {max_body: 4MB}\n", `g.yaml:1:20: limits.max_body: "4MB" is not a size`},
		{"limits: {memory: 2GiB}\n", "g.yaml:1:18: limits.memory: 2GiB is more than 1GiB"},
		{"limits: {anonymous_memory: 64MiB}\n", "g.yaml:1:10: limits.anonymous_memory: 67108864 is more than limits.memory (33554432)"},
		{"limits: {memory: 8MiB, max_body: 16MiB}\n", "g.yaml:1:24: limits.max_body: 16777216 is more than limits.memory (8388608)"},
		{"limits: {min_body_rate: off, body_grace: 5s}\n", "g.yaml:1:30: limits.body_grace: applies only with a min_body_rate"},
		{"limits: {body_grace: 0s}\n", "g.yaml:1:22: limits.body_grace: 0s is not more than zero"},
		{"limits: {body_grace: 2h}\n", "g.yaml:1:22: limits.body_grace: 2h0m0s is more than 1h0m0s"},
		{"limits:\n  sessions: {max: 10, per_caller: 11}\n", "g.yaml:2:23: limits.sessions.per_caller: 11 is more than limits.sessions.max (10)"},
		{"limits:\n  sessions: {max: 10, anonymous: 20}\n", "g.yaml:2:23: limits.sessions.anonymous: 20 is more than limits.sessions.max (10)"},
		{"limits:\n  sessions: {idle_timeout: 1m, unused_timeout: 2m}\n", "g.yaml:2:32: limits.sessions.unused_timeout: 2m0s is more than limits.sessions.idle_timeout (1m0s)"},
		{"limits:\n  sessions: {idle_timeout: 8d}\n", "g.yaml:2:28: limits.sessions.idle_timeout: 192h0m0s is more than 168h0m0s"},
		{"limits:\n  sessions: {maximum: 3}\n", `g.yaml:2:14: unknown key "maximum" in limits.sessions`},
		{"limits:\n  inputs: {pending: 4, per_caller: 8}\n", "g.yaml:2:24: limits.inputs.per_caller: 8 is more than limits.inputs.pending (4)"},
		{"limits:\n  inputs: {timeout: soon}\n", `g.yaml:2:21: limits.inputs.timeout: "soon" is not a duration`},
		{"limits:\n  upstream_lists: {max_items: 0}\n", "g.yaml:2:31: limits.upstream_lists.max_items: 0 is not from 1 to 10000000"},
		{"limits:\n  upstream_lists: {pages: 3}\n", `g.yaml:2:20: unknown key "pages" in limits.upstream_lists`},
		{"limits:\n  upstream_lists: [1]\n", "g.yaml:2:19: limits.upstream_lists: want a mapping"},
	} {
		_, err := Parse([]byte(c.src), "g.yaml", env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
}
