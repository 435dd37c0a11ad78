//go:build !linux

package client

import (
	"os"
	"os/exec"
	"syscall"
)

// startChild starts x as it is: the process group and parent-death signal
// of the Linux build are not set here.
func startChild(x *exec.Cmd, _ <-chan struct{}) (guarded bool, err error) { return false, x.Start() }

// signalChild signals the child.
func signalChild(p *os.Process, sig syscall.Signal, _ bool) error {
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}

// endGroup does nothing: the child has no group of its own here.
func endGroup(*os.Process) {}
