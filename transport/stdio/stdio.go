// Package stdio frames MCP messages as newline-delimited JSON over a reader
// and a writer: stdin and stdout for a server process.
package stdio

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/transport"
)

// DefaultMaxMessageSize bounds one incoming line (8 MiB).
const DefaultMaxMessageSize = 8 << 20

// Conn is a newline-delimited connection.
type Conn struct {
	r       *bufio.Reader
	maxSize int

	wmu    sync.Mutex
	w      *bufio.Writer
	closer io.Closer
}

var _ transport.SizeLimitedConn = (*Conn)(nil)

// NewConn frames messages on r and w. maxSize bounds one incoming message;
// 0 or less means DefaultMaxMessageSize. If w is an io.Closer, Close closes
// it.
func NewConn(r io.Reader, w io.Writer, maxSize int) *Conn {
	c := &Conn{r: bufio.NewReaderSize(r, 64<<10), w: bufio.NewWriterSize(w, 64<<10)}
	c.SetMaxMessageSize(maxSize)
	if cl, ok := w.(io.Closer); ok {
		c.closer = cl
	}
	return c
}

// SetMaxMessageSize bounds one incoming message; n <= 0 means
// DefaultMaxMessageSize. It must not be called while a Read is running;
// transport.Serve calls it, from transport.Limits.MaxMessageBytes, before it
// reads. It makes Conn a transport.SizeLimitedConn.
func (c *Conn) SetMaxMessageSize(n int) {
	if n <= 0 {
		n = DefaultMaxMessageSize
	}
	c.maxSize = n
}

// Read returns the next non-empty line. A line longer than the limit is
// skipped up to its newline and reported as a *transport.TooLargeError
// carrying the line's first bytes (at most the limit), from which Serve
// recovers the request's id for its -32600 reply. Reading cannot be
// interrupted by ctx; Serve reads on its own goroutine.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	for {
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			continue
		}
		return line, nil
	}
}

// readLine reads up to the next newline and returns the line without its
// terminator ("\n" or "\r\n"); the limit applies to the line itself. It
// never holds more than the limit plus the terminator: past that, it keeps
// the first maxSize bytes (the prefix the error carries) and discards the
// rest of the line as it arrives.
func (c *Conn) readLine() ([]byte, error) {
	const slack = 2 // room for "\r\n"
	var buf []byte
	tooLarge := false
	for {
		chunk, err := c.r.ReadSlice('\n')
		if !tooLarge {
			if len(buf)+len(chunk) > c.maxSize+slack {
				tooLarge = true
				buf = appendBounded(buf, chunk[:max(0, c.maxSize-len(buf))], c.maxSize+slack)
				buf = buf[:min(len(buf), c.maxSize)]
			} else {
				buf = appendBounded(buf, chunk, c.maxSize+slack)
			}
		}
		switch {
		case err == nil:
			if tooLarge {
				return nil, c.tooLarge(buf)
			}
			return c.checkLine(trimCR(buf[:len(buf)-1]))
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLarge {
				return nil, c.tooLarge(buf)
			}
			if len(buf) > 0 {
				return c.checkLine(trimCR(buf)) // a last line without newline still counts
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// checkLine refuses a line longer than the limit, keeping its first bytes.
func (c *Conn) checkLine(line []byte) ([]byte, error) {
	if len(line) > c.maxSize {
		return nil, c.tooLarge(line[:c.maxSize])
	}
	return line, nil
}

func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}

func (c *Conn) tooLarge(prefix []byte) error {
	return &transport.TooLargeError{Limit: c.maxSize, Prefix: prefix}
}

// appendBounded appends b to buf, growing buf's capacity to at most limit
// bytes (len(buf)+len(b) must not exceed it), so that an oversized line
// never makes the buffer larger than the limit.
func appendBounded(buf, b []byte, limit int) []byte {
	if need := len(buf) + len(b); need > cap(buf) {
		grown := make([]byte, len(buf), min(max(need, 2*cap(buf)), limit))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, b...)
}

// Write sends one message followed by a newline, flushed at once.
func (c *Conn) Write(ctx context.Context, msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(msg); err != nil {
		return err
	}
	if err := c.w.WriteByte('\n'); err != nil {
		return err
	}
	return c.w.Flush()
}

// Close closes the writer if it can be closed.
func (c *Conn) Close() error {
	if c.closer != nil {
		return c.closer.Close()
	}
	return nil
}

// Serve serves a session over r and w until r ends (nil: a clean exit).
// opts are transport.ServeOption values (transport.WithLimits,
// transport.WithLogger, ...). transport.Limits.MaxMessageBytes bounds one
// incoming line (default DefaultMaxMessageSize, 8 MiB): a longer line is
// skipped, with at most the limit buffered, and answered with -32600;
// serving goes on. The reply carries the request's id when the first limit
// bytes show it (a top-level "id", a string or an integer, beside a "method"
// member, as clients write requests) so the client can match it to its
// call; when they do not (the id comes later, or the line is a response or
// not an object) the id is null.
// Only MCP messages are written to w; diagnostics go to the logger
// transport.WithLogger sets.
func Serve(ctx context.Context, opener jsonrpc.SessionOpener, r io.Reader, w io.Writer, opts ...transport.ServeOption) error {
	return transport.Serve(ctx, NewConn(r, w, 0), opener, opts...)
}

// ServeStdio serves on the process's stdin and stdout, like Serve.
func ServeStdio(ctx context.Context, opener jsonrpc.SessionOpener, opts ...transport.ServeOption) error {
	return Serve(ctx, opener, os.Stdin, os.Stdout, opts...)
}
