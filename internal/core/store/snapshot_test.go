package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestSnapshotWhileWriting copies the database while another connection
// commits batches of rows: every copy holds each batch wholly or not at
// all, and later copies hold at least as many batches.
func TestSnapshotWhileWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "shelldon.db")
	s := openAt(t, path)
	const perBatch = 20
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for batch := 1; ctx.Err() == nil; batch++ {
			tx, err := s.db.BeginTx(ctx, nil)
			if err != nil {
				return
			}
			for i := range perBatch {
				if _, err := tx.Exec(`INSERT INTO audit (at, chat, turn, kind, tool, args, summary, ok, duration_ns) VALUES (?, 'c', ?, 'tool_call', 't', '{}', 's', 1, 0)`, i, batch); err != nil {
					_ = tx.Rollback()
					return
				}
			}
			if err := tx.Commit(); err != nil {
				return
			}
		}
	}()
	last := -1
	for i := range 5 {
		dest := filepath.Join(dir, "copy"+string(rune('a'+i))+".db")
		v, err := Snapshot(t.Context(), path, dest)
		if err != nil {
			stop()
			wg.Wait()
			t.Fatalf("snapshot %d: %v", i, err)
		}
		if v != LatestSchema() {
			t.Errorf("snapshot %d: schema %d, want %d", i, v, LatestSchema())
		}
		if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("snapshot %d: %v, mode %v; want 0600", i, err, fi.Mode())
		}
		db, err := sql.Open("sqlite", readOnlyDSN(dest))
		if err != nil {
			t.Fatal(err)
		}
		var torn, batches int
		if err := db.QueryRow(`SELECT COUNT(*) FROM (SELECT turn FROM audit GROUP BY turn HAVING COUNT(*) != ?)`, perBatch).Scan(&torn); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(`SELECT COUNT(DISTINCT turn) FROM audit`).Scan(&batches); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if torn != 0 {
			t.Errorf("snapshot %d holds %d torn batches", i, torn)
		}
		if batches < last {
			t.Errorf("snapshot %d holds %d batches, fewer than the one before (%d)", i, batches, last)
		}
		last = batches
	}
	stop()
	wg.Wait()
	if last <= 0 {
		t.Errorf("the snapshots saw no batch (%d): the writer did not run beside them", last)
	}
}

// TestSnapshotOfAClosedDatabase copies a database no one has open (no
// -wal or -shm file) and leaves its bytes as they were.
func TestSnapshotOfAClosedDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "shelldon.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO audit (at, chat, turn, kind, tool, args, summary, ok, duration_ns) VALUES (1, 'c', 1, 'tool_call', 't', '{}', 's', 1, 0)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)
	dest := filepath.Join(dir, "copy.db")
	if _, err := Snapshot(t.Context(), path, dest); err != nil {
		t.Fatal(err)
	}
	if after := fileSum(t, path); !bytes.Equal(before, after) {
		t.Error("Snapshot changed the database file")
	}
	// A read-only connection to a WAL database may leave an empty -wal
	// (and the -shm index) behind; it holds no change.
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("Snapshot wrote %d bytes to the WAL", fi.Size())
	}
	c := openAt(t, dest)
	var n int
	if err := c.db.QueryRow(`SELECT COUNT(*) FROM audit`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the copy holds %d audit rows (%v), want 1", n, err)
	}
}

// TestSnapshotOfAnOlderSchema copies a database each older binary left:
// the copy keeps its version, and opening it migrates it with its rows.
func TestSnapshotOfAnOlderSchema(t *testing.T) {
	t.Parallel()
	for v := 1; v < LatestSchema(); v++ {
		dir := t.TempDir()
		path := filepath.Join(dir, "old.db")
		atVersion(t, path, v)
		dest := filepath.Join(dir, "copy.db")
		got, err := Snapshot(t.Context(), path, dest)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if got != v {
			t.Fatalf("snapshot of version %d says %d", v, got)
		}
		if got, err := SchemaVersionOf(t.Context(), dest); err != nil || got != v {
			t.Fatalf("SchemaVersionOf(version %d) = %d, %v", v, got, err)
		}
		s := openAt(t, dest)
		var version int
		if err := s.db.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&version); err != nil || version != LatestSchema() {
			t.Fatalf("the copy of version %d opened at %d (%v), want %d", v, version, err, LatestSchema())
		}
		checkReadable(t, s, v)
	}
}

func TestSnapshotRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "shelldon.db")
	openAt(t, path)
	dest := filepath.Join(dir, "taken")
	if err := os.WriteFile(dest, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Snapshot(t.Context(), path, dest); !errors.Is(err, os.ErrExist) {
		t.Errorf("snapshot over an existing file: %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "mine" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if _, err := Snapshot(t.Context(), filepath.Join(dir, "none.db"), filepath.Join(dir, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("snapshot of a missing database: %v, want ErrNotExist", err)
	}
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("not a database "), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := SchemaVersionOf(t.Context(), junk); err == nil {
		t.Error("SchemaVersionOf accepted a file that is not a database")
	}
}

func fileSum(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return sum[:]
}
