package main

import (
	"bufio"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

// procLog is the log (stderr) of a process under test, read line by line
// in the background to its end: every line kept, and the first capture of
// one expression (the URL or address the process reports once it serves)
// handed to whoever waits for it.
type procLog struct {
	log   *testenv.SyncBuffer
	done  chan struct{} // closed once the log has been read to its end
	found chan string
}

// startLogged starts cmd (t.Cleanup kills it by its PID unless the test
// waited for it) and reads its stderr into a procLog, watching for re's
// first submatch.
func startLogged(t *testing.T, cmd *exec.Cmd, re *regexp.Regexp) *procLog {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	startProc(t, cmd)
	l := &procLog{log: &testenv.SyncBuffer{}, done: make(chan struct{}), found: make(chan string, 1)}
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			l.log.Write([]byte(line + "\n"))
			if m := re.FindStringSubmatch(line); m != nil {
				select {
				case l.found <- m[1]:
				default:
				}
			}
		}
	}()
	return l
}

// first returns the capture, or false when the log ended (the process
// exited) without one. Only a hang's bound fails the test.
func (l *procLog) first(t *testing.T, what string) (string, bool) {
	t.Helper()
	select {
	case v := <-l.found:
		return v, true
	case <-l.done:
		select { // a match on the last line
		case v := <-l.found:
			return v, true
		default:
			return "", false
		}
	case <-time.After(testwait.Limit): // a hang bound
		t.Fatalf("%s: not logged:\n%s", what, l.log.String())
		return "", false
	}
}

// wait returns the capture; the test fails, showing the log, when the
// process exited without logging it.
func (l *procLog) wait(t *testing.T, what string) string {
	t.Helper()
	v, ok := l.first(t, what)
	if !ok {
		t.Fatalf("%s: the process exited first:\n%s", what, l.log.String())
	}
	return v
}
