package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// metricsKinds are the kinds core's metrics tally.
var metricsKinds = []string{KindToolCall, "tool_refused", "approval_approved", "approval_denied", "approval_expired"}

func queryPlan(t testing.TB, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// TestMetricsQueryPlans: each tally reads a range of a primary key or of
// an index, never a whole table, so a scrape after the first reads only
// the rows added since.
func TestMetricsQueryPlans(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	args := []any{int64(5), int64(9)}
	for _, k := range metricsKinds {
		args = append(args, k)
	}
	for _, tc := range []struct {
		name, query string
		args        []any
		want        []string // each in the plan
	}{
		{"max ids", maxIDsSQL, nil, []string{"SEARCH audit", "SEARCH turns"}},
		{"audit", tallyAuditQuery(len(metricsKinds)), args, []string{"SEARCH audit USING INDEX audit_kind (kind=? AND id>? AND id<?)", "SEARCH p USING INDEX approvals_turn (turn=?)"}},
		{"stops", tallyStopsSQL, args[:2], []string{"SEARCH audit USING INDEX audit_failed (id>? AND id<?)"}},
		{"turns", tallyTurnsSQL, args[:2], []string{"SEARCH turns USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"}},
		{"running", runningSQL, args[:1], []string{"INDEX turns_running (status=? AND rowid>?)"}},
		{"usage", tallyDaysSQL, args[:1], []string{"SEARCH usage_daily USING INDEX sqlite_autoindex_usage_daily_1 (day>?)"}},
		{"pending", pendingSQL, nil, []string{"SEARCH approvals USING COVERING INDEX approvals_state (state=?)"}},
	} {
		plan := queryPlan(t, s.db, tc.query, tc.args...)
		t.Logf("%s: %s", tc.name, plan)
		for _, w := range tc.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%s: plan %q lacks %q", tc.name, plan, w)
			}
		}
		for _, step := range strings.Split(plan, "; ") {
			if strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN CONSTANT") {
				t.Errorf("%s: %q walks a whole table", tc.name, step)
			}
		}
	}
}

