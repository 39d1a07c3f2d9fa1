//go:build linux

package app

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// harden makes the daemon non-dumpable: no process of the same user (a
// worker, a degraded sandbox, anything the owner runs) can ptrace it or read
// its memory or /proc/<pid>/environ, where the provider keys live. Children
// start dumpable again at exec and hold no secret.
func harden() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the daemon non-dumpable: %w", err)
	}
	return nil
}
