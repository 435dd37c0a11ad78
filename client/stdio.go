package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
)

// Command starts a server as a child process and talks to it over its stdin
// and stdout (newline-delimited JSON-RPC). The child's stderr goes to the
// logger, never into an error.
type Command struct {
	Path string   // the program; looked up in PATH when it has no slash
	Args []string // arguments after the program name
	Env  []string // the environment; nil inherits this process's
	Dir  string   // the working directory; "" is the current one
	// GracePeriod is how long Close waits after closing stdin before SIGTERM,
	// and after SIGTERM before SIGKILL; 0 means DefaultGracePeriod.
	GracePeriod time.Duration
}

func (cmd *Command) dial(ctx context.Context, c *Client) (conn, error) {
	if cmd.Path == "" {
		return nil, &TransportError{Op: "start server", Err: errors.New("no command given")}
	}
	x := exec.Command(cmd.Path, cmd.Args...)
	x.Env, x.Dir = cmd.Env, cmd.Dir
	stdin, err := x.StdinPipe()
	if err != nil {
		return nil, &TransportError{Op: "start " + cmd.Path, Err: err}
	}
	stdout, err := x.StdoutPipe()
	if err != nil {
		return nil, &TransportError{Op: "start " + cmd.Path, Err: err}
	}
	s := &stdioConn{c: c, cmd: x, stdin: stdin, grace: cmd.GracePeriod, exited: make(chan struct{})}
	if s.grace <= 0 {
		s.grace = DefaultGracePeriod
	}
	s.stderr = &stderrLog{c: c}
	x.Stderr = s.stderr
	if err := x.Start(); err != nil {
		return nil, &TransportError{Op: "start " + cmd.Path, Err: err}
	}
	s.conn = stdio.NewConn(stdout, stdin, c.opts.MaxMessageSize)
	return s, nil
}

// start begins reading; Connect calls it once the client holds the conn, so
// an early server request can be answered.
func (s *stdioConn) start() { go s.readLoop() }

// stdioConn is a running child process.
type stdioConn struct {
	c      *Client
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *stdio.Conn
	stderr *stderrLog
	grace  time.Duration

	exited  chan struct{} // closed once the child is reaped
	waitErr error
	closing bool
	mu      sync.Mutex
}

func (s *stdioConn) readLoop() {
	var readErr error
	for {
		line, err := s.conn.Read(context.Background())
		if err != nil {
			var tl *transport.TooLargeError
			if errors.As(err, &tl) {
				// The line is skipped; whose it was cannot be told, so every
				// waiting request fails rather than waits for its timeout.
				s.c.failAllPending(&TransportError{Op: "read", Err: fmt.Errorf("a message from the server exceeds the %d-byte limit (MaxMessageSize)", tl.Limit)})
				continue
			}
			readErr = err
			break
		}
		msg, id, derr := jsonrpc.Decode(line)
		if derr != nil {
			perr := &ProtocolError{Op: "read", Reason: "malformed message from the server", Err: derr}
			s.c.opts.Logger.Warn("malformed message from the server", "error", derr, "line", truncate(line, 200))
			if !id.IsValid() || !s.c.failPending(id, perr) {
				// Whose reply it was cannot be told: fail every waiting
				// request now rather than let each wait for its timeout.
				s.c.failAllPending(perr)
			}
			continue
		}
		s.c.dispatch(msg)
	}
	s.waitErr = s.cmd.Wait()
	close(s.exited)
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	why := "the server process exited"
	if s.waitErr != nil {
		why += " (" + s.waitErr.Error() + ")"
	} else if readErr != nil && !errors.Is(readErr, io.EOF) {
		why += " (" + readErr.Error() + ")"
	}
	if tail := s.stderr.tail(); tail != "" && !closing {
		why += "; its last stderr output: " + tail
	}
	s.c.fail(&TransportError{Op: "stdio", Err: errors.New(why)})
}

func (s *stdioConn) write(ctx context.Context, m jsonrpc.Message) error {
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	select {
	case <-s.exited:
		return s.c.deadErr()
	default:
	}
	if err := s.conn.Write(ctx, data); err != nil {
		select {
		case <-s.exited:
			return s.c.deadErr()
		case <-time.After(100 * time.Millisecond):
		}
		return &TransportError{Op: "write to the server", Err: err}
	}
	return nil
}

func (s *stdioConn) send(ctx context.Context, req *jsonrpc.Request, _ *wireInfo) error {
	return s.write(ctx, req)
}

func (s *stdioConn) notify(ctx context.Context, n *jsonrpc.Notification, _ *wireInfo) error {
	return s.write(ctx, n)
}

func (s *stdioConn) reply(ctx context.Context, r *jsonrpc.Response) error {
	return s.write(ctx, r)
}

// close shuts the child down: stdin closed, then SIGTERM, then SIGKILL.
func (s *stdioConn) close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	_ = s.stdin.Close()
	select {
	case <-s.exited:
		return nil
	case <-time.After(s.grace):
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(s.grace):
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(s.grace):
		return &TransportError{Op: "close", Err: errors.New("the server process did not exit after SIGKILL")}
	}
	return nil
}

// stderrLog logs the child's stderr line by line and keeps its tail for
// error messages.
type stderrLog struct {
	c    *Client
	mu   sync.Mutex
	part []byte
	last []string
}

const stderrTailLines = 5

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			if len(l.part) > 64<<10 { // a runaway line: log what there is
				i = len(l.part)
			} else {
				break
			}
		}
		line := strings.TrimRight(string(l.part[:i]), "\r")
		l.part = l.part[min(i+1, len(l.part)):]
		if line == "" {
			continue
		}
		l.c.opts.Logger.Info("server stderr", "line", line)
		l.last = append(l.last, truncate([]byte(line), 300))
		if len(l.last) > stderrTailLines {
			l.last = l.last[1:]
		}
	}
	return len(p), nil
}

func (l *stderrLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.last, " | ")
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
