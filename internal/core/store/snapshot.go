package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
)

// ErrSnapshotCorrupt: the copy Snapshot made does not pass SQLite's
// quick_check.
var ErrSnapshotCorrupt = errors.New("store: the database copy is damaged")

// Snapshot writes a consistent copy of the database at path to dest (a
// file that must not exist yet) and returns the copy's schema version,
// without changing the database: it opens a read-only connection of its
// own and runs VACUUM INTO, which copies what one read transaction sees,
// the WAL's committed pages included. A daemon and its turns may run
// meanwhile: in WAL mode the read transaction neither waits for their
// writes nor holds them up, and the copy holds each transaction wholly or
// not at all. The copy is checked (PRAGMA quick_check) before Snapshot
// returns; it is removed on any error. Opening a closed WAL database
// read-only may leave an empty -wal file and the -shm index beside it, as
// any reader does; the next Open uses them.
func Snapshot(ctx context.Context, path, dest string) (schema int, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, fmt.Errorf("store: snapshot %q: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return 0, fmt.Errorf("store: snapshot: %w", err)
	}
	if _, err := os.Lstat(dest); err == nil {
		return 0, fmt.Errorf("store: snapshot to %s: %w", dest, os.ErrExist)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(dest)
		}
	}()
	src, err := sql.Open("sqlite", readOnlyDSN(abs))
	if err != nil {
		return 0, fmt.Errorf("store: snapshot %q: %w", abs, err)
	}
	src.SetMaxOpenConns(1)
	_, err = src.ExecContext(ctx, `VACUUM INTO ?`, dest)
	if cerr := src.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("store: snapshot %q: %w", abs, err)
	}
	if err := os.Chmod(dest, 0o600); err != nil {
		return 0, fmt.Errorf("store: snapshot: %w", err)
	}
	schema, err = checkCopy(ctx, dest)
	if err != nil {
		return 0, fmt.Errorf("store: snapshot %q: %w", abs, err)
	}
	return schema, nil
}

// checkCopy runs quick_check on the database file at path, read-only, and
// returns its schema version (0 when it has none).
func checkCopy(ctx context.Context, path string) (int, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", readOnlyDSN(abs))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res); err != nil {
		return 0, err
	}
	if res != "ok" {
		return 0, fmt.Errorf("%w: %s", ErrSnapshotCorrupt, res)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	return schemaVersion(ctx, db)
}

// SchemaVersionOf returns the schema version of the database file at path,
// opened read-only after checking it (PRAGMA quick_check): what a restore
// asks before it places a copy.
func SchemaVersionOf(ctx context.Context, path string) (int, error) {
	v, err := checkCopy(ctx, path)
	if err != nil {
		return 0, fmt.Errorf("store: check %s: %w", path, err)
	}
	return v, nil
}

// LatestSchema is the schema version this binary migrates a database to.
func LatestSchema() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// readOnlyDSN is the URI of a read-only connection to the database at abs
// that waits for locks as the store's own do, and never writes it.
func readOnlyDSN(abs string) string {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMillis)+")")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}
