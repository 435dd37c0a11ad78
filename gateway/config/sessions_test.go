package config

import (
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway"
)

// TestUpstreamSessions: sessions, max_sessions and idle_timeout decode
// into the upstream, shared by default, and each mistake is reported at its
// line and column, a misspelt mode with the one meant.
func TestUpstreamSessions(t *testing.T) {
	src := `upstreams:
  ev:
    command: [node, ev.js]
    sessions: per_client
    max_sessions: 2
    idle_timeout: 90s
  plain:
    url: http://127.0.0.1:9/mcp
`
	f, err := Parse([]byte(src), "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ev, plain := f.Gateway.Upstreams[0], f.Gateway.Upstreams[1]
	if ev.Sessions != gateway.SessionsPerClient || ev.MaxSessions != 2 || ev.IdleTimeout != 90*time.Second {
		t.Fatalf("ev: %q %d %v", ev.Sessions, ev.MaxSessions, ev.IdleTimeout)
	}
	if plain.Sessions != "" || plain.MaxSessions != 0 || plain.IdleTimeout != 0 {
		t.Fatalf("plain: %q %d %v", plain.Sessions, plain.MaxSessions, plain.IdleTimeout)
	}
	head := "upstreams:\n  ev:\n    command: [x]\n"
	for _, c := range []struct{ src, want string }{
		{head + "    sessions: per-client\n", `g.yaml:4:15: upstream "ev": sessions: "per-client" is neither shared nor per_client (did you mean "per_client"?)`},
		{head + "    sessions: pooled\n", `g.yaml:4:15: upstream "ev": sessions: "pooled" is neither shared nor per_client`},
		{head + "    sessions: per_client\n    max_sessions: 0\n", `g.yaml:5:19: upstream "ev": max_sessions: 0 is not from 1 to 4096`},
		{head + "    sessions: per_client\n    max_sessions: many\n", `g.yaml:5:19: upstream "ev": max_sessions: "many" is not a whole number`},
		{head + "    sessions: per_client\n    idle_timeout: 0s\n", `g.yaml:5:19: upstream "ev": idle_timeout: 0s is not more than zero`},
		{head + "    sessions: per_client\n    idle_timeout: 48h\n", `g.yaml:5:19: upstream "ev": idle_timeout: 48h0m0s is more than 24h0m0s`},
		{head + "    max_sessions: 4\n", `g.yaml:4:5: upstream "ev": max_sessions applies to sessions: per_client only`},
		{head + "    sessions: shared\n    idle_timeout: 1m\n", `g.yaml:5:5: upstream "ev": idle_timeout applies to sessions: per_client only`},
		{head + "    max_session: 4\n", `g.yaml:4:5: unknown key "max_session" in upstream "ev" (did you mean "max_sessions"?)`},
	} {
		_, err := Parse([]byte(c.src), "g.yaml", env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

// TestValidateUpstreamSessions: a config built in code is held to the same
// bounds as a decoded one.
func TestValidateUpstreamSessions(t *testing.T) {
	f, err := Parse([]byte("upstreams:\n  ev:\n    command: [x]\n"), "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	f.Gateway.Upstreams[0].Sessions = "per-client"
	f.Gateway.Upstreams[0].MaxSessions = -1
	err = Validate(f)
	for _, want := range []string{`sessions: "per-client" is neither shared nor per_client (did you mean "per_client"?)`, "max_sessions: -1 is not from 1 to 4096"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}
