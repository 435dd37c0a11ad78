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

// readWait is how a connection waits for its response holding no buffer
// (see h1Readers): made once per connection, so that a wait allocates
// nothing.
type readWait struct {
	rc     syscall.RawConn
	looked bool
	f      func(fd uintptr) bool
}

// newReadWait is nc's readWait, or nil when nc is no socket or a TLS
// connection, whose records may already sit decrypted in its own buffer:
// its reader is taken at once.
func newReadWait(nc net.Conn) *readWait {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &readWait{rc: rc}
	w.f = w.ready
	return w
}

// await waits until the connection has something to read, its deadline
// passes or it fails.
func (w *readWait) await() error {
	if w == nil {
		return nil
	}
	w.looked = false
	return w.rc.Read(w.f)
}

// ready is await's look at the socket. The first is a peek, since the
// answer may have come already (a readiness the poller saw before the
// wait began is not kept); after a wait the poller's word is taken, and a
// wake-up with nothing to read only means that the read that follows
// waits with its buffer.
func (w *readWait) ready(fd uintptr) bool {
	if w.looked {
		return true
	}
	w.looked = true
	var b [1]byte
	for {
		// The net package keeps the socket non-blocking.
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		if err != syscall.EINTR {
			return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
		}
	}
}

// awaitReadable waits until nc has something to read, its deadline passes
// or it fails, holding no buffer meanwhile; at once for a TLS connection.
func awaitReadable(nc net.Conn) error { return newReadWait(nc).await() }
