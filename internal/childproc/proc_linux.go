//go:build linux

package childproc

import (
	"fmt"
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
