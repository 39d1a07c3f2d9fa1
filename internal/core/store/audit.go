package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kinds of audit entry and of approval request: a tool call is both; a
// promotion is a request to make a self-coded tool version live, a skill
// one to make a skill the agent drafted live.
const (
	KindToolCall  = "tool_call"
	KindPromotion = "promotion"
	KindSkill     = "skill"
)

// AuditEntry is one line of the audit log. Args must already be redacted.
type AuditEntry struct {
	ID       int64 // set by the store
	At       time.Time
	Chat     string
	Turn     int64 // 0: not part of a turn
	Kind     string
	Tool     string
	Args     string
	Summary  string
	OK       bool
	Duration time.Duration
}

// AuditKinds lists every kind of entry shelldon writes to the audit
// trail, grouped, for a filter to offer (a new slice each call).
// TestAuditKindsAreWritten checks it against the code that writes them.
func AuditKinds() []string {
	return []string{
		KindToolCall, "tool_refused",
		"approval_requested", "approval_approved", "approval_denied", "approval_expired", "approval_executed",
		"tool_proposed", "tool_promoted", "tool_denied", "tool_strike", "tool_quarantined",
		"tool_restored", "tool_rolled_back", "tool_removed", "tool_recovered",
		"skill_drafted", "skill_rolled_back", "skill_removed",
		"schedule_created", "schedule_paused", "schedule_resumed", "schedule_removed",
		KindMemoryStored, KindMemoryEdited, KindMemoryForgotten,
		"config_changed",
	}
}

// Outcomes AuditQuery.Outcome selects: the entries recorded as OK, or
// those that are not (a failed call, a denial, an expiry, a strike).
const (
	OutcomeOK     = "ok"
	OutcomeFailed = "failed"
)

// maxAuditKind bounds AuditQuery.Kind, in bytes.
const maxAuditKind = 64

// ValidAuditKind reports whether s can be a kind of audit entry: 1 to 64
// lowercase ASCII letters, digits, '_', '.' and '-'.
func ValidAuditKind(s string) bool {
	if s == "" || len(s) > maxAuditKind {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// ErrBadAuditQuery is returned for a query whose Kind or Outcome cannot
// be one.
var ErrBadAuditQuery = errors.New("bad audit query")

// AuditQuery selects audit entries. Zero fields select everything.
type AuditQuery struct {
	Limit   int // default DefaultAuditLimit, at most MaxAuditLimit
	Chat    string
	Turn    int64
	Tool    string
	Kind    string // exactly this kind (AuditKinds; ValidAuditKind holds)
	Outcome string // OutcomeOK or OutcomeFailed; "" both
	Before  int64  // entries with a smaller id only (the next page); 0 means from the newest
}

// Check says what is wrong with q's Kind or Outcome, if anything.
func (q AuditQuery) Check() error {
	if q.Kind != "" && !ValidAuditKind(q.Kind) {
		return fmt.Errorf("%w: a kind is 1-64 lowercase letters, digits or _.-", ErrBadAuditQuery)
	}
	switch q.Outcome {
	case "", OutcomeOK, OutcomeFailed:
		return nil
	}
	return fmt.Errorf("%w: the outcome is %q or %q", ErrBadAuditQuery, OutcomeOK, OutcomeFailed)
}

// Bounds of AuditQuery.Limit.
const (
	DefaultAuditLimit = 50
	MaxAuditLimit     = 1000
)

// AppendAudit adds an entry to the audit log and returns its id.
func (s *Store) AppendAudit(ctx context.Context, e AuditEntry) (int64, error) {
	if e.Kind == "" {
		return 0, fmt.Errorf("store: append audit: %w: kind", errEmptyArgument)
	}
	if e.At.IsZero() {
		return 0, fmt.Errorf("store: append audit: %w: time", errEmptyArgument)
	}
	res, err := s.stmt(ctx, nil, hotAppendAudit).ExecContext(ctx,
		nanos(e.At), e.Chat, e.Turn, e.Kind, e.Tool, e.Args, e.Summary, e.OK, int64(e.Duration))
	if err != nil {
		return 0, fmt.Errorf("store: append audit: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("store: append audit: %w", err)
	}
	return id, nil
}

// Audit returns the entries q selects, newest first.
func (s *Store) Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	query, args, err := auditSQL(q)
	if err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []AuditEntry
	for rows.Next() {
		var (
			e   AuditEntry
			at  sql.NullInt64
			dur int64
		)
		if err := rows.Scan(&e.ID, &at, &e.Chat, &e.Turn, &e.Kind, &e.Tool, &e.Args, &e.Summary, &e.OK, &dur); err != nil {
			return nil, fmt.Errorf("store: audit: %w", err)
		}
		e.At, e.Duration = fromNanos(at), time.Duration(dur)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	return out, nil
}

// auditSQL is the query that selects q, and its arguments. Each filter
// has an index that keeps a page a range search, however rare the value
// (migrations 0001 and 0011; TestAuditQueryPlans): chat and turn (chat,
// id) and (turn, id), kind (kind, id), a failure the partial index of
// failures, which is why the outcome is written into the SQL rather than
// bound. An entry that is OK is most of the trail: the newest are found
// by walking back from the newest id.
func auditSQL(q AuditQuery) (string, []any, error) {
	if err := q.Check(); err != nil {
		return "", nil, err
	}
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = DefaultAuditLimit
	case limit > MaxAuditLimit:
		limit = MaxAuditLimit
	}
	var (
		where []string
		args  []any
	)
	if q.Chat != "" {
		where, args = append(where, "chat = ?"), append(args, q.Chat)
	}
	if q.Turn != 0 {
		where, args = append(where, "turn = ?"), append(args, q.Turn)
	}
	if q.Tool != "" {
		where, args = append(where, "tool = ?"), append(args, q.Tool)
	}
	if q.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, q.Kind)
	}
	switch q.Outcome {
	case OutcomeOK:
		where = append(where, "ok = 1")
	case OutcomeFailed:
		where = append(where, "ok = 0")
	}
	if q.Before > 0 {
		where, args = append(where, "id < ?"), append(args, q.Before)
	}
	query := `SELECT id, at, chat, turn, kind, tool, args, summary, ok, duration_ns FROM audit`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY id DESC LIMIT ?"
	return query, append(args, limit), nil
}
