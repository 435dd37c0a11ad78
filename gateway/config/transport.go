package config

import (
	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
)

// urlTransports are the values of a URL upstream's transport key.
var urlTransports = []string{string(gateway.URLTransportHTTP), string(gateway.URLTransportSSE)}

// transport decodes a URL upstream's transport key into u.
func (d *decoder) transport(v ast.Node, what string, u *gateway.Upstream) {
	s, ok := d.str(v, what)
	if !ok {
		return
	}
	if err := checkTransport(s); err != nil {
		d.Errorf(v, "%s: %v", what, err)
		return
	}
	u.URLTransport = gateway.URLTransport(s)
}

// checkTransport refuses a transport other than http and sse, suggesting
// the one a typo away.
func checkTransport(s string) error {
	return checkOneOf(s, urlTransports, "is neither http nor sse", "; leave it out to detect the transport")
}

// checkUpstreamTransport is what Validate checks of an upstream's
// transport (a Config built in code, not decoded).
func checkUpstreamTransport(u gateway.Upstream, add func(string, ...any), p string) {
	if u.URLTransport == gateway.URLTransportAuto {
		return
	}
	if err := checkTransport(string(u.URLTransport)); err != nil {
		add("%s: transport: %v", p, err)
	} else if u.URL == "" {
		add("%s: transport applies to url upstreams only", p)
	}
}
