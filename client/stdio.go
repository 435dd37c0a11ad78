package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/transport/stdio"
)

// Command starts a server as a child process and talks to it over its stdin
// and stdout (newline-delimited JSON-RPC). The child's stderr goes to the
// logger, never into an error. On Linux the child runs in a process group
// of its own: Close signals the whole group, and what the child leaves in
// it when it exits is killed. The whole group is also killed when this
// process dies, even by SIGKILL: the server is started by a small /bin/sh
// guard that kills its group on its parent-death signal, so a server
// started through a wrapper (npx, a shell that stays) ends too. Without
// /bin/sh the child itself gets SIGKILL when this process dies, and what it
// started runs on until it notices its stdin or stdout closed.
type Command struct {
	Path string   // the program; looked up in PATH when it has no slash
	Args []string // arguments after the program name
	Env  []string // the environment; nil inherits this process's
	Dir  string   // the working directory; "" is the current one
	// GracePeriod is how long Close waits after closing stdin before SIGTERM,
	// and after SIGTERM before SIGKILL; 0 means DefaultGracePeriod.
	GracePeriod time.Duration
}

func (cmd *Command) dial(ctx context.Context, c *Client) (link, error) {
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
	s := &stdioLink{cmd: x, from: cmd, grace: cmd.GracePeriod, reaped: make(chan struct{})}
	if s.grace <= 0 {
		s.grace = DefaultGracePeriod
	}
	s.stderr = &stderrLog{c: c}
	x.Stderr = s.stderr
	if s.guarded, err = startChild(x, s.reaped); err != nil {
		return nil, &TransportError{Op: "start " + cmd.Path, Err: err}
	}
	// Closing the connection closes the child's stdin.
	s.framedLink = newFramedLink(c, stdio.NewConn(stdout, stdin, c.cfg.limits.MaxMessageBytes), "stdio")
	s.ended = s.exited
	return s, nil
}

// stdioLink is a running child process: a framedLink over its stdout and
// stdin, plus the process's lifetime.
type stdioLink struct {
	*framedLink
	cmd    *exec.Cmd
	from   *Command // what started it, to start it again (restartAfterProbe)
	stderr *stderrLog
	grace  time.Duration
	reaped chan struct{} // closed once the child has been waited for
	// guarded: cmd is the guard standing between this process and the
	// server (startChild).
	guarded bool

	mu      sync.Mutex
	closing bool
}

// exited reaps the child once its stdout ended, ends what it left in its
// process group (endGroup), and says why the transport is gone: the exit
// status and, unless Close asked for it, the tail of its stderr.
func (s *stdioLink) exited(readErr error) error {
	waitErr := s.cmd.Wait()
	endGroup(s.cmd.Process)
	close(s.reaped)
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	why := "the server process exited"
	if waitErr != nil {
		why += " (" + waitErr.Error() + ")"
	} else if readErr != nil && !errors.Is(readErr, io.EOF) {
		why += " (" + readErr.Error() + ")"
	}
	if tail := s.stderr.tail(); tail != "" && !closing {
		why += "; its last stderr output: " + tail
	}
	return &TransportError{Op: "stdio", Err: errors.New(why)}
}

// restartAfterProbe replaces a stdio child whose output ended while the
// client probed it with server/discover: a strict legacy server may exit
// (or close stdout) on a method it does not know, and auto era must then
// fall back to initialize on a fresh process, as --era legacy would have
// started it. It reports whether it restarted; it does nothing for other
// transports or a child that is still talking. The old child is shut down
// and reaped first (Close's stdin, SIGTERM, SIGKILL sequence), and the
// client's pending-request table, closed by the old child's end, is
// replaced; no call can be under way, since Connect has not returned.
func (c *Client) restartAfterProbe(ctx context.Context) (bool, error) {
	s, ok := c.conn.(*stdioLink)
	if !ok || !s.readEnded() || ctx.Err() != nil {
		return false, nil
	}
	_ = s.close()
	c.cfg.logger.Debug("the server process ended on the server/discover probe; restarting it to initialize", "reason", c.deadErr())
	ln, err := s.from.dial(ctx, c)
	if err != nil {
		return true, err
	}
	c.mu.Lock()
	c.dead = nil
	c.done = make(chan struct{}) // the old child's end closed the first
	c.mu.Unlock()
	c.peer = jsonrpc.NewPeer()
	c.conn = ln
	ln.(starter).start()
	return true, nil
}

// close shuts the child down: stdin closed, then SIGTERM, then SIGKILL,
// each signal sent to its process group where it has one (Linux). It
// returns once the child is reaped.
func (s *stdioLink) close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	_ = s.conn.Close()
	if s.wait(s.grace) {
		return nil
	}
	_ = signalChild(s.cmd.Process, syscall.SIGTERM, s.guarded)
	if s.wait(s.grace) {
		return nil
	}
	_ = signalChild(s.cmd.Process, syscall.SIGKILL, s.guarded)
	if s.wait(s.grace) {
		return nil
	}
	if s.guarded { // the guard itself did not end: end the group outright
		endGroup(s.cmd.Process)
		if s.wait(s.grace) {
			return nil
		}
	}
	return &TransportError{Op: "close", Err: errors.New("the server process did not exit after SIGKILL")}
}

// wait reports whether the child was reaped within d.
func (s *stdioLink) wait(d time.Duration) bool { return closedWithin(s.done, d) }

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
		l.c.cfg.logger.Info("server stderr", "line", line)
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
