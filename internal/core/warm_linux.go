//go:build linux

package core

import "golang.org/x/sys/unix"

// procWatch watches a worker through a pidfd, which names the process and
// never another that reuses its pid: taken while the worker is unreaped,
// it can say the worker has died and kill it at any time after.
type procWatch struct{ fd int }

// watchProc opens a watch on pid, a child not yet reaped. Without pidfds
// (kernels before 5.3) the watch sees nothing and kills nothing; the
// turn's own Kill and the sandbox's deadline still end the worker.
func watchProc(pid int) procWatch {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return procWatch{fd: -1}
	}
	return procWatch{fd: fd}
}

// exited says whether the process has ended (reaped or not).
func (w procWatch) exited() bool {
	if w.fd < 0 {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err != unix.EINTR {
			return err == nil && n > 0
		}
	}
}

// kill sends the process SIGKILL; the sandbox helper is PID 1 of its
// namespace, so that ends everything in it.
func (w procWatch) kill() {
	if w.fd >= 0 {
		unix.PidfdSendSignal(w.fd, unix.SIGKILL, nil, 0)
	}
}

func (w procWatch) close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
	}
}
