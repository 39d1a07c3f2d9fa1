package gitremote

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// sealedToken is token in a sealed memfd (close-on-exec; the caller hands
// it to git as an extra file): never a path, never an environment value.
func sealedToken(token string) (*os.File, error) {
	fd, err := unix.MemfdCreate("shelldon-git-token", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("gitremote: memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "token")
	if _, err := f.WriteString(token); err != nil {
		f.Close()
		return nil, fmt.Errorf("gitremote: memfd: %w", err)
	}
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL)
	return f, nil
}
