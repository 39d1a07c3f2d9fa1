//go:build unix

package app

import (
	"os"
	"syscall"
)

// fileOwner is the uid that owns fi, where the system says.
func fileOwner(fi os.FileInfo) (uid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
