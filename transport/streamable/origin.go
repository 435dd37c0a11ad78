package streamable

import (
	"net"
	"net/url"
	"strings"
)

// loopbackNames are the host names a default (loopback) server answers to.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// hostPolicy decides which Host and Origin headers are accepted: the
// defence against DNS rebinding, where a web page on an attacker's domain
// reaches a server bound to 127.0.0.1.
type hostPolicy struct {
	anyHost, anyOrigin bool
	hosts              map[string]bool // "name" (any port) or "name:port", lower case
	origins            map[string]bool // "scheme://host[:port]", lower case
	loopbackOrigins    bool            // no origins configured: allow loopback ones
}

func newHostPolicy(hosts, origins []string) *hostPolicy {
	p := &hostPolicy{hosts: map[string]bool{}, origins: map[string]bool{}}
	if len(hosts) == 0 {
		hosts = loopbackNames
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

// hostAllowed checks a Host header value ("name" or "name:port").
func (p *hostPolicy) hostAllowed(host string) bool {
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

// originAllowed checks an Origin header value.
func (p *hostPolicy) originAllowed(origin string) bool {
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
	for _, l := range loopbackNames {
		if name == l {
			return true
		}
	}
	return false
}
