package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/suggest"
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
	for _, t := range urlTransports {
		if s == t {
			return nil
		}
	}
	if best, ok := suggest.Nearest(s, urlTransports); ok {
		return fmt.Errorf("%q is neither http nor sse (did you mean %q?); leave it out to detect the transport", s, best)
	}
	return fmt.Errorf("%q is neither http nor sse; leave it out to detect the transport", s)
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
