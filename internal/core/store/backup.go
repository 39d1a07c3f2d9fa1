package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// BackupPath is where Open keeps the database at path as it was at schema
// version from, before it migrated it: "shelldon.db.backup-v3" beside
// "shelldon.db". To go back to it, stop shelldon, install the binary that
// wrote version from, and copy the backup over the database (removing its
// -wal and -shm files).
func BackupPath(path string, from int) string {
	return path + ".backup-v" + strconv.Itoa(from)
}

// backupBefore copies the database, at schema version from, to
// BackupPath(abs, from) before a migration runs: VACUUM INTO writes a
// consistent copy (the WAL's committed pages included) to a temporary name
// that is renamed into place, so a backup is whole or absent. A backup
// that cannot be made stops the migration: nothing is changed.
func (s *Store) backupBefore(ctx context.Context, abs string, from int) error {
	var tok [6]byte
	_, _ = rand.Read(tok[:])
	tmp := abs + ".backup-tmp-" + hex.EncodeToString(tok[:])
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("back up the database before upgrading its schema from version %d: %w", from, err)
	}
	err := os.Chmod(tmp, 0o600)
	if err == nil {
		err = os.Rename(tmp, BackupPath(abs, from))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("back up the database before upgrading its schema from version %d: %w", from, err)
	}
	return nil
}

// removeBackups removes the backups an earlier Open made before it
// migrated, and any temporary copy a crash left: this Open found the
// schema current, so that migration succeeded and shelldon has started on
// it since. Best effort: a backup left behind is only disk space.
func removeBackups(abs string) {
	for _, pattern := range []string{abs + ".backup-v*", abs + ".backup-tmp-*"} {
		matches, _ := filepath.Glob(globEscape(pattern))
		for _, m := range matches {
			_ = os.Remove(m)
		}
	}
}

// globEscape escapes the glob metacharacters of the path part of pattern
// (everything before the final '*').
func globEscape(pattern string) string {
	base := pattern[:len(pattern)-1]
	out := make([]byte, 0, len(pattern)+8)
	for i := 0; i < len(base); i++ {
		switch c := base[i]; c {
		case '*', '?', '[', '\\':
			out = append(out, '\\', c)
		default:
			out = append(out, c)
		}
	}
	return string(out) + "*"
}
