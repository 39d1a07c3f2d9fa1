//go:build linux

package app

import (
	"log/slog"

	"golang.org/x/sys/unix"
)

// raiseOpenFiles raises the soft RLIMIT_NOFILE to the hard limit and
// returns the limit the daemon runs with, for the connection cap; 0 if it
// cannot be read. (Go's runtime takes the soft limit to one below the hard
// at init and gives children the original back; after this, children
// inherit the raised limit, and the sandbox sets its own.)
func raiseOpenFiles(log *slog.Logger) uint64 {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("read the open-file limit", "err", err)
		return 0
	}
	if lim.Cur < lim.Max {
		soft := lim.Cur
		lim.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			log.Warn("raise the open-file limit", "soft", soft, "hard", lim.Max, "err", err)
			return soft
		}
	}
	log.Info("open-file limit", "soft", lim.Cur, "hard", lim.Max)
	return lim.Cur
}
