package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// States of a schedule.
const (
	ScheduleActive  = "active"
	SchedulePaused  = "paused"
	ScheduleRemoved = "removed"
)

// ErrScheduleRemoved: the schedule was removed; it cannot change again.
var ErrScheduleRemoved = errors.New("store: the schedule was removed")

// Schedule is a turn the owner approved to run at set times.
type Schedule struct {
	ID         int64
	When       string // the canonical `when` (package schedule)
	Timezone   string // an IANA zone name, or "Local"
	Prompt     string
	Chat       string // where it was asked for
	CreatedAt  time.Time
	Approval   string // the request the owner approved
	ApprovedBy string
	State      string
	NextDue    time.Time // zero when paused or removed
	LastRunAt  time.Time
	// LastOutcome says how the last run went, in a few words.
	LastOutcome string
}

const scheduleCols = `id, spec, timezone, prompt, chat, created_at, approval, approved_by, state, next_due, last_run_at, last_outcome`

func scanSchedule(row interface{ Scan(...any) error }) (Schedule, error) {
	var (
		sc         Schedule
		created    int64
		next, last sql.NullInt64
	)
	if err := row.Scan(&sc.ID, &sc.When, &sc.Timezone, &sc.Prompt, &sc.Chat, &created, &sc.Approval, &sc.ApprovedBy,
		&sc.State, &next, &last, &sc.LastOutcome); err != nil {
		return Schedule{}, err
	}
	sc.CreatedAt = time.Unix(0, created).UTC()
	sc.NextDue, sc.LastRunAt = fromNanos(next), fromNanos(last)
	return sc, nil
}

// nullTime is t for a nullable column: NULL for the zero time.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return nanos(t)
}

// CreateSchedule stores a new active schedule and returns it with its id.
// An approval makes one schedule: a second call with the same Approval
// returns the first schedule, unchanged.
func (s *Store) CreateSchedule(ctx context.Context, sc Schedule) (Schedule, error) {
	if sc.When == "" || sc.Timezone == "" || strings.TrimSpace(sc.Prompt) == "" || sc.CreatedAt.IsZero() {
		return Schedule{}, fmt.Errorf("store: create schedule: %w: when, timezone, prompt or time", errEmptyArgument)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Schedule{}, fmt.Errorf("store: create schedule: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if sc.Approval != "" {
		old, err := scanSchedule(tx.QueryRowContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE approval = ?`, sc.Approval))
		switch {
		case err == nil:
			return old, nil
		case !errors.Is(err, sql.ErrNoRows):
			return Schedule{}, fmt.Errorf("store: create schedule: %w", err)
		}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO schedules (spec, timezone, prompt, chat, created_at, approval, approved_by, state, next_due)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?)`,
		sc.When, sc.Timezone, sc.Prompt, sc.Chat, nanos(sc.CreatedAt), sc.Approval, sc.ApprovedBy, nullTime(sc.NextDue))
	if err != nil {
		return Schedule{}, fmt.Errorf("store: create schedule: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Schedule{}, fmt.Errorf("store: create schedule: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Schedule{}, fmt.Errorf("store: create schedule: %w", err)
	}
	sc.ID, sc.State = id, ScheduleActive
	return sc, nil
}

// Schedule returns schedule id; ErrNotFound when there is none.
func (s *Store) Schedule(ctx context.Context, id int64) (Schedule, error) {
	sc, err := scanSchedule(s.db.QueryRowContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, err)
	}
	return sc, nil
}

// Schedules lists the schedules by id, the removed ones only when asked.
func (s *Store) Schedules(ctx context.Context, withRemoved bool) ([]Schedule, error) {
	q := `SELECT ` + scheduleCols + ` FROM schedules`
	if !withRemoved {
		q += ` WHERE state != 'removed'`
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list schedules: %w", err)
	}
	defer rows.Close()
	var out []Schedule
	for rows.Next() {
		sc, err := scanSchedule(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list schedules: %w", err)
		}
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list schedules: %w", err)
	}
	return out, nil
}

// SetScheduleState moves schedule id to state with next due next (zero for
// none), and returns it as it is now. A removed schedule stays removed
// (ErrScheduleRemoved); an unknown one is ErrNotFound.
func (s *Store) SetScheduleState(ctx context.Context, id int64, state string, next time.Time) (Schedule, error) {
	switch state {
	case ScheduleActive, SchedulePaused, ScheduleRemoved:
	default:
		return Schedule{}, fmt.Errorf("store: schedule %d: invalid state %q", id, state)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	var cur string
	switch err := tx.QueryRowContext(ctx, `SELECT state FROM schedules WHERE id = ?`, id).Scan(&cur); {
	case errors.Is(err, sql.ErrNoRows):
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, ErrNotFound)
	case err != nil:
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, err)
	case cur == ScheduleRemoved:
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, ErrScheduleRemoved)
	}
	if state != ScheduleActive {
		next = time.Time{}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schedules SET state = ?, next_due = ? WHERE id = ?`, state, nullTime(next), id); err != nil {
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, err)
	}
	sc, err := scanSchedule(tx.QueryRowContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = ?`, id))
	if err != nil {
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Schedule{}, fmt.Errorf("store: schedule %d: %w", id, err)
	}
	return sc, nil
}

