package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
)

// StdioSession is an MCP session with a child process over its stdin and
// stdout (newline-delimited JSON-RPC).
type StdioSession struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int64
}

// StartPiped starts cmd with pipes to its stdin and from its stdout: how a
// server speaking stdio, or one that reports its address on stdout and
// stops when its stdin closes, is started.
func StartPiped(cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser, err error) {
	if stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, err
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return stdin, stdout, nil
}

// StartStdio starts cmd and initializes a session with it.
func StartStdio(ctx context.Context, cmd *exec.Cmd) (*StdioSession, error) {
	in, out, err := StartPiped(cmd)
	if err != nil {
		return nil, err
	}
	s := &StdioSession{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	id := s.next()
	r, err := s.roundTrip([]byte(`{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+
		`,"method":"initialize","params":{"protocolVersion":"`+ProtocolVersion+
		`","capabilities":{},"clientInfo":{"name":"toolwire-bench","version":"1.0.0"}}}`), id)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if r.Error != nil {
		s.Close()
		return nil, fmt.Errorf("initialize: JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	if _, err := s.in.Write([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *StdioSession) next() int64 { s.nextID++; return s.nextID }

func (s *StdioSession) roundTrip(line []byte, id int64) (*reply, error) {
	line = append(line, '\n')
	if _, err := s.in.Write(line); err != nil {
		return nil, err
	}
	want := strconv.FormatInt(id, 10)
	for {
		b, err := s.out.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// a line longer than the buffer: gather it whole
			full := append([]byte(nil), b...)
			for err == bufio.ErrBufferFull {
				b, err = s.out.ReadSlice('\n')
				full = append(full, b...)
			}
			b = full
		}
		if err != nil {
			return nil, fmt.Errorf("reading stdout: %w", err)
		}
		r, err := decodeReply(b, want)
		if err == errOtherID {
			continue // a notification or log line the server sent
		}
		return r, err
	}
}

// Call runs one tools/call and checks its result.
func (s *StdioSession) Call(ctx context.Context, tool string, args []byte, check Check) error {
	id := s.next()
	r, err := s.roundTrip(callBody(id, tool, args), id)
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	res, err := r.callResult()
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	return check(res)
}

// Close ends the child's input and waits for it to exit.
func (s *StdioSession) Close() error {
	s.in.Close()
	return s.cmd.Wait()
}
