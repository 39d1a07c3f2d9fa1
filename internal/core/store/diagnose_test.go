package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestExplain: a failure to open or write the database says what is wrong
// and what to do, keeps the original error, and leaves other errors alone.
// (SQLite alone says "disk I/O error (4874)" on a full disk and "attempt
// to write a readonly database (1544)" in a read-only directory.)
func TestExplain(t *testing.T) {
	t.Parallel()
	const abs = "/home/o/.shelldon/shelldon.db"
	ioErr := &fs.PathError{Op: "open", Path: abs, Err: syscall.EIO}
	roomy := fsFacts{known: true, free: 10 << 30, total: 20 << 30, inodesFree: 1000, inodesTotal: 2000, self: 1000}
	full := roomy
	full.free = 12 << 10
	noInodes := roomy
	noInodes.inodesFree = 0
	ro := roomy
	ro.readOnlyFS = true
	roFile := roomy
	roFile.notWritable, roFile.mode, roFile.uid = abs, 0o400, 0
	roDir := roomy
	roDir.notWritable, roDir.mode, roDir.uid = filepath.Dir(abs), 0o500, 1000
	for _, tc := range []struct {
		name  string
		err   error
		facts fsFacts
		want  []string
	}{
		{"full", ioErr, full, []string{"is full (12 KiB free of 20 GiB)", "free some space", "start shelldon again"}},
		{"no inodes", &fs.PathError{Op: "open", Path: abs, Err: syscall.ENOSPC}, noInodes, []string{"is full (no inodes free)"}},
		{"read-only file system", &fs.PathError{Op: "open", Path: abs, Err: syscall.EROFS}, ro, []string{"read-only file system", "remount it read-write"}},
		{"read-only database", &fs.PathError{Op: "open", Path: abs, Err: syscall.EACCES}, roFile, []string{abs + " is not writable by this user (mode 0400, owner uid 0; shelldon runs as uid 1000)", "chmod 600"}},
		{"read-only directory", ioErr, roDir, []string{"/home/o/.shelldon is not writable", "-wal and -shm", "chmod u+w"}},
		{"other I/O", ioErr, roomy, []string{"could not be read or written", "shelldon doctor"}},
	} {
		got := explain(abs, tc.err, tc.facts)
		if !errors.Is(got, tc.err) {
			t.Errorf("%s: %v does not wrap the original error", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
	}
	// Not about the file: unchanged.
	for _, err := range []error{ErrSchemaTooNew, errors.New("migrate 0002: syntax error")} {
		if got := explain(abs, err, full); got != err {
			t.Errorf("explain(%v) = %v, want it unchanged", err, got)
		}
	}
}

// TestProbeFS reads the facts of a real, writable directory.
func TestProbeFS(t *testing.T) {
	t.Parallel()
	abs := filepath.Join(t.TempDir(), "shelldon.db")
	if err := os.WriteFile(abs, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f := probeFS(abs)
	if !f.known {
		t.Skip("no file system facts on this system")
	}
	if f.readOnlyFS || f.notWritable != "" || f.total == 0 {
		t.Errorf("probeFS(%s) = %+v", abs, f)
	}
}
