// Package httpguard holds the request checks every toolwire HTTP listener
// makes before it reads a body: the Host and Origin policy that stops DNS
// rebinding and cross-site requests from a browser, and the Content-Type
// test that keeps a web page from sending a "simple" (unpreflighted)
// cross-origin POST. The MCP endpoint (transport/streamable) and the Open
// Tool Calling endpoint (otc) share it, so both apply the same rules.
package httpguard

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// LoopbackNames are the host names a listener answers to by default.
var LoopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// Policy decides which Host and Origin headers are accepted: the defence
// against DNS rebinding, where a web page on an attacker's domain reaches a
// server bound to 127.0.0.1, and against a page on another site sending
// requests with the user's browser. Create it with NewPolicy.
type Policy struct {
	anyHost, anyOrigin bool
	hosts              map[string]bool // "name" (any port) or "name:port", lower case
	origins            map[string]bool // "scheme://host[:port]", lower case
	loopbackOrigins    bool            // no origins configured: allow loopback ones
}

// NewPolicy accepts the Host values in hosts ("name", any port, or
// "name:port"; "*" for any) and the Origin values in origins
// ("scheme://host[:port]"; "*" for any). An empty hosts means the loopback
// names; an empty origins means loopback origins (http or https).
func NewPolicy(hosts, origins []string) *Policy {
	p := &Policy{hosts: map[string]bool{}, origins: map[string]bool{}}
	if len(hosts) == 0 {
		hosts = LoopbackNames
	}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "*" {
			p.anyHost = true
			continue
		}
		p.hosts[strings.Trim(h, "[]")] = true
		p.hosts[h] = true
	}
	if len(origins) == 0 {
		p.loopbackOrigins = true
	}
	for _, o := range origins {
		o = strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/"))
		if o == "*" {
			p.anyOrigin = true
			continue
		}
		p.origins[o] = true
	}
	return p
}

// HostAllowed checks a Host header value ("name" or "name:port").
func (p *Policy) HostAllowed(host string) bool {
	if p.anyHost {
		return true
	}
	host = strings.ToLower(host)
	if host == "" {
		return false
	}
	if p.hosts[host] {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	return p.hosts[strings.Trim(name, "[]")]
}

// OriginAllowed checks an Origin header value.
func (p *Policy) OriginAllowed(origin string) bool {
	if p.anyOrigin {
		return true
	}
	origin = strings.ToLower(strings.TrimSpace(origin))
	if p.origins[origin] {
		return true
	}
	if !p.loopbackOrigins {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" && u.Path != "/" {
		return false
	}
	name := u.Hostname()
	for _, l := range LoopbackNames {
		if name == l {
			return true
		}
	}
	return false
}

// Refusal checks a request's Origin (when it has one: non-browser clients
// send none) and Host. It returns "" when both are allowed, else why the
// request must be refused with 403, in words fit for the client.
func (p *Policy) Refusal(r *http.Request) string {
	if origin := r.Header.Get("Origin"); origin != "" && !p.OriginAllowed(origin) {
		return fmt.Sprintf("forbidden: Origin %q is not allowed", origin)
	}
	if !p.HostAllowed(r.Host) {
		return fmt.Sprintf("forbidden: Host %q is not allowed", r.Host)
	}
	return ""
}

// MediaTypeIs reports whether a Content-Type names want (parameters such as
// charset aside). A missing Content-Type is not want: a browser sends a
// POST without one, or with text/plain, to another origin without asking
// first, so a JSON endpoint that accepted it could be driven by any page.
// The common case is matched without allocating; anything else goes through
// mime.ParseMediaType.
func MediaTypeIs(header, want string) bool {
	mt, params, _ := strings.Cut(header, ";")
	if strings.EqualFold(strings.TrimSpace(mt), want) && (params == "" || strings.TrimSpace(params) == "") {
		return true
	}
	mt, _, err := mime.ParseMediaType(header)
	return err == nil && strings.EqualFold(mt, want)
}

// SameOrigin compares two URLs' origins (RFC 6454): scheme, host and port,
// the default port filled in. Every client in the tree follows a redirect
// carrying credentials only within one origin.
func SameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}
