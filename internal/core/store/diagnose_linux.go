package store

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// probeFS gathers the facts explain needs about the database at abs.
func probeFS(abs string) fsFacts {
	dir := filepath.Dir(abs)
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fsFacts{}
	}
	bsize := uint64(st.Bsize)
	f := fsFacts{
		known:       true,
		readOnlyFS:  uint64(st.Flags)&unix.ST_RDONLY != 0,
		free:        st.Bavail * bsize,
		total:       st.Blocks * bsize,
		inodesFree:  st.Ffree,
		inodesTotal: st.Files,
		self:        os.Geteuid(),
	}
	for _, p := range []string{abs, abs + "-wal", abs + "-shm", dir} {
		fi, err := os.Stat(p)
		if err != nil {
			continue // not there: SQLite creates it, if dir is writable
		}
		if err := unix.Access(p, unix.W_OK); err != nil && !errors.Is(err, unix.EROFS) {
			f.notWritable, f.mode = p, fi.Mode()
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
				f.uid = int(sys.Uid)
			}
			break
		}
	}
	return f
}
