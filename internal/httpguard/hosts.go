package httpguard

import "net"

// DefaultAllowedHosts is the Host allow-list of a listener on addr that
// was given none: the loopback names, plus the host addr binds to when it
// names one (a LAN address or a name), so that a server bound to that
// address answers to it without opening itself to every Host (DNS
// rebinding). everyInterface reports an addr that binds every interface
// (no host, 0.0.0.0, ::), for which only the loopback names are accepted:
// the caller warns, in its own words, that clients need names allowed.
func DefaultAllowedHosts(addr string) (hosts []string, everyInterface bool) {
	hosts = []string{"localhost", "127.0.0.1", "::1"}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return hosts, false
	}
	ip := net.ParseIP(host)
	switch {
	case host == "" || ip != nil && ip.IsUnspecified():
		return hosts, true
	case ip == nil && host != "localhost" || ip != nil && !ip.IsLoopback():
		hosts = append(hosts, host)
	}
	return hosts, false
}
