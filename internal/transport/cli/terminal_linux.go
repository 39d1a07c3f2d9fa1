//go:build linux

package cli

import "golang.org/x/sys/unix"

// isTerminal asks the kernel for fd's terminal attributes (TCGETS), which
// only a terminal has: /dev/null, a pipe, a file or a closed descriptor
// answer ENOTTY or EBADF.
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
