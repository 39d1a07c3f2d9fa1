package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixtures are rows written into a database at each schema version: the
// rows of fixtures[v] are valid once migration v has run. Adding a
// migration means adding its fixture here (rows in the tables or columns
// it adds; TestEveryMigrationHasAFixture fails until then), and
// TestMigrateFromEveryVersion then checks that every earlier schema,
// with rows in it, migrates to the latest with its rows intact.
var fixtures = map[int][]string{
	1: {
		`INSERT INTO turns (id, chat, input, status, started_at, ended_at, reply, input_tokens, output_tokens, provider, model, messages, chars)
		 VALUES (1, 'c1', 'hello', 'ok', 1000, 2000, 'hi there', 10, 20, 'openai', 'm', 2, 13)`,
		`INSERT INTO turns (id, chat, input, status, started_at, owner, pid) VALUES (2, 'c1', 'still running', 'running', 3000, 'gone', 1)`,
		`INSERT INTO messages (chat, turn, seq, role, body, chars) VALUES
		 ('c1', 1, 0, 'user', '{"role":"user","text":"hello"}', 5),
		 ('c1', 1, 1, 'assistant', '{"role":"assistant","text":"hi there"}', 8)`,
		`INSERT INTO audit (at, chat, turn, kind, tool, args, summary, ok, duration_ns) VALUES (1500, 'c1', 1, 'tool_call', 'get_time', '{}', '12:00', 1, 42)`,
	},
	2: {
		`INSERT INTO approvals (id, kind, chat, turn, tool, args, args_hash, summary, pending, state, created_at, expires_at)
		 VALUES ('a1', 'tool_call', 'c1', 1, 'run_shell', '{"cmd":"ls"}', 'h1', 'run ls', '{}', 'pending', 1000, 9000000000000000000)`,
		`INSERT INTO approvals (id, kind, chat, turn, tool, args, args_hash, summary, pending, state, created_at, expires_at, decided_at, decided_by, outcome)
		 VALUES ('a2', 'tool_call', 'c1', 1, 'run_shell', '{"cmd":"rm"}', 'h2', 'run rm', '{}', 'done', 1000, 2000, 1500, 'owner', 'denied')`,
	},
	3: {
		`INSERT INTO strikes (tool, version, at, reason) VALUES ('mytool', 2, 1000, 'timeout'), ('mytool', 2, 2000, 'error')`,
	},
	4: {
		// 0004 adds the lease columns to approvals.
		`INSERT INTO approvals (id, kind, chat, turn, tool, args, args_hash, summary, pending, state, created_at, expires_at, lease_owner, lease_pid, lease_start, started_at)
		 VALUES ('a3', 'tool_call', 'c1', 1, 'run_shell', '{"cmd":"pwd"}', 'h3', 'run pwd', '{}', 'running', 1000, 9000000000000000000, 'gone', 1, 7, 1100)`,
	},
	5: {
		// 0005 adds the message key to turns.
		`INSERT INTO turns (id, chat, input, status, started_at, ended_at, reply, request_key)
		 VALUES (3, 'c2', 'keyed', 'ok', 4000, 5000, 'keyed reply', 'tg:77')`,
	},
	6: {
		// 0006 adds the facts and their full-text index (filled by a trigger).
		`INSERT INTO facts (id, text, hash, chat, turn, created_at, updated_at)
		 VALUES (7, 'the owner waters the plants on Sundays', 'h7', 'c1', 1, 6000, 6000)`,
	},
	7: {
		// 0007 adds the turns' origin and weight, the usage ledger and the
		// budget notices.
		`INSERT INTO turns (id, chat, input, status, started_at, ended_at, reply, origin, weight)
		 VALUES (4, 'c3', 'scheduled', 'ok', 7000, 7500, 'done', 'schedule', 2)`,
		`INSERT INTO usage (at, chat, turn, origin, provider, model, input_tokens, output_tokens)
		 VALUES (7500, 'c3', 4, 'schedule', 'anthropic', 'claude-sonnet-4-5', 1000, 2000)`,
		// A call on the 4th of January 1970 (UTC day 3), which 0009's
		// daily sums hold.
		`INSERT INTO usage (at, chat, turn, origin, provider, model, input_tokens, output_tokens)
		 VALUES (259200000000001, 'c3', 4, 'schedule', 'anthropic', 'claude-sonnet-4-5', 300, 400)`,
		`INSERT INTO budget_notices (budget, period, at) VALUES ('daily_turns', '1970-01-01', 7000)`,
	},
	8: {
		// 0008 adds the schedules and the inbox of their results.
		`INSERT INTO schedules (id, spec, timezone, prompt, chat, created_at, approval, approved_by, state, next_due, last_run_at, last_outcome)
		 VALUES (5, 'every 30m', 'Europe/Berlin', 'water the plants', 'tg:77', 8000, 'r8', 'telegram', 'active', 9000, 8500, 'ok')`,
		`INSERT INTO inbox (id, schedule_id, turn, text, created_at) VALUES (3, 5, 4, 'the plants are watered', 8600)`,
	},
	9: {
		// 0009 adds the ledger's daily sums, kept by triggers: a call on
		// UTC day 4 lands in them.
		`INSERT INTO usage (at, chat, turn, origin, provider, model, input_tokens, output_tokens)
		 VALUES (345600000000002, 'c1', 1, 'owner', 'openai', 'm', 5, 6)`,
	},
	10: {
		// 0010 adds the web UI's login sessions.
		`INSERT INTO web_sessions (id, csrf, created_at, last_seen, agent)
		 VALUES ('` + strings.Repeat("0a", 32) + `', 'csrf10', 10000, 11000, 'Firefox')`,
	},
	11: {
		// 0011 adds the audit's kind and failure indexes: a failed entry
		// of its own chat, which a filter by kind and outcome finds.
		`INSERT INTO audit (at, chat, turn, kind, tool, args, summary, ok, duration_ns) VALUES (11000, 'c11', 0, 'approval_expired', 'run_shell', '{}', 'expired', 0, 0)`,
	},
}

