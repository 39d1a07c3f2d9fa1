package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newStore(t *testing.T) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "shelldon.db"))
}

func TestMigrationsWellFormed(t *testing.T) {
	t.Parallel()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
}

func TestOpenMigratesOnceAndReopens(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatalf("open #%d: %v", i, err)
		}
		var rows, version int
		if err := s.db.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&rows, &version); err != nil {
			t.Fatal(err)
		}
		if rows != len(ms) || version != len(ms) {
			t.Errorf("open #%d: %d migration rows at version %d, want %d", i, rows, version, len(ms))
		}
		if i == 0 {
			if _, err := s.BeginTurn(t.Context(), "c", "hi", t0); err != nil {
				t.Fatal(err)
			}
		}
		var turns int
		if err := s.db.QueryRow(`SELECT COUNT(*) FROM turns`).Scan(&turns); err != nil {
			t.Fatal(err)
		}
		if turns != 1 {
			t.Errorf("open #%d: %d turns, want the 1 kept across reopens", i, turns)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenFileMode(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new.db")
	s := openAt(t, path)
	if _, err := s.AppendAudit(t.Context(), AuditEntry{At: t0, Kind: KindToolCall}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), perm)
		}
	}
}

func TestOpenPragmas(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	// Pin one connection so that every pragma is read from the same one.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tc := range []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"busy_timeout", "5000"},
		{"foreign_keys", "1"},
		{"synchronous", "1"}, // NORMAL
	} {
		var got string
		if err := conn.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
		}
	}
}

func TestOpenOddPath(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a dir?x=1#frag")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "d%41b.db")
	openAt(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the literal path: %v", err)
	}
}

func TestOpenRefusesFutureSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "future.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from_the_future', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), path)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
	}
	if !strings.Contains(err.Error(), "999") {
		t.Errorf("error %q does not name the database's version", err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, path := range []string{"", dir, filepath.Join(dir, "missing", "x.db")} {
		if s, err := Open(t.Context(), path); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}

// Two processes (here: handles) open a fresh file at the same moment; the
// migrations must be applied once and neither open may fail.
func TestOpenRace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "race.db")
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	stores := make([]*Store, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(t.Context(), path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("open %d: %v", i, errs[i])
			continue
		}
		_ = stores[i].Close()
	}
}

// A daemon and a terminal chat write to the same file at once.
func TestConcurrentHandles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.db")
	handles := []*Store{openAt(t, path), openAt(t, path)}
	ctx := t.Context()
	const workers, turns = 4, 15
	var wg sync.WaitGroup
	errc := make(chan error, len(handles)*workers)
	for h, s := range handles {
		for w := range workers {
			wg.Go(func() {
				chat := fmt.Sprintf("h%d-w%d", h, w)
				for i := range turns {
					id, err := s.BeginTurn(ctx, chat, "hi", t0)
					if err != nil {
						errc <- err
						return
					}
					if _, err := s.AppendAudit(ctx, AuditEntry{At: t0, Chat: chat, Turn: id, Kind: KindToolCall, Tool: "get_time", OK: true}); err != nil {
						errc <- err
						return
					}
					if _, err := s.History(ctx, chat, 1000); err != nil {
						errc <- err
						return
					}
					end := TurnEnd{Status: StatusOK, Reply: "r", At: t0, Messages: []contracts.Message{
						{Role: contracts.RoleUser, Text: fmt.Sprint("q", i)},
						{Role: contracts.RoleAssistant, Text: "r"},
					}}
					if err := s.FinishTurn(ctx, id, end); err != nil {
						errc <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	got, err := handles[1].Audit(ctx, AuditQuery{Limit: MaxAuditLimit})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(handles) * workers * turns; len(got) != want {
		t.Errorf("%d audit entries, want %d", len(got), want)
	}
	hist, err := handles[0].History(ctx, "h1-w3", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2*turns {
		t.Errorf("history of a chat the other handle wrote: %d messages, want %d", len(hist), 2*turns)
	}
}
