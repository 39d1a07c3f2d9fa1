//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// openFlags opens for reading without blocking on a FIFO or device that
// replaced a checked file between the stat and the open.
const openFlags = syscall.O_RDONLY | syscall.O_NONBLOCK

// nlink returns the hard-link count of fi.
func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