// atVersion makes a database at path with migrations 1..v applied, as
// the binary that shipped migration v left it, and the fixtures of each.
func atVersion(t *testing.T, path string, v int) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("version %d: %v\n%s", v, err, q)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`)
	for _, m := range ms[:v] {
		text, err := m.text()
		if err != nil {
			t.Fatal(err)
		}
		exec(text)
		exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 1)`, m.version, m.name)
		for _, q := range fixtures[m.version] {
			exec(q)
		}
	}
}

// snapshot is every row of every table but schema_migrations, by table,
// each row as column -> value, in rowid order.
func snapshot(t *testing.T, db *sql.DB) map[string][]map[string]any {
	t.Helper()
	// Ordinary tables only: a full-text index (a virtual table and its
	// shadow tables, some without a rowid) is checked by reading it back
	// (checkReadable).
	tables, err := db.Query(`SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name != 'schema_migrations' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		if err := tables.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	tables.Close()
	out := map[string][]map[string]any{}
	for _, n := range names {
		rows, err := db.Query(`SELECT * FROM "` + n + `" ORDER BY rowid`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := map[string]any{}
			for i, c := range cols {
				row[c] = vals[i]
			}
			out[n] = append(out[n], row)
		}
		rows.Close()
	}
	return out
}

// kept is after reduced to the tables and columns before has: what a
// migration must keep.
func kept(before, after map[string][]map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for table, rows := range before {
		for i, row := range after[table] {
			if i >= len(rows) {
				out[table] = append(out[table], row) // a row the migration added
				continue
			}
			r := map[string]any{}
			for c := range rows[i] {
				r[c] = row[c]
			}
			out[table] = append(out[table], r)
		}
	}
	return out
}

func TestEveryMigrationHasAFixture(t *testing.T) {
	t.Parallel()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if _, ok := fixtures[m.version]; !ok {
			t.Errorf("migration %04d_%s has no fixture: add rows for what it adds to fixtures in migrate_test.go", m.version, m.name)
		}
	}
}

// TestMigrateFromEveryVersion: a database at each earlier schema version,
// with rows in every table it has, migrates to the latest with every row
// and value kept, readable through the store; it was backed up before
// the migration, and the next open removes the backup.
func TestMigrateFromEveryVersion(t *testing.T) {
	t.Parallel()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for v := 1; v < len(ms); v++ {
		t.Run(fmt.Sprintf("from_%d", v), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "shelldon.db")
			atVersion(t, path, v)
			raw, err := sql.Open("sqlite", dsn(path))
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, raw)
			raw.Close()

			s, err := Open(t.Context(), path)
			if err != nil {
				t.Fatalf("Open from version %d: %v", v, err)
			}
			got, err := schemaVersion(t.Context(), s.db)
			if err != nil || got != len(ms) {
				t.Fatalf("version after Open = %d, %v; want %d", got, err, len(ms))
			}
			if diff := cmp.Diff(before, kept(before, snapshot(t, s.db))); diff != "" {
				t.Errorf("rows changed by the migration from %d (-before +after):\n%s", v, diff)
			}
			checkReadable(t, s, v)
			s.Close()

			// The backup is the database as it was, at version v.
			backup := BackupPath(path, v)
			fi, err := os.Stat(backup)
			if err != nil {
				t.Fatalf("no backup before migrating from %d: %v", v, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("backup mode %04o, want 0600", fi.Mode().Perm())
			}
			bdb, err := sql.Open("sqlite", dsn(backup))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := schemaVersion(t.Context(), bdb); got != v {
				t.Errorf("backup at version %d, want %d", got, v)
			}
			if diff := cmp.Diff(before, snapshot(t, bdb)); diff != "" {
				t.Errorf("backup differs from the database before migrating (-before +backup):\n%s", diff)
			}
			bdb.Close()

			// The next successful open (nothing to migrate) removes it.
			openAt(t, path).Close()
			if _, err := os.Stat(backup); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("backup still there after the next open: %v", err)
			}
		})
	}
}

// checkReadable reads the fixtures of versions up to v through the store's
// own methods after the migration.
func checkReadable(t *testing.T, s *Store, v int) {
	t.Helper()
	ctx := t.Context()
	hist, err := s.History(ctx, "c1", 10000)
	if err != nil || len(hist) != 2 || hist[0].Text != "hello" || hist[1].Text != "hi there" {
		t.Errorf("History after migrating from %d = %+v, %v", v, hist, err)
	}
	if ti, err := s.Turn(ctx, 1); err != nil || ti.Reply != "hi there" {
		t.Errorf("Turn(1) after migrating from %d = %+v, %v", v, ti, err)
	}
	if entries, err := s.Audit(ctx, AuditQuery{Chat: "c1", Limit: 10}); err != nil || len(entries) != 1 || entries[0].Tool != "get_time" {
		t.Errorf("Audit after migrating from %d = %+v, %v", v, entries, err)
	}
	// The kind and outcome filters (0011's indexes) find the rows written
	// before them.
	if entries, err := s.Audit(ctx, AuditQuery{Kind: KindToolCall, Outcome: OutcomeOK, Limit: 10}); err != nil || len(entries) != 1 || entries[0].Tool != "get_time" {
		t.Errorf("Audit(tool_call, ok) after migrating from %d = %+v, %v", v, entries, err)
	}
	if entries, err := s.Audit(ctx, AuditQuery{Outcome: OutcomeFailed, Chat: "c1"}); err != nil || len(entries) != 0 {
		t.Errorf("Audit(failed) after migrating from %d = %+v, %v", v, entries, err)
	}
	if v >= 2 {
		if a, err := s.Approval(ctx, "a1"); err != nil || a.State != "pending" || a.Args != `{"cmd":"ls"}` {
			t.Errorf("Approval(a1) after migrating from %d = %+v, %v", v, a, err)
		}
		if a, err := s.Approval(ctx, "a2"); err != nil || a.Outcome != "denied" || a.DecidedBy != "owner" {
			t.Errorf("Approval(a2) after migrating from %d = %+v, %v", v, a, err)
		}
	}
	if v >= 3 {
		if n, err := s.Strikes(ctx, "mytool", 2); err != nil || n != 2 {
			t.Errorf("Strikes after migrating from %d = %d, %v", v, n, err)
		}
	}
	if v >= 5 {
		k, err := s.BeginKeyedTurn(ctx, "c2", "tg:77", "keyed", time.Unix(6, 0), 3)
		if err != nil || k.Turn != 0 || k.Previous == nil || k.Previous.Reply != "keyed reply" {
			t.Errorf("BeginKeyedTurn(tg:77) after migrating from %d = %+v, %v", v, k, err)
		}
	}
	if v >= 6 {
		if fs, err := s.Facts(ctx, FactQuery{Query: "when are the plants watered?"}); err != nil || len(fs) != 1 || fs[0].ID != 7 || fs[0].Chat != "c1" {
			t.Errorf("Facts(plants) after migrating from %d = %+v, %v", v, fs, err)
		}
	}
	// 0007 carried the turns' recorded usage into the ledger (turn 1 of
	// fixture 1), whatever the version migrated from.
	want := []UsageRow{{Model: "m", Calls: 1, Input: 10, Output: 20}}
	if v >= 7 {
		want = []UsageRow{{Model: "claude-sonnet-4-5", Calls: 1, Input: 1000, Output: 2000}, want[0]}
		if n, err := s.Ledger().SelfWeight(ctx, time.Unix(0, 0)); err != nil || n != 2 {
			t.Errorf("SelfWeight after migrating from %d = %d, %v; want 2", v, n, err)
		}
		if first, err := s.NoteBudget(ctx, "daily_turns", "1970-01-01", time.Unix(9, 0)); err != nil || first {
			t.Errorf("NoteBudget of a notice sent before migrating from %d = %v, %v; want false", v, first, err)
		}
	}
	if rows, err := s.Ledger().ModelUsage(ctx, time.Unix(0, 0), time.Unix(10, 0)); err != nil || !cmp.Equal(rows, want) {
		t.Errorf("ModelUsage after migrating from %d = %+v, %v; want %+v", v, rows, err, want)
	}
	if v >= 7 {
		// The call of UTC day 3, from 0009's daily sums (the range is
		// days 1 to 10, whole) and from the ledger's rows (a range of two
		// hours around it, no whole day) alike.
		day := int64(24 * time.Hour)
		want := []UsageRow{{Model: "claude-sonnet-4-5", Calls: 1, Input: 300, Output: 400}}
		if v >= 9 {
			want = append(want, UsageRow{Model: "m", Calls: 1, Input: 5, Output: 6})
		}
		for _, r := range [][2]int64{{day, 10 * day}, {3*day - int64(time.Hour), 3*day + int64(time.Hour)}} {
			got, err := s.Ledger().ModelUsage(ctx, time.Unix(0, r[0]), time.Unix(0, r[1]))
			if r[1] < 4*day {
				want = want[:1]
			}
			if err != nil || !cmp.Equal(got, want) {
				t.Errorf("ModelUsage(%d, %d) after migrating from %d = %+v, %v; want %+v", r[0], r[1], v, got, err, want)
			}
		}
	}
	if v >= 8 {
		if sc, err := s.Schedule(ctx, 5); err != nil || sc.When != "every 30m" || sc.Timezone != "Europe/Berlin" || sc.State != ScheduleActive || sc.NextDue.UnixNano() != 9000 {
			t.Errorf("Schedule(5) after migrating from %d = %+v, %v", v, sc, err)
		}
		if in, err := s.Inbox(ctx, true, 10); err != nil || len(in) != 1 || in[0].Text != "the plants are watered" || in[0].Schedule != 5 {
			t.Errorf("Inbox after migrating from %d = %+v, %v", v, in, err)
		}
	}
	if v >= 10 {
		if ss, err := s.Session(ctx, strings.Repeat("0a", 32), time.Unix(0, 11000)); err != nil || ss.CSRF != "csrf10" || ss.Agent != "Firefox" {
			t.Errorf("Session after migrating from %d = %+v, %v", v, ss, err)
		}
	}
}

// TestMigrateStopsWhenBackupFails: a backup that cannot be made stops the
// migration, and the database is left at its version.
func TestMigrateStopsWhenBackupFails(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shelldon.db")
	atVersion(t, path, 1)
	// A directory where the backup goes: the rename into place fails.
	if err := os.MkdirAll(filepath.Join(BackupPath(path, 1), "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(t.Context(), path); err == nil {
		s.Close()
		t.Fatal("Open migrated without a backup")
	} else if !strings.Contains(err.Error(), "back up the database before upgrading its schema from version 1") {
		t.Errorf("error = %v", err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := schemaVersion(t.Context(), db); err != nil || v != 1 {
		t.Errorf("version after a failed backup = %d, %v; want 1", v, err)
	}
	if m, _ := filepath.Glob(path + ".backup-tmp-*"); len(m) != 0 {
		t.Errorf("temporary copies left: %v", m)
	}
}

// TestOpenRefusesAnotherBinarysMigrations: a database whose applied
// migration of some version is not this binary's of that version (two
// branches each added one) is refused, not migrated on top.
func TestOpenRefusesAnotherBinarysMigrations(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shelldon.db")
	atVersion(t, path, 2)
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE schema_migrations SET name = 'something_else' WHERE version = 2`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database with another binary's migration 2")
	}
	if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "0002_something_else") {
		t.Errorf("error = %v", err)
	}
}

// TestPageCacheBounded: every connection's page cache is bounded.
func TestPageCacheBounded(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	var kib int
	if err := s.db.QueryRow(`PRAGMA cache_size`).Scan(&kib); err != nil {
		t.Fatal(err)
	}
	if kib != -cacheKiB {
		t.Errorf("cache_size = %d, want %d (KiB, negative)", kib, -cacheKiB)
	}
}

// TestOpenKeepsABackupInProgress: an Open that finds the schema current
// removes the backups and a crash's old temporary copy, but not a fresh
// one, which another process opening the file at the same moment may be
// writing (TestOpenRace failed that way).
func TestOpenKeepsABackupInProgress(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shelldon.db")
	openAt(t, path).Close()
	old, fresh, backup := path+".backup-tmp-old", path+".backup-tmp-fresh", BackupPath(path, 3)
	for _, p := range []string{old, fresh, backup} {
		if err := os.WriteFile(p, []byte("copy"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	openAt(t, path).Close()
	for p, want := range map[string]bool{old: false, fresh: true, backup: false} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s there = %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
