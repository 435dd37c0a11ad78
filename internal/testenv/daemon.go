package testenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// daemon is a server process a test owns (PostgreSQL, Redis): started with
// its output appended to one log file over all its starts, probed until it
// answers as itself, and stopped by PID with escalating signals, its
// process group killed last.
type daemon struct {
	name    string // the program, for errors: "postgres", "redis-server"
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited and been reaped
}

// stopStep is one signal of a shutdown and how long the process is given
// to exit after it.
type stopStep struct {
	sig   syscall.Signal
	bound time.Duration
}

// start runs cmd (its own process group) with its output appended to the
// log and polls ready, backing off from firstWait, until it succeeds within
// readyTimeout. A process that exits while starting is errPortTaken when
// the log it wrote names one of portTaken (another process took its port).
// ready gets a context that ends if the process exits: something else on a
// taken port may accept a connection and never answer.
func (d *daemon) start(cmd *exec.Cmd, port int, readyTimeout, firstWait time.Duration, portTaken []string, ready func(ctx context.Context) error) error {
	logf, err := os.OpenFile(d.logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd)
	cmd.Stdout, cmd.Stderr = logf, logf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true // a ^C to `go test` does not reach it first
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	d.mu.Lock()
	d.cmd, d.done = cmd, done
	d.mu.Unlock()

	exited, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-done:
			cancel()
		case <-exited.Done():
		}
	}()
	deadline := time.Now().Add(readyTimeout)
	wait := firstWait
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			d.mu.Lock()
			d.cmd, d.done = nil, nil
			d.mu.Unlock()
			tail := d.log()
			if int64(len(tail)) >= logStart {
				tail = tail[logStart:]
			}
			for _, m := range portTaken {
				if strings.Contains(tail, m) {
					return fmt.Errorf("%w: %d", errPortTaken, port)
				}
			}
			return fmt.Errorf("%s exited at start: %v", d.name, cmd.ProcessState)
		default:
		}
		if lastErr = ready(exited); lastErr == nil {
			return nil
		}
		time.Sleep(wait)
		wait = min(wait*2, 250*time.Millisecond)
	}
	d.stop([]stopStep{{syscall.SIGTERM, 5 * time.Second}}, nil)
	return fmt.Errorf("%s was not ready within %v: %v", d.name, readyTimeout, lastErr)
}

// own makes the daemon the test's: it creates the empty log, and when the
// test ends stops the daemon with stop and, if the test failed, prints the
// log. what names the server in both.
func (d *daemon) own(t testing.TB, what string, stop func() error) {
	t.Helper()
	if err := os.WriteFile(d.logPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stopping %s: %v", what, err)
		}
		if t.Failed() {
			t.Logf("%s server log (%s):\n%s", what, d.logPath, d.log())
		}
	})
}

// pid returns the process id, or 0 when it is not running.
func (d *daemon) pid() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd == nil {
		return 0
	}
	return d.cmd.Process.Pid
}

// log returns everything the process has written, over all its starts.
func (d *daemon) log() string {
	b, err := os.ReadFile(d.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", d.logPath, err)
	}
	return string(b)
}

// stop sends each step's signal in turn until the process exits (after a
// SIGCONT, in case a test stopped it to make it hang), then SIGKILLs its
// process group. escalate, if set, is told before every step but the first.
// It returns an error when the process had to be killed.
func (d *daemon) stop(steps []stopStep, escalate func(pid int, after stopStep)) error {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd, d.done = nil, nil
	d.mu.Unlock()
	if cmd == nil {
		return nil
	}
	pid := cmd.Process.Pid
	syscall.Kill(pid, syscall.SIGCONT)
	var waited time.Duration
	for i, st := range steps {
		if i > 0 && escalate != nil {
			escalate(pid, steps[i-1])
		}
		syscall.Kill(pid, st.sig)
		select {
		case <-done:
			return nil
		case <-time.After(st.bound):
		}
		waited += st.bound
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	<-done
	waitGroupGone(pid, 5*time.Second)
	return fmt.Errorf("%s (pid %d) did not stop within %v; killed", d.name, pid, waited)
}

// kill ends the process and its group with SIGKILL, as a crash would.
func (d *daemon) kill() {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd, d.done = nil, nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	waitGroupGone(cmd.Process.Pid, 5*time.Second)
}
