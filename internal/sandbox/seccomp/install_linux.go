//go:build linux && (amd64 || arm64 || arm)

package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported returns nil when the kernel offers seccomp filter mode with the
// actions the filter uses, else an error that says what is missing.
func Supported() error {
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: the kernel has no seccomp (prctl PR_GET_SECCOMP: %w)", err)
	}
	for _, a := range []struct {
		name   string
		action uint32
	}{
		{"SECCOMP_RET_ERRNO", unix.SECCOMP_RET_ERRNO},
		{"SECCOMP_RET_KILL_PROCESS", unix.SECCOMP_RET_KILL_PROCESS},
	} {
		action := a.action
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
		switch {
		case errno == 0:
		case errors.Is(errno, unix.ENOSYS):
			return fmt.Errorf("seccomp: the kernel has no seccomp(2) (Linux 3.17 or later with CONFIG_SECCOMP_FILTER): %w", errno)
		case errors.Is(errno, unix.EINVAL):
			return fmt.Errorf("seccomp: the kernel has no filter mode or no SECCOMP_GET_ACTION_AVAIL (Linux 4.14 or later): %w", errno)
		case errors.Is(errno, unix.EOPNOTSUPP):
			return fmt.Errorf("seccomp: the kernel does not offer %s: %w", a.name, errno)
		default:
			return fmt.Errorf("seccomp: check %s: %w", a.name, errno)
		}
	}
	return nil
}

// Install sets no_new_privs and loads the filter for every thread of the
// process (SECCOMP_FILTER_FLAG_TSYNC). From then on the process and all it
// starts, across execve, run under the filter; it cannot be lifted. Call it
// last in a sandbox helper, after the namespaces and mounts are set up (the
// filter denies mount) and right before exec.
func Install(opts Options) error {
	prog, err := Program(runtime.GOARCH, opts)
	if err != nil {
		return err
	}
	// no_new_privs is per thread until TSYNC copies it to the others, so set
	// it on the thread that loads the filter.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: set no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	tid, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: load filter: %w", errno)
	}
	if tid != 0 {
		return fmt.Errorf("seccomp: load filter: thread %d could not be synchronized", tid)
	}
	return nil
}
