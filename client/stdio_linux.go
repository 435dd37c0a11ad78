package client

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// startChild starts x in a process group of its own, which signalChild
// and endGroup signal whole (the child's own children with it), and with
// SIGKILL as its parent-death signal, so that this process killed outright
// (SIGKILL, the OOM killer) leaves no child running. The kernel sends that
// signal when the thread that started the child ends, not the process, and
// Go ends a thread whenever a goroutine locked to it returns, so the child
// is started from a goroutine locked to its thread until reaped is closed
// (the child has exited and been waited for): the thread then ends with
// it, its signal reaching nobody. (The signal reaches the child only: a
// grandchild, a server started through npx or a shell, outlives an
// outright kill of this process unless it ends by itself when its stdin
// closes or its stdout breaks.)
func startChild(x *exec.Cmd, reaped <-chan struct{}) error {
	if x.SysProcAttr == nil {
		x.SysProcAttr = &syscall.SysProcAttr{}
	}
	x.SysProcAttr.Setpgid = true
	x.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		err := x.Start()
		started <- err
		if err == nil {
			<-reaped
		}
	}()
	return <-started
}

// signalChild signals the child's process group: the child and whatever
// it started that stayed in its group.
func signalChild(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
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