// ScheduledRun is the end of one run of a schedule.
type ScheduledRun struct {
	Schedule int64
	Due      time.Time // the next_due the run was for
	At       time.Time // when it ended
	Outcome  string
	Next     time.Time // the run after it
	// Inbox, when set, is what the run said, kept for the owner.
	Inbox *InboxItem
}

// FinishScheduledRun records the end of a run and keeps its inbox item,
// in one transaction. The schedule moves on to r.Next only if it still
// waited for r.Due and is active: a pause or a removal while the run ran
// stands.
func (s *Store) FinishScheduledRun(ctx context.Context, r ScheduledRun) error {
	if r.At.IsZero() || r.Due.IsZero() {
		return fmt.Errorf("store: finish a run of schedule %d: %w: time", r.Schedule, errEmptyArgument)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: finish a run of schedule %d: %w", r.Schedule, err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, `UPDATE schedules SET last_run_at = ?, last_outcome = ?,
		next_due = CASE WHEN state = 'active' AND next_due = ? THEN ? ELSE next_due END
		WHERE id = ?`, nanos(r.At), r.Outcome, nanos(r.Due), nullTime(r.Next), r.Schedule)
	if err != nil {
		return fmt.Errorf("store: finish a run of schedule %d: %w", r.Schedule, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("store: finish a run of schedule %d: %w", r.Schedule, ErrNotFound)
	}
	if it := r.Inbox; it != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO inbox (schedule_id, turn, text, created_at) VALUES (?, ?, ?, ?)`,
			r.Schedule, it.Turn, it.Text, nanos(r.At)); err != nil {
			return fmt.Errorf("store: finish a run of schedule %d: keep its result: %w", r.Schedule, err)
		}
		// The inbox keeps every unread item and the newest read ones.
		if _, err := tx.ExecContext(ctx, `DELETE FROM inbox WHERE read_at IS NOT NULL
			AND id < (SELECT COALESCE(MIN(id), 0) FROM (SELECT id FROM inbox ORDER BY id DESC LIMIT ?))`, InboxKeep); err != nil {
			return fmt.Errorf("store: finish a run of schedule %d: prune the inbox: %w", r.Schedule, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: finish a run of schedule %d: %w", r.Schedule, err)
	}
	return nil
}

// InboxKeep is how many of the newest inbox items are kept once read;
// older read items are dropped as new ones come (the replies stay in the
// schedules' conversations). Unread items are always kept.
const InboxKeep = 200

// InboxItem is what a scheduled run said, kept for the owner.
type InboxItem struct {
	ID        int64
	Schedule  int64
	Turn      int64
	Text      string
	CreatedAt time.Time
	ReadAt    time.Time // zero while unread
}

// Inbox lists the inbox oldest first, at most limit (0: 100) items: the
// oldest unread ones when unreadOnly (so marking read up to the last one
// shown marks only what was shown), else the newest.
func (s *Store) Inbox(ctx context.Context, unreadOnly bool, limit int) ([]InboxItem, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	q := `SELECT * FROM (SELECT id, schedule_id, turn, text, created_at, read_at FROM inbox ORDER BY id DESC LIMIT ?) ORDER BY id`
	if unreadOnly {
		q = `SELECT id, schedule_id, turn, text, created_at, read_at FROM inbox WHERE read_at IS NULL ORDER BY id LIMIT ?`
	}
	rows, err := s.db.QueryContext(ctx, q, limit)
	if err != nil {
		return nil, fmt.Errorf("store: read the inbox: %w", err)
	}
	defer rows.Close()
	var out []InboxItem
	for rows.Next() {
		var (
			it      InboxItem
			created int64
			read    sql.NullInt64
		)
		if err := rows.Scan(&it.ID, &it.Schedule, &it.Turn, &it.Text, &created, &read); err != nil {
			return nil, fmt.Errorf("store: read the inbox: %w", err)
		}
		it.CreatedAt, it.ReadAt = time.Unix(0, created).UTC(), fromNanos(read)
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read the inbox: %w", err)
	}
	return out, nil
}

// MarkInboxRead marks the unread items up to id upTo read at at, and
// returns how many it marked.
func (s *Store) MarkInboxRead(ctx context.Context, upTo int64, at time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE inbox SET read_at = ? WHERE read_at IS NULL AND id <= ?`, nanos(at), upTo)
	if err != nil {
		return 0, fmt.Errorf("store: mark the inbox read: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
