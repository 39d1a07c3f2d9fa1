package core_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

// BenchmarkMetricsCollect is one scrape's collection over a home of a
// realistic size (100k audit rows, 20k turns, 40k model calls over a
// year): "first" is a daemon's first scrape, which reads the history
// once; "next" every scrape after it, with ten new rows of each.
func BenchmarkMetricsCollect(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "shelldon.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	fillHistory(b, db, now, 100_000, 20_000, 40_000)
	opts := core.MetricsOptions{Store: st, Now: func() time.Time { return now }}
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := core.NewMetrics(opts).Metrics(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("next", func(b *testing.B) {
		m := core.NewMetrics(opts)
		if _, err := m.Metrics(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			fillHistory(b, db, now, 10, 10, 10)
			b.StartTimer()
			if _, err := m.Metrics(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// fillHistory writes audit rows (tool calls, a tenth failed, some
// decisions), turns and model calls spread over the year before now.
func fillHistory(b *testing.B, db *sql.DB, now time.Time, audits, turns, usages int) {
	b.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	year := int64(365 * 24 * time.Hour)
	start := now.UnixNano() - year
	tools := []string{"get_time", "read_file", "run_shell", "write_file", "eval", "word_count"}
	exec := func(q string, args ...any) {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			b.Fatal(err)
		}
	}
	for i := range audits {
		kind, summary := "tool_call", "a result of some length: "+strings.Repeat("x", 150)
		switch {
		case i%50 == 1:
			kind = "approval_denied"
		case i%20 == 0:
			summary = "error: timed out after 30s and was killed"
		}
		exec(`INSERT INTO audit (at, chat, turn, kind, tool, args, summary, ok) VALUES (?, 'web', ?, ?, ?, '{"path":"notes.txt"}', ?, ?)`,
			start+int64(i)*(year/int64(audits)), i/5+1, kind, tools[i%len(tools)], summary, i%10 != 0)
	}
	for i := range turns {
		status, errText := "ok", ""
		if i%25 == 0 {
			status, errText = "error", "spawn worker: no"
		}
		at := start + int64(i)*(year/int64(turns))
		exec(`INSERT INTO turns (chat, input, status, started_at, ended_at, reply, error) VALUES ('web', ?, ?, ?, ?, ?, ?)`,
			strings.Repeat("what is the weather like? ", 8), status, at, at+1e9, strings.Repeat("It is sunny. ", 40), errText)
	}
	for i := range usages {
		exec(`INSERT INTO usage (at, chat, turn, provider, model, input_tokens, output_tokens) VALUES (?, 'web', ?, 'anthropic', ?, 1200, 80)`,
			start+int64(i)*(year/int64(usages)), i/2+1, []string{"claude-a", "claude-b"}[i%2])
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
