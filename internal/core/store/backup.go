package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
// it since. A temporary copy younger than staleBackupTmp is left alone:
// another process opening the file at the same moment may be writing it
// (removing it under VACUUM INTO fails that Open). Best effort: a backup
// left behind is only disk space.
func removeBackups(abs string) {
	for _, pattern := range []string{abs + ".backup-v*", abs + ".backup-tmp-*"} {
		matches, _ := filepath.Glob(globEscape(pattern))
		for _, m := range matches {
			if strings.HasPrefix(m, abs+".backup-tmp-") {
				if fi, err := os.Stat(m); err != nil || time.Since(fi.ModTime()) < staleBackupTmp {
					continue
				}
			}
			_ = os.Remove(m)
		}
	}
}

// staleBackupTmp is the age from which a temporary backup copy is taken
// for a crash's leftover rather than another process's work in progress.
const staleBackupTmp = 10 * time.Minute

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
