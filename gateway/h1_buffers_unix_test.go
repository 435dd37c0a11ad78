//go:build unix

package gateway

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
)

// tcpPair is a connected pair of loopback TCP connections.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = testwait.Recv(t, accepted, "the accepted connection")
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestAwaitReadable: the wait for a response returns once the peer has
// written, or at once when it wrote before the wait began, or when the
// peer closed; a deadline (how a cancelled exchange is unblocked) ends it
// with the deadline's error; and the bytes are all still there to read.
func TestAwaitReadable(t *testing.T) {
	t.Run("written later", func(t *testing.T) {
		c, s := tcpPair(t)
		done := make(chan error, 1)
		go func() { done <- awaitReadable(c) }()
		if _, err := s.Write([]byte("HTTP/1.1")); err != nil {
			t.Fatal(err)
		}
		if err := testwait.Recv(t, done, "the wait"); err != nil {
			t.Fatalf("awaitReadable: %v", err)
		}
		readAll(t, c, "HTTP/1.1")
	})
	t.Run("written before", func(t *testing.T) {
		c, s := tcpPair(t)
		if _, err := s.Write([]byte("early")); err != nil {
			t.Fatal(err)
		}
		testwait.WaitFor(t, "the bytes to arrive", func() bool { return peerHasBytes(t, c) })
		testwait.Returns(t, "awaitReadable", func() {
			if err := awaitReadable(c); err != nil {
				t.Errorf("awaitReadable: %v", err)
			}
		})
		readAll(t, c, "early")
	})
	t.Run("peer closed", func(t *testing.T) {
		c, s := tcpPair(t)
		s.Close()
		testwait.Returns(t, "awaitReadable", func() {
			if err := awaitReadable(c); err != nil {
				t.Errorf("awaitReadable: %v", err)
			}
		})
	})
	t.Run("deadline", func(t *testing.T) {
		c, _ := tcpPair(t)
		done := make(chan error, 1)
		go func() { done <- awaitReadable(c) }()
		if err := c.SetDeadline(h1Past); err != nil {
			t.Fatal(err)
		}
		if err := testwait.Recv(t, done, "the wait"); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("awaitReadable: %v, want the deadline's error", err)
		}
	})
}

// peerHasBytes says whether c has bytes to read, without taking them.
func peerHasBytes(t *testing.T, c net.Conn) bool {
	t.Helper()
	n, _ := peek(t, c, 0)
	return n > 0
}

// peek receives up to one byte on c's socket with MSG_PEEK and flags,
// leaving it to be read, and returns what recvfrom returned.
func peek(t *testing.T, c net.Conn, flags int) (int, error) {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var perr error
	if err := rc.Control(func(fd uintptr) {
		n, _, perr = syscall.Recvfrom(int(fd), make([]byte, 1), syscall.MSG_PEEK|flags)
	}); err != nil {
		t.Fatal(err)
	}
	return n, perr
}

func readAll(t *testing.T, c net.Conn, want string) {
	t.Helper()
	b := make([]byte, len(want))
	if _, err := io.ReadFull(c, b); err != nil || string(b) != want {
		t.Fatalf("read %q, %v; want %q", b, err, want)
	}
}
