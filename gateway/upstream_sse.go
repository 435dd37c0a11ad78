package gateway

import (
	"fmt"

	"github.com/toolwire/toolwire/client"
)

// URLTransport is how a URL upstream is spoken to (Upstream.URLTransport).
type URLTransport string

// The transports of a URL upstream.
const (
	// URLTransportAuto: Streamable HTTP, and the 2024-11-05 HTTP+SSE
	// transport at the same URL when the server refuses initialize with
	// 400, 404 or 405 and offers an event stream there instead
	// (client.HTTP.SSEFallback). The zero value.
	URLTransportAuto URLTransport = ""
	// URLTransportHTTP: Streamable HTTP only.
	URLTransportHTTP URLTransport = "http"
	// URLTransportSSE: the 2024-11-05 HTTP+SSE transport only (client.SSE):
	// the URL is the event stream, whose endpoint event names where
	// messages are POSTed. Its sessions speak the legacy protocol
	// versions; the gateway serves them to both downstream eras as it
	// serves any legacy upstream. A lost stream fails the calls waiting on
	// it (none is sent again) and is reopened and initialized again.
	URLTransportSSE URLTransport = "sse"
)

// check refuses a transport other than the known ones, and one set on an
// upstream without a URL (hasURL false).
func (t URLTransport) check(hasURL bool) error {
	switch t {
	case URLTransportAuto:
		return nil
	case URLTransportHTTP, URLTransportSSE:
		if !hasURL {
			return fmt.Errorf("transport %q applies to URL upstreams only", string(t))
		}
		return nil
	}
	return fmt.Errorf("transport %q: want %q or %q (or none, to detect it)", string(t), URLTransportHTTP, URLTransportSSE)
}

// urlTransport is the client transport of a URL upstream, per its
// URLTransport, authorized by auth; every one shares the upstream's
// connection pool.
func (u *upstream) urlTransport(auth client.HTTPAuth) client.Transport {
	s := u.spec
	switch s.URLTransport {
	case URLTransportSSE:
		return &client.SSE{URL: s.URL, Header: s.Header, Client: u.hc, Auth: auth}
	case URLTransportHTTP:
		return &client.HTTP{URL: s.URL, Header: s.Header, Client: u.hc, Auth: auth}
	}
	return &client.HTTP{URL: s.URL, Header: s.Header, Client: u.hc, Auth: auth, SSEFallback: true}
}