// TestTallyAuditRanges: the rows of (after, upto] are counted, no others,
// and the stops and requests are told apart.
func TestTallyAuditRanges(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	at := time.Unix(1e9, 0)
	add := func(kind, tool string, turn int64, ok bool, summary string) int64 {
		id, err := s.AppendAudit(ctx, AuditEntry{At: at, Kind: kind, Tool: tool, Turn: turn, OK: ok, Summary: summary})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := add(KindToolCall, "get_time", 1, true, "")
	add(KindToolCall, "run_shell", 1, false, "error: killed by killed\nstdout:\n...")
	add(KindToolCall, "run_shell", 1, false, "error: exit status 1\nstdout:\nerror: killed by me") // the command's words, not a kill
	add(KindToolCall, "run_shell", 1, true, "error: timed out after 1s")                           // ok: no stop
	if err := s.CreateApproval(ctx, Approval{ID: NewApprovalID(), Kind: KindSkill, Chat: "c", Turn: 2, Tool: "git", ArgsHash: "h",
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	last := add("approval_denied", "git", 2, false, "")
	add("tool_strike", "x", 1, false, "") // not asked for

	got, err := s.TallyAudit(ctx, first, last, metricsKinds)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"tool_call/run_shell/false/": 2, "tool_call/run_shell/true/": 1, "approval_denied/git/false/skill": 1}
	have := map[string]int64{}
	for _, r := range got {
		have[fmt.Sprintf("%s/%s/%v/%s", r.Kind, r.Tool, r.OK, r.Request)] += r.N
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("tally = %v, want %v", have, want)
	}
	stops, err := s.TallyStops(ctx, first, last)
	if err != nil || fmt.Sprint(stops) != fmt.Sprint(map[string]int64{StopKilled: 1}) {
		t.Errorf("stops = %v %v, want one kill (the command's own words and an OK call are none)", stops, err)
	}
	if got, err := s.TallyAudit(ctx, last, last, metricsKinds); err != nil || len(got) != 0 {
		t.Errorf("an empty range: %v %v", got, err)
	}
}

// BenchmarkMetricsScrape measures the tallies of one scrape over a store
// of a realistic size: 100k audit rows, 20k turns, 40k usage rows over
// a year. "first" reads them all (a daemon's first scrape); "next" reads
// the 10 rows of each added since, and two days of usage (every scrape
// after).
func BenchmarkMetricsScrape(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "shelldon.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const usages = 40_000
	fill(b, s, 100_000, 20_000, usages)
	top, err := s.MaxIDs(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var day int64
	scrape := func(after MaxIDs) {
		if _, err := s.MaxIDs(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := s.TallyAudit(ctx, after.Audit, top.Audit, metricsKinds); err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.Running(ctx, after.Turns); err != nil {
			b.Fatal(err)
		}
		if _, err := s.TallyTurns(ctx, after.Turns, top.Turns); err != nil {
			b.Fatal(err)
		}
		if _, err := s.TallyStops(ctx, after.Audit, top.Audit); err != nil {
			b.Fatal(err)
		}
		if _, err := s.TallyDays(ctx, day); err != nil {
			b.Fatal(err)
		}
		if _, err := s.PendingApprovals(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		day = 0
		for b.Loop() {
			scrape(MaxIDs{})
		}
	})
	b.Run("next", func(b *testing.B) {
		b.ReportAllocs()
		day = UsageDay(time.Unix(0, int64(usages)*usageEvery)) - 1
		for b.Loop() {
			scrape(MaxIDs{Audit: top.Audit - 10, Turns: top.Turns - 10})
		}
	})
}

// usageEvery spreads fill's usage rows over a year.
const usageEvery = int64(365 * 24 * time.Hour / 40_000)

// fill writes audit rows (mostly tool calls, a tenth failed, some
// decisions), turns and usage rows in one transaction each.
func fill(b testing.TB, s *Store, audits, turns, usages int) {
	b.Helper()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	tools := []string{"get_time", "read_file", "run_shell", "write_file", "eval", "word_count"}
	for i := range audits {
		kind, ok, summary := KindToolCall, i%10 != 0, "a result of some length, as a tool call's summary is: "+strings.Repeat("x", 150)
		switch {
		case i%50 == 1:
			kind = "approval_requested"
		case i%50 == 2:
			kind = "approval_approved"
		case i%20 == 0:
			summary = "error: timed out after 30s and was killed"
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (at, chat, turn, kind, tool, args, summary, ok) VALUES (?, 'web', ?, ?, ?, '{"path":"notes.txt"}', ?, ?)`,
			int64(i)*1e9, i/5+1, kind, tools[i%len(tools)], summary, ok); err != nil {
			b.Fatal(err)
		}
		if kind == "approval_requested" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO approvals (id, kind, chat, turn, tool, args, args_hash, summary, pending, state, created_at, expires_at)
				VALUES (?, 'tool_call', 'web', ?, ?, '{}', 'h', 's', '{}', 'done', ?, ?)`, NewApprovalID(), i/5+1, tools[i%len(tools)], int64(i)*1e9, int64(i+3600)*1e9); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range turns {
		status, errText := StatusOK, ""
		if i%25 == 0 {
			status, errText = StatusError, "spawn worker: no"
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO turns (chat, input, status, started_at, ended_at, reply, error) VALUES ('web', ?, ?, ?, ?, ?, ?)`,
			strings.Repeat("what is the weather like? ", 8), status, int64(i)*1e9, int64(i+1)*1e9, strings.Repeat("It is sunny. ", 40), errText); err != nil {
			b.Fatal(err)
		}
	}
	for i := range usages {
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage (at, chat, turn, provider, model, input_tokens, output_tokens) VALUES (?, 'web', ?, 'anthropic', ?, 1200, 80)`,
			int64(i)*usageEvery, i/2+1, []string{"claude-a", "claude-b"}[i%2]); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
