//go:build unix

package gateway

import (
	"crypto/tls"
	"net"
	"syscall"
)

// peerClosed says, without waiting, whether the server has closed nc or
// sent it anything unasked: one read of the socket, which the net package
// keeps non-blocking, finding nothing to read (EAGAIN) or not. ok is
// false when nc is no socket. A byte this read takes is lost, which is no
// harm: the connection is then closed, never used again.
func peerClosed(nc net.Conn) (closed, ok bool) {
	if tc, isTLS := nc.(*tls.Conn); isTLS {
		nc = tc.NetConn() // a record waiting under TLS is as unasked as a byte
	}
	sc, isSocket := nc.(syscall.Conn)
	if !isSocket {
		return false, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	var rerr error
	cerr := rc.Control(func(fd uintptr) {
		var b [1]byte
		for {
			if _, rerr = syscall.Read(int(fd), b[:]); rerr != syscall.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return true, true
	}
	return rerr != syscall.EAGAIN && rerr != syscall.EWOULDBLOCK, true
}
