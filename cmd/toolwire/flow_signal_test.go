//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

// TestFlowDiscoverySkipsSpecialFiles: a directory holding, among its
// flows, a named pipe called *.flow.yaml (and a link to it, and one in a
// subdirectory): `toolwire test DIR` and `toolwire check DIR` finish, say
// which files they skipped, and report the real flows.
func TestFlowDiscoverySkipsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	writeFlowFile(t, dir, "one.flow.yaml", "name: one\nsteps:\n  - value: 1\n")
	writeFlowFile(t, dir, "sub/two.flow.yaml", "name: two\nsteps:\n  - value: 2\n")
	for _, p := range []string{"pipe.flow.yaml", "sub/deep.flow.yaml"} {
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o644); err != nil {
			t.Skipf("cannot make a named pipe: %v", err)
		}
	}
	if err := os.Symlink("pipe.flow.yaml", filepath.Join(dir, "link.flow.yaml")); err != nil {
		t.Fatal(err)
	}

	r := runFlowCLI(t, dir, "test", ".")
	if r.code != 0 || !strings.Contains(r.stdout, "PASS one (one.flow.yaml)") ||
		!strings.Contains(r.stdout, "PASS two (sub/two.flow.yaml)") || !strings.Contains(r.stdout, "2 passed, 0 failed") {
		t.Fatalf("toolwire test with named pipes in the directory: %s", r)
	}
	for _, p := range []string{"pipe.flow.yaml", "link.flow.yaml", "sub/deep.flow.yaml"} {
		if !strings.Contains(r.stderr, "toolwire: skipping "+p+": a named pipe, not a regular file") {
			t.Errorf("no warning for %s: %s", p, r.stderr)
		}
	}
	r = runFlowCLI(t, dir, "check", ".")
	if r.code != 0 || !strings.Contains(r.stdout, "one.flow.yaml: ok") || !strings.Contains(r.stdout, "sub/two.flow.yaml: ok") ||
		!strings.Contains(r.stderr, "skipping pipe.flow.yaml") {
		t.Fatalf("toolwire check with named pipes in the directory: %s", r)
	}
}

// TestFlowTestEndsOnSIGTERM: `toolwire test` blocked, reading a named
// pipe given by name that nothing writes to, or on a stdio server that
// never answers (and ignores SIGTERM itself), ends on one SIGTERM with
// status 130.
func TestFlowTestEndsOnSIGTERM(t *testing.T) {
	bin := testenv.Toolwire(t)
	start := func(t *testing.T, dir string, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				<-done
			}
		})
		return cmd, &out, done
	}
	endsOnSIGTERM := func(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer, done <-chan error) {
		t.Helper()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := testwait.Recv(t, done, "toolwire test to exit after SIGTERM")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("after SIGTERM: %v, want exit status 130\n%s", err, out)
		}
	}

	t.Run("named pipe given by name", func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "stuck.flow.yaml")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skipf("cannot make a named pipe: %v", err)
		}
		cmd, out, done := start(t, dir, "test", "stuck.flow.yaml")
		// Opening the write end without blocking succeeds once toolwire
		// has the pipe open to read; holding it open, writing nothing,
		// leaves toolwire reading for ever.
		var w *os.File
		testwait.WaitFor(t, "toolwire to open the named pipe", func() bool {
			f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return false
			}
			w = f
			return true
		})
		defer w.Close()
		endsOnSIGTERM(t, cmd, out, done)
	})

	t.Run("stdio server that never answers", func(t *testing.T) {
		dir := t.TempDir()
		marker := filepath.Join(dir, "started")
		writeFlowFile(t, dir, "mute.flow.yaml", `name: mute
clients:
  mute:
    command: sh
    args: ["-c", "trap '' TERM INT; : > started; exec cat > /dev/null"]
steps:
  - name: tools
    list: {what: tools}
`)
		cmd, out, done := start(t, dir, "test", ".")
		testwait.WaitFor(t, "the stdio server to start", func() bool {
			_, err := os.Stat(marker)
			return err == nil
		})
		endsOnSIGTERM(t, cmd, out, done)
		if !strings.Contains(out.String(), "FAIL mute") {
			t.Errorf("the interrupted flow is not reported:\n%s", out)
		}
	})
}
