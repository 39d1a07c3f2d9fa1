// Package store is shelldon's persistent state in one SQLite file: turns, the
// chats' history, token usage and the audit log. All SQL lives here; the
// schema is versioned by migrations embedded from migrations/NNNN_name.sql.
// It is part of core and never imports the broker or a model SDK (see
// repo_test.go).
//
// Several processes may open the same file at once (the daemon and a terminal
// chat): the database runs in WAL mode, every connection waits up to
// busyTimeout for a lock, and write transactions are short and take the write
// lock when they begin, so they never fail on a lock upgrade.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Sentinel errors; test with errors.Is.
var (
	ErrNotFound     = errors.New("store: not found")
	ErrTurnFinished = errors.New("store: turn already finished")
	ErrSchemaTooNew = errors.New("store: database schema is newer than this binary")
	// ErrSchemaMismatch: the migrations the database has applied are not
	// this binary's (checkApplied).
	ErrSchemaMismatch = errors.New("store: database schema is not this binary's")
	errEmptyArgument  = errors.New("store: empty argument")
)

// busyTimeout is how long a connection waits for another connection's lock.
const busyTimeoutMillis = 5000

// cacheKiB bounds SQLite's page cache, per connection (SQLite's default is
// 2 MiB): with maxOpenConns connections the store's cache stays under
// 4 MiB however long the daemon runs. The database is small and the pages
// a turn reads are few; the operating system's file cache holds the rest.
const cacheKiB = 1024

// journalLimitBytes is what the WAL file is truncated to after a
// checkpoint, so a burst of writes does not keep its disk space.
const journalLimitBytes = 4 << 20

// maxOpenConns bounds the connections of one Store: enough for a writer and
// a few concurrent readers (WAL lets readers run beside the writer), few
// enough to keep memory small on a Raspberry Pi.
const maxOpenConns = 4

// connMaxIdleTime closes a connection left idle this long, and its page
// cache and prepared statements with it: a daemon that waits for the
// owner holds no more than it needs.
const connMaxIdleTime = 5 * time.Minute

//go:embed migrations/*.sql
var migrationFS embed.FS

// Store is an open database. It is safe for concurrent use.
type Store struct {
	db      *sql.DB
	owner   string // random per handle; marks the turns this handle runs
	pid     int
	hot     [numHot]*sql.Stmt // the hot queries, prepared (stmts.go)
	history historyCache      // the turns the latest History calls picked (history.go)
}

// Open opens the database at path, creating it with mode 0600 if it does not
// exist, and brings its schema up to date. It refuses (ErrSchemaTooNew) a
// database written by a newer binary.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("store: open: %w: path", errEmptyArgument)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %q: %w", path, err)
	}
	// Create the file ourselves so that its mode is 0600; SQLite gives the
	// -wal and -shm files the mode of the database file.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", explain(abs, err, probeFS(abs)))
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("store: open: %w", explain(abs, err, probeFS(abs)))
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("store: open %q: %w", abs, err)
	}
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxOpenConns)
	db.SetConnMaxIdleTime(connMaxIdleTime)

	var tok [8]byte
	_, _ = rand.Read(tok[:]) // never fails (crypto/rand)
	s := &Store{db: db, owner: hex.EncodeToString(tok[:]), pid: os.Getpid()}
	if err := s.migrate(ctx, abs); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %q: %w", abs, explain(abs, err, probeFS(abs)))
	}
	if err := s.prepareHot(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %q: %w", abs, err)
	}
	return s, nil
}

// dsn builds the modernc.org/sqlite URI for an absolute path: the path is
// escaped so that '?', '#' and '%' in it are not read as URI syntax.
func dsn(abs string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMillis)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "cache_size(-"+strconv.Itoa(cacheKiB)+")")
	q.Add("_pragma", "journal_size_limit("+strconv.Itoa(journalLimitBytes)+")")
	// Deleted content is overwritten with zeros: a forgotten fact (and the
	// index pages a merge freed) leaves no bytes behind in the file.
	q.Add("_pragma", "secure_delete(1)")
	// BEGIN IMMEDIATE: a write transaction takes the write lock up front,
	// waiting up to the busy timeout, instead of failing with SQLITE_BUSY
	// when it upgrades from a read lock.
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// Close closes the prepared statements and the database.
func (s *Store) Close() error {
	if err := errors.Join(s.closeHot(), s.db.Close()); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

type migration struct {
	version int
	name    string
	file    string // its path in migrationFS
}

// text is the migration's SQL. It is read when the migration is applied,
// not when the migrations are listed: an open that finds the schema up to
// date (every start but the first) needs only their names.
func (m migration) text() (string, error) {
	body, err := fs.ReadFile(migrationFS, m.file)
	return string(body), err
}

// migrationName splits a migration file's name, NNNN_name.sql (name of
// a-z, 0-9 and _), into its version and name. Read by hand rather than by a
// package-level regexp, which would be init work for every process of the
// binary (package lazy), and compiled at every start besides.
func migrationName(file string) (version int, name string, ok bool) {
	rest, found := strings.CutSuffix(file, ".sql")
	if !found || len(rest) < 6 || rest[4] != '_' {
		return 0, "", false
	}
	for i := range 4 {
		if rest[i] < '0' || rest[i] > '9' {
			return 0, "", false
		}
		version = version*10 + int(rest[i]-'0')
	}
	name = rest[5:]
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return 0, "", false
		}
	}
	return version, name, true
}

