package config

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway"
)

func TestUpstreamTransport(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want gateway.URLTransport
	}{
		{"upstreams:\n  legacy:\n    url: http://127.0.0.1:3001/sse\n    transport: sse\n", gateway.URLTransportSSE},
		{"upstreams:\n  modern:\n    url: http://127.0.0.1:3001/mcp\n    transport: http\n", gateway.URLTransportHTTP},
		{"upstreams:\n  either:\n    url: http://127.0.0.1:3001/mcp\n", gateway.URLTransportAuto},
	} {
		f, err := Parse([]byte(tc.yaml), "gateway.yaml", env(nil))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if got := f.Gateway.Upstreams[0].URLTransport; got != tc.want {
			t.Errorf("%q: transport %q, want %q", tc.yaml, got, tc.want)
		}
	}
	for _, tc := range []struct{ yaml, want string }{
		{"upstreams:\n  legacy:\n    url: http://127.0.0.1:3001/sse\n    transport: ssse\n",
			`gateway.yaml:4:16: upstream "legacy": transport: "ssse" is neither http nor sse (did you mean "sse"?)`},
		{"upstreams:\n  legacy:\n    url: http://127.0.0.1:3001/sse\n    transport: websocket\n",
			`gateway.yaml:4:16: upstream "legacy": transport: "websocket" is neither http nor sse; leave it out to detect the transport`},
		{"upstreams:\n  files:\n    command: [node, server.js]\n    transport: sse\n",
			`gateway.yaml:4:5: upstream "files": transport applies to url upstreams only`},
	} {
		_, err := Parse([]byte(tc.yaml), "gateway.yaml", env(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %s", tc.yaml, err, tc.want)
		}
	}
	f, err := Parse([]byte("upstreams:\n  a:\n    command: [x]\n  b:\n    url: http://127.0.0.1/sse\n"), "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	f.Gateway.Upstreams[0].URLTransport = gateway.URLTransportSSE
	f.Gateway.Upstreams[1].URLTransport = "tcp"
	err = Validate(f)
	for _, want := range []string{`upstream "a": transport applies to url upstreams only`, `upstream "b": transport: "tcp" is neither http nor sse`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %s", err, want)
		}
	}
}
