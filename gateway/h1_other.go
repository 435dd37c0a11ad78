//go:build !unix

package gateway

import "net"

// peerClosed cannot read a socket without waiting here: alive probes with
// a deadline instead.
func peerClosed(net.Conn) (closed, ok bool) { return false, false }
