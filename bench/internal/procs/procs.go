// Package procs starts the processes a benchmark or soak program drives,
// each in its own process group and ready once its log says so, and stops
// every one of them by PID however the program ends: return, fatal error
// or signal. Programs share it so none leaves a server running behind it.
package procs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Verbose copies every line the processes log to stderr, prefixed with
// the process's name.
var Verbose bool

// readyTimeout bounds the wait for a process's ready lines.
const readyTimeout = 30 * time.Second

// logLimit bounds the log a LogBuffer keeps (its start) for error
// messages.
const logLimit = 64 << 10

// Cmd is a process to start.
type Cmd struct {
	Name string // in error messages and the Verbose log
	Bin  string
	Args []string
	Env  []string // added to the program's environment (and XDG_STATE_HOME=Dir())
	// Ready maps a key to the pattern of a log line (stderr) that says the
	// process is ready: Start returns once each pattern has matched a
	// line, with the first group of that match (the whole match if the
	// pattern has none) in Proc.Found[key].
	Ready map[string]*regexp.Regexp
	// Line, if set, sees every log line, in order, before it is kept; it
	// returns false to keep a line out of the log (Proc.Log, Verbose) and
	// the ready patterns.
	Line func(line string) bool
}

// Proc is a process Start started; Cleanup stops it.
type Proc struct {
	Name  string
	Cmd   *exec.Cmd
	Found map[string]string // the first group of each Cmd.Ready pattern
	log   LogBuffer
	done  chan struct{}
}

// PID is the process's ID.
func (p *Proc) PID() int { return p.Cmd.Process.Pid }

// Log is the start of what the process logged (stderr), for error
// messages.
func (p *Proc) Log() string { return p.log.String() }

// Done is closed once the process exited and its log was read to the end.
func (p *Proc) Done() <-chan struct{} { return p.done }

// LogBuffer keeps the start of a process's log, its first 64 KiB, to quote
// in error messages: a child's stderr can be written to it directly (it is
// safe for concurrent use), and the child never blocks on it.
type LogBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write keeps p while less than the limit is kept, and reports all of p
// written either way.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < logLimit {
		l.b.Write(p)
	}
	return len(p), nil
}

// String is the log kept.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start runs c in a process group of its own (so that Cleanup can kill
// whatever children it leaves) and waits up to 30 s for c.Ready. A process
// that exits or is not ready in time is an error that quotes its log; it
// is stopped by Cleanup either way.
func Start(c Cmd) (*Proc, error) {
	cmd := exec.Command(c.Bin, c.Args...)
	cmd.Env = append(append(os.Environ(), "XDG_STATE_HOME="+Dir()), c.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &Proc{Name: c.Name, Cmd: cmd, Found: map[string]string{}, done: make(chan struct{})}
	if err := add(p); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	if len(c.Ready) == 0 {
		close(ready)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if c.Line != nil && !c.Line(line) {
				continue
			}
			fmt.Fprintln(&p.log, line)
			if Verbose {
				fmt.Fprintf(os.Stderr, "[%s] %s\n", c.Name, line)
			}
			if len(p.Found) == len(c.Ready) {
				continue
			}
			for k, re := range c.Ready {
				if _, ok := p.Found[k]; ok {
					continue
				}
				if m := re.FindStringSubmatch(line); m != nil {
					p.Found[k] = m[min(1, len(m)-1)]
					if len(p.Found) == len(c.Ready) {
						close(ready)
					}
				}
			}
		}
		// A line too long for the scanner: drain the rest, so the process
		// never blocks writing its log.
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	select {
	case <-ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before it was ready:\n%s", c.Name, p.Log())
	case <-time.After(readyTimeout):
		return nil, fmt.Errorf("%s not ready after %v:\n%s", c.Name, readyTimeout, p.Log())
	}
}
