package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The tallies below are what the daemon's /metrics counts (core's
// metrics.go). Rows of audit and turns are never deleted and their
// ids only grow (AUTOINCREMENT, one writer at a time: an id is visible
// only after every smaller one is), so a reader counts each row once by
// keeping the highest id it has counted and asking only for the rows past
// it: every query here is a range of the primary key or of an index, and
// after the first, reads only the rows added since. The usage is read
// from its daily sums (usage_daily), whose past days do not change.

// MaxIDs are the highest ids of the append-only tables.
type MaxIDs struct {
	Audit, Turns int64
}

const maxIDsSQL = `SELECT
	(SELECT COALESCE(MAX(id), 0) FROM audit),
	(SELECT COALESCE(MAX(id), 0) FROM turns)`

// MaxIDs returns the highest id of audit and turns (0 for an empty
// table): the bounds of one round of tallies.
func (s *Store) MaxIDs(ctx context.Context) (MaxIDs, error) {
	var m MaxIDs
	err := s.db.QueryRowContext(ctx, maxIDsSQL).Scan(&m.Audit, &m.Turns)
	if err != nil {
		return MaxIDs{}, fmt.Errorf("store: highest ids: %w", err)
	}
	return m, nil
}

// Why a failed tool call failed, as TallyStops tells it from the start
// of its result (the worker's words, worker/risky and
// worker/selftools): a limit of its sandbox stopped it, or the sandbox
// itself failed.
const (
	StopTimeout = "timeout" // the call's time limit
	StopKilled  = "killed"  // a signal: CPU time, memory or processes
	StopDisk    = "disk"    // the workspace's free-space floor
	StopSandbox = "sandbox" // the sandbox failed to start or to report
)

// AuditTally is how many audit rows share a kind, a tool and an outcome
// (and for a decision, on what).
type AuditTally struct {
	Kind string
	Tool string
	OK   bool
	// Request is, for an approval_* row, the kind of the request it is
	// about (KindToolCall, KindPromotion, KindSkill: the request of its
	// turn and tool); "" when none is found.
	Request string
	N       int64
}

// tallyAuditSQL groups the rows of (?, ?] of the kinds listed, through
// audit_kind's ranges; the request of a decision is found through
// approvals_turn.
const tallyAuditSQL = `SELECT kind, tool, ok,
	CASE WHEN kind IN ('approval_approved', 'approval_denied', 'approval_expired') THEN
		COALESCE((SELECT p.kind FROM approvals p WHERE p.turn = audit.turn AND p.tool = audit.tool ORDER BY p.created_at LIMIT 1), '')
	ELSE '' END,
	COUNT(*)
	FROM audit WHERE id > ? AND id <= ? AND kind IN ({kinds})
	GROUP BY 1, 2, 3, 4`

// tallyAuditQuery is tallyAuditSQL for n kinds.
func tallyAuditQuery(n int) string {
	return strings.Replace(tallyAuditSQL, "{kinds}", strings.TrimSuffix(strings.Repeat("?, ", n), ", "), 1)
}

