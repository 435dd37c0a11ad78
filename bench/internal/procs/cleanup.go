package procs

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// The program's state: its name, its temporary directory and the
// processes started, all stopped by Cleanup.
var (
	mu      sync.Mutex
	prog    = filepath.Base(os.Args[0])
	tmpDir  string
	started []*Proc
	stopped bool // Cleanup began: no more processes
)

// gracePeriod is how long Cleanup waits for a process after SIGTERM
// before it kills the process's group (a variable for the tests).
var gracePeriod = 5 * time.Second

// Init names the program (the prefix of Fatalf's messages; by default
// the executable's name) and makes its temporary directory, name-*, which
// Cleanup removes and every process started gets as XDG_STATE_HOME. Call
// it before Start.
func Init(name string) (dir string, err error) {
	d, err := os.MkdirTemp("", name+"-")
	if err != nil {
		return "", err
	}
	mu.Lock()
	defer mu.Unlock()
	prog, tmpDir = name, d
	return d, nil
}

// Dir is the temporary directory Init made ("" before).
func Dir() string {
	mu.Lock()
	defer mu.Unlock()
	return tmpDir
}

// add starts p's process and records it, under the lock Cleanup takes:
// once Cleanup began, no process starts.
func add(p *Proc) error {
	mu.Lock()
	defer mu.Unlock()
	if stopped {
		return fmt.Errorf("%s: not started, the program is stopping", p.Name)
	}
	if err := p.Cmd.Start(); err != nil {
		return err
	}
	started = append(started, p)
	return nil
}

var cleanupOnce sync.Once

// Cleanup stops every process started, the last started first (a gateway
// before the server it calls): SIGTERM to its PID (a gateway then closes
// its stdio children), then, once it exited or after 5 s, SIGKILL to its
// process group (the PID and any child it left). It removes Dir. Later
// calls do nothing.
func Cleanup() {
	cleanupOnce.Do(func() {
		mu.Lock()
		ps := slices.Clone(started)
		dir := tmpDir
		stopped = true
		mu.Unlock()
		slices.Reverse(ps)
		for _, p := range ps {
			_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range ps {
			select {
			case <-p.done:
			case <-time.After(gracePeriod):
			}
			_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
		}
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
	})
}

// Exit runs Cleanup, then exits with code.
func Exit(code int) {
	Cleanup()
	os.Exit(code)
}

// Fatalf runs Cleanup, prints the message prefixed with the program's
// name to stderr, and exits with status 1.
func Fatalf(format string, args ...any) {
	Cleanup()
	mu.Lock()
	name := prog
	mu.Unlock()
	fmt.Fprintf(os.Stderr, name+": "+format+"\n", args...)
	os.Exit(1)
}

// ExitOnSignal makes SIGINT, SIGTERM and SIGHUP run Cleanup and exit with
// status 130: the processes are in groups of their own, so a terminal's
// signals do not reach them.
func ExitOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		Cleanup()
		mu.Lock()
		name := prog
		mu.Unlock()
		fmt.Fprintf(os.Stderr, "%s: %v: stopped every process started\n", name, s)
		os.Exit(130)
	}()
}
