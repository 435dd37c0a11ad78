package client

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// guardShell runs the guard; without it a child is started as it is.
const guardShell = "/bin/sh"

// guardScript is the guard, the process that stands between this one and
// a stdio server: it starts the server ("$@", in its process group, with
// the guard's stdin, which it keeps no copy of, nor of stdout) and waits
// for it, exiting with its status, so that the server is always reaped by
// its parent. SIGUSR1, its parent-death signal, makes it kill its whole
// group (the server and everything the server started that stayed in it),
// which is how a server's own children end with this process even when it
// is killed outright. SIGUSR2 makes it kill the server (signalChild's
// SIGKILL). SIGTERM, SIGINT and SIGHUP sent to the group reach the server
// and leave the guard waiting for it.
const guardScript = `trap 'kill -KILL 0' USR1
trap 'kill -KILL "$pid"' USR2
trap : TERM INT HUP
exec 3<&0
"$@" <&3 3<&- &
pid=$!
exec 0</dev/null 1>/dev/null 3<&-
while :; do
	wait "$pid"
	st=$?
	kill -0 "$pid" 2>/dev/null || exit "$st"
done`

// startChild starts x in a process group of its own, which signalChild
// and endGroup signal whole (the child's own children with it), behind the
// guard (guardScript) when /bin/sh exists: this process killed outright
// (SIGKILL, the OOM killer) then leaves nothing of the group running, the
// guard killing it on its parent-death signal. Without the guard the child
// itself gets SIGKILL as its parent-death signal, which reaches it only, not
// what it started. The kernel sends that signal when the thread that
// started the process ends, not the process, and Go ends a thread whenever
// a goroutine locked to it returns, so the process is started from a
// goroutine locked to its thread until reaped is closed (it has exited and
// been waited for): the thread then ends with it, its signal reaching
// nobody. Behind the guard, the child's exit status is the guard's: a
// server killed by a signal shows as exit status 128 plus its number.
func startChild(x *exec.Cmd, reaped <-chan struct{}) (guarded bool, err error) {
	if x.SysProcAttr == nil {
		x.SysProcAttr = &syscall.SysProcAttr{}
	}
	x.SysProcAttr.Setpgid = true
	x.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if guarded = x.Err == nil && guardAvailable(); guarded {
		x.Args = append([]string{guardShell, "-c", guardScript, "toolwire-stdio-guard", x.Path}, x.Args[1:]...)
		x.Path = guardShell
		x.SysProcAttr.Pdeathsig = syscall.SIGUSR1
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		err := x.Start()
		started <- err
		if err == nil {
			<-reaped
		}
	}()
	return guarded, <-started
}

// guardAvailable reports whether guardShell can be run.
func guardAvailable() bool {
	fi, err := os.Stat(guardShell)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// signalChild signals the child's process group: the child and whatever
// it started that stayed in its group. SIGKILL for a guarded child goes to
// its guard as SIGUSR2: the guard kills the server and reaps it, then
// exits, rather than die with it and leave it to be reaped by init.
func signalChild(p *os.Process, sig syscall.Signal, guarded bool) error {
	var err error
	if sig == syscall.SIGKILL && guarded {
		err = syscall.Kill(p.Pid, syscall.SIGUSR2)
	} else {
		err = syscall.Kill(-p.Pid, sig)
	}
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// endGroup kills what is left of the process group of a child that has
// exited and been reaped: processes it started and did not wait for. (Its
// group id stays taken while any member lives, so no other group gets it
// meanwhile.)
func endGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