// migrations returns the embedded migrations in order, checking that their
// versions run 1, 2, 3... without gaps or duplicates. Their SQL is read
// only when one is applied (migration.text).
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		v, name, ok := migrationName(e.Name())
		if !ok {
			return nil, fmt.Errorf("migration file %q: name is not NNNN_name.sql", e.Name())
		}
		ms = append(ms, migration{version: v, name: name, file: "migrations/" + e.Name()})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: expected version %d", m.version, m.name, i+1)
		}
	}
	return ms, nil
}

// migrate brings the schema up to date. Migrations go forward only, each
// in its own transaction; two processes may race here: each migration
// re-reads the version under the write lock, so it is applied exactly
// once. Before the first pending migration of a database that has a schema
// the database is backed up beside it (backupBefore); an open that finds
// nothing to migrate removes the backups an earlier one left.
func (s *Store) migrate(ctx context.Context, abs string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	latest := len(ms)
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	cur, err := schemaVersion(ctx, s.db)
	if err != nil {
		return err
	}
	if cur > latest {
		return tooNew(cur, latest)
	}
	// All of this binary's migrations, not only the first cur: another process
	// may have applied more since cur was read.
	if err := s.checkApplied(ctx, ms); err != nil {
		return err
	}
	if cur == latest {
		removeBackups(abs)
		return nil
	}
	if cur > 0 {
		if err := s.backupBefore(ctx, abs, cur); err != nil {
			return err
		}
	}
	for _, m := range ms[cur:] {
		if err := s.apply(ctx, m, latest); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) apply(ctx context.Context, m migration, latest int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %04d_%s: %w", m.version, m.name, err)
	}
	defer func() { _ = tx.Rollback() }()
	cur, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	switch {
	case cur > latest:
		return tooNew(cur, latest)
	case cur >= m.version:
		return nil // another process applied it first
	}
	text, err := m.text()
	if err != nil {
		return fmt.Errorf("migrate %04d_%s: %w", m.version, m.name, err)
	}
	if _, err := tx.ExecContext(ctx, text); err != nil {
		return fmt.Errorf("migrate %04d_%s: %w", m.version, m.name, err)
	}
	// The migration's own bookkeeping; the only time read outside a caller's
	// clock.
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UTC().UnixNano()); err != nil {
		return fmt.Errorf("migrate %04d_%s: %w", m.version, m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate %04d_%s: %w", m.version, m.name, err)
	}
	return nil
}

// checkApplied refuses a database whose applied migrations are not this
// binary's: a migration renumbered, renamed or dropped after it shipped
// (two branches that each added a 0004, say) would otherwise leave the
// schema half of one and half of the other.
func (s *Store) checkApplied(ctx context.Context, ms []migration) error {
	rows, err := s.db.QueryContext(ctx, `SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		return fmt.Errorf("read applied migrations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			return fmt.Errorf("read applied migrations: %w", err)
		}
		if v < 1 || v > len(ms) || ms[v-1].name != name {
			want := "none"
			if v >= 1 && v <= len(ms) {
				want = fmt.Sprintf("%04d_%s", v, ms[v-1].name)
			}
			return fmt.Errorf("%w: the database has migration %04d_%s applied, and this binary's migration %d is %s: use the binary that wrote it, or restore a backup beside the database (%s)",
				ErrSchemaMismatch, v, name, v, want, "a .backup-vN file")
		}
	}
	return rows.Err()
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func schemaVersion(ctx context.Context, q querier) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

func tooNew(cur, latest int) error {
	return fmt.Errorf("%w: database is at version %d, this binary knows up to %d; upgrade shelldon", ErrSchemaTooNew, cur, latest)
}

// nanos and fromNanos convert between time.Time and the stored UTC unix
// nanoseconds.
func nanos(t time.Time) int64 { return t.UTC().UnixNano() }

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}
