//go:build unix

package core

import (
	"os"
	"syscall"
)

// groupAttr puts a worker in its own process group, away from the
// terminal's Ctrl-C, and (on Linux) kills it if the daemon dies.
func groupAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(attr)
	return attr
}

// killGroup kills a worker's whole process group.
func killGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}
