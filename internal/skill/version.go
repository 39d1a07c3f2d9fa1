package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Version returns the kept version n of the owner's skill name: its
// SKILL.md as it was written (Versions lists the kept numbers).
// ErrNotFound when no such version is kept.
func (l *Library) Version(name string, n int) ([]byte, error) {
	return withRoot(l, name, func(r *os.Root) ([]byte, error) {
		p := filepath.Join(versionsDir, name, strconv.Itoa(n), skillFile)
		if _, err := r.Lstat(p); n <= 0 || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("skill %q: version %d: %w", name, n, ErrNotFound)
		}
		data, err := readFileNoLink(r, p, l.lim.skill())
		if err != nil {
			return nil, fmt.Errorf("skill %q: version %d: %w", name, n, err)
		}
		return data, nil
	})
}
