//go:build !unix

package gateway

import "net"

// peerClosed cannot read a socket without waiting here: alive probes with
// a deadline instead.
func peerClosed(net.Conn) (closed, ok bool) { return false, false }

// readWait does not wait here: a response's reader is taken as soon as
// its request is written.
type readWait struct{}

func newReadWait(net.Conn) *readWait { return nil }

func (*readWait) await() error { return nil }

// awaitReadable returns at once here.
func awaitReadable(net.Conn) error { return nil }
