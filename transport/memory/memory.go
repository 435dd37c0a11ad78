// Package memory connects two peers in one process, for tests and embedding.
// Messages are copied as bytes, so both sides still encode and decode.
package memory

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/transport"
)

// ErrClosed is returned by Write on a closed pipe.
var ErrClosed = errors.New("memory: connection closed")

type pipe struct {
	ch     chan []byte
	once   sync.Once
	closed chan struct{}
}

// Conn is one end of an in-memory connection.
type Conn struct {
	in, out *pipe
}

// NewPipe returns two connected ends. buffer is how many messages may wait
// unread in each direction before Write blocks.
func NewPipe(buffer int) (*Conn, *Conn) {
	a := &pipe{ch: make(chan []byte, buffer), closed: make(chan struct{})}
	b := &pipe{ch: make(chan []byte, buffer), closed: make(chan struct{})}
	return &Conn{in: a, out: b}, &Conn{in: b, out: a}
}

// Read returns the next message, or io.EOF once the peer has closed and
// everything it sent has been read.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.in.ch:
		return m, nil
	default:
	}
	select {
	case m := <-c.in.ch:
		return m, nil
	case <-c.in.closed:
		select {
		case m := <-c.in.ch:
			return m, nil
		default:
			return nil, io.EOF
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends a copy of msg to the peer.
func (c *Conn) Write(ctx context.Context, msg []byte) error {
	select {
	case <-c.out.closed:
		return ErrClosed
	default:
	}
	b := append([]byte(nil), msg...)
	select {
	case c.out.ch <- b:
		return nil
	case <-c.out.closed:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends this side's output; the peer reads io.EOF after the rest.
func (c *Conn) Close() error {
	c.out.once.Do(func() { close(c.out.closed) })
	return nil
}

// Serve runs opener's session on one end of a new pipe in the background and
// returns the other end for the caller to talk through. The session ends when
// the caller closes its end or ctx is cancelled. opts bound the session as
// they do transport.Serve; transport.Limits.MaxMessageBytes does not apply, as
// the pipe has no size limit.
func Serve(ctx context.Context, opener jsonrpc.SessionOpener, opts ...transport.ServeOption) *Conn {
	client, server := NewPipe(64)
	go func() {
		_ = transport.Serve(ctx, server, opener, opts...)
		server.Close()
	}()
	return client
}
