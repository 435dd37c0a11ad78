package client

import (
	"context"
	"errors"
	"fmt"
	"github.com/toolwire/toolwire/internal/jsonscan"
	"io"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/transport"
)

// Conn reaches a server over any connection that carries whole JSON-RPC
// messages (a transport.Conn): an in-process server served by memory.Serve,
// a socket framed with stdio.NewConn, a test double. Messages travel as
// they do over stdio: requests, responses and notifications in both
// directions, notifications/cancelled for cancellation, answers to server
// requests written back on the same connection. The client owns the
// connection from Connect on and closes it on Close.
type Conn struct {
	Conn transport.Conn
}

func (t *Conn) dial(ctx context.Context, c *Client) (link, error) {
	if t.Conn == nil {
		return nil, &TransportError{Op: "connect", Err: errors.New("client.Conn has no connection")}
	}
	return newFramedLink(c, t.Conn, "conn"), nil
}

// framedLink drives a transport.Conn: one goroutine reads and dispatches
// every message, writes go straight to the connection. The stdio transport
// is a framedLink over the child's stdin and stdout.
type framedLink struct {
	c    *Client
	conn transport.Conn
	op   string // names the transport in errors: "stdio", "conn"

	readCtx  context.Context // ends reading at close, for connections that honour it
	stopRead context.CancelFunc
	done     chan struct{} // closed once reading has ended and the client failed
	eof      chan struct{} // closed as soon as reading has ended, before done

	// ended, when set, says why the transport is gone once reading ends
	// (the stdio child's exit status and stderr, say). It may block until
	// the far end is fully gone.
	ended func(readErr error) error
}

func newFramedLink(c *Client, conn transport.Conn, op string) *framedLink {
	f := &framedLink{c: c, conn: conn, op: op, done: make(chan struct{}), eof: make(chan struct{})}
	f.readCtx, f.stopRead = context.WithCancel(context.Background())
	return f
}

// start begins reading; Connect calls it once the client holds the link.
func (f *framedLink) start() { go f.readLoop() }

// readLoop reads until the connection ends. A message over the size limit
// or one that is not JSON-RPC fails the request it answers, or, when whose
// it was cannot be told, every waiting request, rather than letting them
// wait for their timeouts; reading goes on.
func (f *framedLink) readLoop() {
	max := f.c.cfg.limits.MaxMessageBytes
	var readErr error
	for {
		msg, err := f.conn.Read(f.readCtx)
		if err == nil && len(msg) > max {
			err = &transport.TooLargeError{Limit: max}
		}
		if err != nil {
			var tl *transport.TooLargeError
			if errors.As(err, &tl) {
				f.c.peer.FailAll(&TransportError{Op: "read", Err: fmt.Errorf("a message from the server exceeds the %d-byte limit on message size", tl.Limit)})
				continue
			}
			readErr = err
			break
		}
		m, _, derr := jsonrpc.Decode(msg)
		if derr != nil {
			perr := &ProtocolError{Op: "read", Reason: "malformed message from the server", Err: derr}
			f.c.cfg.logger.Warn("malformed message from the server", "error", derr, "message", truncate(msg, 200))
			if id := responseIDOf(msg); !id.IsValid() || !f.c.peer.Fail(id, perr) {
				f.c.peer.FailAll(perr)
			}
			continue
		}
		f.c.dispatch(m)
	}
	close(f.eof)
	var why error
	if f.ended != nil {
		why = f.ended(readErr)
	} else {
		msg := "the connection ended"
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			msg += " (" + readErr.Error() + ")"
		}
		why = &TransportError{Op: f.op, Err: errors.New(msg)}
	}
	f.c.fail(why)
	f.stopRead()
	close(f.done)
}

// readEnded reports whether the far end has stopped sending (its stream
// ended or failed), even if the reason is not settled yet.
func (f *framedLink) readEnded() bool {
	select {
	case <-f.eof:
		return true
	default:
		return false
	}
}

// write sends one message. Once the connection is gone it returns why,
// rather than the write error that is only its symptom.
func (f *framedLink) write(ctx context.Context, m jsonrpc.Message) error {
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	select {
	case <-f.done:
		return f.c.deadErr()
	default:
	}
	if err := f.conn.Write(ctx, data); err != nil {
		if closedWithin(f.done, 100*time.Millisecond) {
			return f.c.deadErr()
		}
		return &TransportError{Op: "write to the server", Err: err}
	}
	return nil
}

func (f *framedLink) send(ctx context.Context, req *jsonrpc.Request, _ *wireInfo) error {
	return f.write(ctx, req)
}

func (f *framedLink) notify(ctx context.Context, n *jsonrpc.Notification, _ *wireInfo) error {
	return f.write(ctx, n)
}

func (f *framedLink) reply(ctx context.Context, r *jsonrpc.Response) error {
	return f.write(ctx, r)
}

// close closes the connection and waits, up to DefaultGracePeriod, for the
// far end to finish so that no message is dispatched after Close returns.
func (f *framedLink) close() error {
	err := f.conn.Close()
	if closedWithin(f.done, DefaultGracePeriod) {
		return err
	}
	f.stopRead() // the far end lingers: stop a read that honours its context
	closedWithin(f.done, 100*time.Millisecond)
	return err
}

// closedWithin waits up to d for done to be closed (a reader or a child
// process that ends), and reports whether it was.
func closedWithin(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// responseIDOf reads the id of a malformed message that names no method: a
// response to one of the client's requests, which then fails that call
// alone. The strict decoder answers such a message with no id (the id is
// the client's own, not one to echo), so it is read here from the top-level
// members; anything else (a malformed server request, unreadable bytes)
// gives no id.
func responseIDOf(msg []byte) jsonrpc.ID {
	var id jsonrpc.ID
	isRequest := false
	jsonscan.Members(msg, []string{"id", "method"}, func(name, value []byte) bool {
		switch string(name) {
		case "method":
			isRequest = true
		case "id":
			if err := id.UnmarshalJSON(value); err != nil {
				id = jsonrpc.ID{}
			}
		}
		return true
	})
	if isRequest {
		return jsonrpc.ID{}
	}
	return id
}
