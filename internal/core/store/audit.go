package store

import (
	"context"
	"database/sql"
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

// AuditQuery selects audit entries. Zero fields select everything.
type AuditQuery struct {
	Limit  int // default DefaultAuditLimit, at most MaxAuditLimit
	Chat   string
	Turn   int64
	Tool   string
	Before int64 // entries with a smaller id only (the next page); 0 means from the newest
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
	if q.Before > 0 {
		where, args = append(where, "id < ?"), append(args, q.Before)
	}
	query := `SELECT id, at, chat, turn, kind, tool, args, summary, ok, duration_ns FROM audit`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY id DESC LIMIT ?"
	args = append(args, limit)

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
