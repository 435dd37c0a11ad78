package httpguard

import (
	"net"
	"net/netip"
)

// ClientAddress names the client of a request for per-client limits (login
// attempts, a share of the memory budget): the IP address of the
// connection (Request.RemoteAddr; a forwarded-for header could be forged),
// an IPv6 address by its /64, which one host usually holds whole. A
// remote address that is not an IP comes back as it is.
func ClientAddress(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
