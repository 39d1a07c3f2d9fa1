//go:build linux

package childproc

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// limitData caps this process's data segment (heap and private mappings).
func limitData(n uint64) error {
	return unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: n, Max: n})
}

// dieWithParent makes a child die when the process that started it does.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// hideFromChildren makes this process not dumpable. The gate and toolcall
// children start python3 for a Python tool, as the same user in the same
// sandbox: without this, the tool could open /proc/<ppid>/fd/1 and write a
// forged result or gate report where only this process may write, or read
// this process's memory. A child regains dumpable at execve; this process
// keeps it off.
func hideFromChildren() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the process non-dumpable: %w", err)
	}
	return nil
}

// jobArrived returns whether f (the worker's standard input, the daemon's
// end of the pipe) has something to read, asked without reading or
// waiting; a closed pipe counts, as does any doubt.
func jobArrived(f *os.File) func() bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return func() bool { return true }
	}
	return func() bool {
		arrived := true
		err := rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, 0)
			arrived = err != nil || n > 0
		})
		return arrived || err != nil
	}
}