// TallyAudit counts the audit rows of kinds whose ids are in (after, upto].
func (s *Store) TallyAudit(ctx context.Context, after, upto int64, kinds []string) ([]AuditTally, error) {
	if len(kinds) == 0 || upto <= after {
		return nil, nil
	}
	args := []any{after, upto}
	for _, k := range kinds {
		args = append(args, k)
	}
	rows, err := s.db.QueryContext(ctx, tallyAuditQuery(len(kinds)), args...)
	if err != nil {
		return nil, fmt.Errorf("store: tally audit: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []AuditTally
	for rows.Next() {
		var t AuditTally
		if err := rows.Scan(&t.Kind, &t.Tool, &t.OK, &t.Request, &t.N); err != nil {
			return nil, fmt.Errorf("store: tally audit: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: tally audit: %w", err)
	}
	return out, nil
}

// tallyStopsSQL classifies the failed tool calls of (?, ?] by the Stop*
// their result begins with, through audit_failed: only failed rows are
// read (audit_kind would read every tool call of the range).
const tallyStopsSQL = `SELECT
	CASE
		WHEN summary LIKE 'error: timed out after %' OR summary LIKE 'error: it did not finish within %' THEN 'timeout'
		WHEN summary LIKE 'error: killed by %' OR summary LIKE 'error: it was killed by %' THEN 'killed'
		WHEN summary LIKE 'error: stopped after %' THEN 'disk'
		WHEN summary LIKE 'error: sandbox: %' THEN 'sandbox'
		ELSE '' END,
	COUNT(*)
	FROM audit INDEXED BY audit_failed WHERE ok = 0 AND id > ? AND id <= ? AND kind = 'tool_call'
	GROUP BY 1`

// TallyStops counts the failed tool calls whose ids are in (after, upto]
// by the Stop* that ended them; those that no limit stopped are not
// counted.
func (s *Store) TallyStops(ctx context.Context, after, upto int64) (map[string]int64, error) {
	out := map[string]int64{}
	if upto <= after {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, tallyStopsSQL, after, upto)
	if err != nil {
		return nil, fmt.Errorf("store: tally stops: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var (
			stop string
			n    int64
		)
		if err := rows.Scan(&stop, &n); err != nil {
			return nil, fmt.Errorf("store: tally stops: %w", err)
		}
		if stop != "" {
			out[stop] += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: tally stops: %w", err)
	}
	return out, nil
}

// Why a turn failed inside shelldon, as TurnTally.Failure tells it from
// the turn's error (core's words when its worker failed).
const (
	FailWorkerStart  = "worker_start"  // the worker (and its sandbox) did not start
	FailWorkerKilled = "worker_killed" // the worker overran the turn's budget and was killed
	FailWorkerExited = "worker_exited" // the worker died without a result
	FailInterrupted  = "interrupted"   // the daemon stopped during the turn (RecoverRunning)
)

// TurnTally is how many finished turns share an origin, a status and, for
// an error, a Fail* ("" for any other error).
type TurnTally struct {
	Origin  string
	Status  string
	Failure string
	N       int64
}

const runningSQL = `SELECT COALESCE(MIN(id), 0), COUNT(*) FROM turns WHERE status = 'running' AND id > ?`

// Running returns the smallest id past after of a turn still running (0:
// none) and how many such turns there are (turns_running).
func (s *Store) Running(ctx context.Context, after int64) (first, n int64, err error) {
	err = s.db.QueryRowContext(ctx, runningSQL, after).Scan(&first, &n)
	if err != nil {
		return 0, 0, fmt.Errorf("store: running turns: %w", err)
	}
	return first, n, nil
}

const tallyTurnsSQL = `SELECT origin, status,
	CASE WHEN status = 'error' THEN
		CASE
			WHEN error LIKE 'spawn worker: %' OR error LIKE 'send job: %' THEN 'worker_start'
			WHEN error LIKE 'the worker overran %' OR error LIKE 'the worker did not stop %' THEN 'worker_killed'
			WHEN error LIKE 'the worker exited without a result%' THEN 'worker_exited'
			WHEN error = 'interrupted' THEN 'interrupted'
			ELSE '' END
	ELSE '' END,
	COUNT(*)
	FROM turns WHERE id > ? AND id <= ? AND status != 'running'
	GROUP BY 1, 2, 3`

// TallyTurns counts the finished turns whose ids are in (after, upto]; a
// turn still running is not counted. A turn's status, once it is not
// running, never changes.
func (s *Store) TallyTurns(ctx context.Context, after, upto int64) ([]TurnTally, error) {
	if upto <= after {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, tallyTurnsSQL, after, upto)
	if err != nil {
		return nil, fmt.Errorf("store: tally turns: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []TurnTally
	for rows.Next() {
		var t TurnTally
		if err := rows.Scan(&t.Origin, &t.Status, &t.Failure, &t.N); err != nil {
			return nil, fmt.Errorf("store: tally turns: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: tally turns: %w", err)
	}
	return out, nil
}

const tallyDaysSQL = `SELECT day, model, calls, input_tokens, output_tokens FROM usage_daily WHERE day >= ?`

// DayUsage is the model calls of one model on one UTC day (usage_daily).
type DayUsage struct {
	Day int64 // UTC days since 1970
	UsageRow
}

// UsageDay is the UTC day of t as usage_daily numbers it.
func UsageDay(t time.Time) int64 { return nanos(t) / nanosPerDay }

// TallyDays returns the daily sums of the model calls from UTC day from
// on, by model: a range of usage_daily's key. A day's sums change only
// while calls are recorded on it.
func (s *Store) TallyDays(ctx context.Context, from int64) ([]DayUsage, error) {
	rows, err := s.db.QueryContext(ctx, tallyDaysSQL, from)
	if err != nil {
		return nil, fmt.Errorf("store: tally usage: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []DayUsage
	for rows.Next() {
		var d DayUsage
		if err := rows.Scan(&d.Day, &d.Model, &d.Calls, &d.Input, &d.Output); err != nil {
			return nil, fmt.Errorf("store: tally usage: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: tally usage: %w", err)
	}
	return out, nil
}

const pendingSQL = `SELECT COUNT(*) FROM approvals WHERE state = 'pending'`

// PendingApprovals counts the requests waiting for the owner
// (approvals_state).
func (s *Store) PendingApprovals(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, pendingSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: pending approvals: %w", err)
	}
	return n, nil
}
