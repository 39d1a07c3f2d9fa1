//go:build linux

package childproc

import (
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
