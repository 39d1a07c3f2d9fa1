package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"modernc.org/sqlite"
)

// SQLite's primary result codes that mean the file could not be read or
// written (https://sqlite.org/rescode.html).
const (
	sqlitePerm     = 3
	sqliteReadOnly = 8
	sqliteIOErr    = 10
	sqliteFull     = 13
	sqliteCantOpen = 14
)

// nearlyFull is free space below which a file system counts as full for
// SQLite: growing the WAL or its index needs at least a few pages.
const nearlyFull = 1 << 20

// fsFacts is what the file system says about a database's file and its
// directory, gathered when opening it failed (probeFS).
type fsFacts struct {
	known       bool   // the facts below were read
	readOnlyFS  bool   // the file system is mounted read-only
	free, total uint64 // bytes available to this user, and in all
	inodesFree  uint64
	inodesTotal uint64
	// notWritable is the first of the database, its -wal and -shm files
	// and its directory that this user may not write, "" if none.
	notWritable string
	mode        fs.FileMode // notWritable's mode
	uid         int         // notWritable's owner
	self        int         // this process's user
}

// ioFailure reports whether err says the database's file could not be
// read, written or created, as opposed to a bug or a schema problem.
func ioFailure(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlitePerm, sqliteReadOnly, sqliteIOErr, sqliteFull, sqliteCantOpen:
			return true
		}
		return false
	}
	var pe *fs.PathError
	return errors.As(err, &pe) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EROFS)
}

// explain turns a failure to open or migrate the database at abs into one
// that says what is wrong and what to do (SQLite alone says "disk I/O
// error (4874)" for a full disk), keeping the original error at the end
// and in the chain. An error that is not about the file is returned as it
// is.
func explain(abs string, err error, f fsFacts) error {
	if err == nil || !ioFailure(err) || !f.known {
		return err
	}
	dir := filepath.Dir(abs)
	var what string
	switch {
	case f.readOnlyFS:
		what = fmt.Sprintf("%s is on a read-only file system: remount it read-write, or point SHELLDON_HOME at a writable place, then start shelldon again", abs)
	case f.notWritable == dir:
		what = fmt.Sprintf("%s is not writable by this user (mode %04o, owner uid %d; shelldon runs as uid %d), and SQLite creates the database's -wal and -shm files there: chmod u+w it, or run shelldon as its owner",
			dir, f.mode.Perm(), f.uid, f.self)
	case f.notWritable != "":
		what = fmt.Sprintf("%s is not writable by this user (mode %04o, owner uid %d; shelldon runs as uid %d): chmod 600 it, or chown it to the user that runs shelldon (a command run as root may have left it)",
			f.notWritable, f.mode.Perm(), f.uid, f.self)
	case f.free < nearlyFull || f.inodesTotal > 0 && f.inodesFree == 0:
		left := fmt.Sprintf("%s free of %s", size(f.free), size(f.total))
		if f.inodesTotal > 0 && f.inodesFree == 0 {
			left = "no inodes free"
		}
		what = fmt.Sprintf("the file system holding %s is full (%s): free some space there (the workspace and old logs are the usual places), then start shelldon again", dir, left)
	default:
		what = fmt.Sprintf("%s could not be read or written; `shelldon doctor` checks the home, and a damaged database can be restored from a backup beside it", abs)
	}
	return fmt.Errorf("%s (%w)", what, err)
}

// size is n bytes, roughly, in KiB, MiB or GiB.
func size(n uint64) string {
	switch {
	case n >= 10<<30:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 10<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	default:
		return fmt.Sprintf("%d KiB", n>>10)
	}
}
