package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// OriginOwner is the origin of a turn the owner began: a message or a
// decision. A self-driven turn's origin is its kind ("schedule").
const OriginOwner = "owner"

// Origin is who began a turn, and what it weighs against the daily budget
// of self-driven turns.
type Origin struct {
	// Kind is OriginOwner ("" reads as it) or the kind of self-driven turn.
	Kind string
	// Weight is the turn's cost weight; 0 for the owner's.
	Weight int
	// Admit, when set, decides whether the turn may begin: it is called
	// inside the transaction that would begin it (only when one would: a
	// keyed message whose turn stands begins none), reading through l in
	// that transaction, which holds the database's write lock, so no other
	// turn can begin between its reading and the insert. An error refuses
	// the turn: nothing is written and the error is returned wrapped.
	Admit func(ctx context.Context, l Ledger) error
}

func (o Origin) kind() string {
	if o.Kind == "" {
		return OriginOwner
	}
	return o.Kind
}

func (o Origin) admit(ctx context.Context, tx *sql.Tx) error {
	if o.Admit == nil {
		return nil
	}
	return o.Admit(ctx, Ledger{q: tx})
}

// BeginTurnAs is BeginTurn for a turn of origin o.
func (s *Store) BeginTurnAs(ctx context.Context, chat, input string, at time.Time, o Origin) (int64, error) {
	if chat == "" {
		return 0, fmt.Errorf("store: begin turn: %w: chat", errEmptyArgument)
	}
	if at.IsZero() {
		return 0, fmt.Errorf("store: begin turn: %w: time", errEmptyArgument)
	}
	fail := func(err error) (int64, error) { return 0, fmt.Errorf("store: begin turn in %q: %w", chat, err) }
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := o.admit(ctx, tx); err != nil {
		return fail(err)
	}
	res, err := tx.ExecContext(ctx,
		`INSERT INTO turns (chat, input, status, started_at, owner, pid, origin, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		chat, input, StatusRunning, nanos(at), s.owner, s.pid, o.kind(), o.Weight)
	if err != nil {
		return fail(err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return id, nil
}

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Ledger reads what was spent: self-driven turns and token usage.
type Ledger struct{ q queryer }

// Ledger reads outside any transaction.
func (s *Store) Ledger() Ledger { return Ledger{q: s.db} }

// SelfWeight sums the weights of the self-driven turns begun at or after
// since (running ones too).
func (l Ledger) SelfWeight(ctx context.Context, since time.Time) (int, error) {
	var n int
	err := l.q.QueryRowContext(ctx, `SELECT COALESCE(SUM(weight), 0) FROM turns WHERE origin != ? AND started_at >= ?`,
		OriginOwner, nanos(since)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: self-driven turns since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	return n, nil
}

// UsageRow is the token usage of model calls that share a chat, an
// origin, a provider and a model.
type UsageRow struct {
	Chat     string `json:"chat"`
	Origin   string `json:"origin"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Calls    int64  `json:"calls"`
	Input    int64  `json:"input_tokens"`
	Output   int64  `json:"output_tokens"`
}

// Usage sums the model calls made in [from, to) by chat, origin, provider
// and model, in that order.
func (l Ledger) Usage(ctx context.Context, from, to time.Time) ([]UsageRow, error) {
	rows, err := l.q.QueryContext(ctx, `SELECT chat, origin, provider, model, COUNT(*), SUM(input_tokens), SUM(output_tokens)
		FROM usage WHERE at >= ? AND at < ? GROUP BY chat, origin, provider, model ORDER BY chat, origin, provider, model`,
		nanos(from), nanos(to))
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []UsageRow
	for rows.Next() {
		var r UsageRow
		if err := rows.Scan(&r.Chat, &r.Origin, &r.Provider, &r.Model, &r.Calls, &r.Input, &r.Output); err != nil {
			return nil, fmt.Errorf("store: usage: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	return out, nil
}

// ModelUsage sums the model calls made in [from, to) by model: what a
// price table needs.
func (l Ledger) ModelUsage(ctx context.Context, from, to time.Time) ([]UsageRow, error) {
	rows, err := l.q.QueryContext(ctx, `SELECT model, COUNT(*), SUM(input_tokens), SUM(output_tokens)
		FROM usage WHERE at >= ? AND at < ? GROUP BY model ORDER BY model`, nanos(from), nanos(to))
	if err != nil {
		return nil, fmt.Errorf("store: usage by model: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []UsageRow
	for rows.Next() {
		var r UsageRow
		if err := rows.Scan(&r.Model, &r.Calls, &r.Input, &r.Output); err != nil {
			return nil, fmt.Errorf("store: usage by model: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage by model: %w", err)
	}
	return out, nil
}

// UsageEntry is one model call's usage.
type UsageEntry struct {
	At       time.Time
	Chat     string
	Turn     int64
	Origin   string // OriginOwner when ""
	Provider string
	Model    string
	Input    int64
	Output   int64
}

// RecordUsage adds a model call's usage to the ledger.
func (s *Store) RecordUsage(ctx context.Context, e UsageEntry) error {
	if e.At.IsZero() {
		return fmt.Errorf("store: record usage: %w: time", errEmptyArgument)
	}
	if e.Input < 0 || e.Output < 0 {
		return fmt.Errorf("store: record usage of turn %d: negative tokens (%d, %d)", e.Turn, e.Input, e.Output)
	}
	origin := e.Origin
	if origin == "" {
		origin = OriginOwner
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO usage (at, chat, turn, origin, provider, model, input_tokens, output_tokens)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, nanos(e.At), e.Chat, e.Turn, origin, e.Provider, e.Model, e.Input, e.Output)
	if err != nil {
		return fmt.Errorf("store: record usage of turn %d: %w", e.Turn, err)
	}
	return nil
}

// NoteBudget records that the owner is told budget is spent in period,
// and reports whether this is the first time: the owner is told once per
// budget and period, across restarts.
func (s *Store) NoteBudget(ctx context.Context, budget, period string, at time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO budget_notices (budget, period, at) VALUES (?, ?, ?)`,
		budget, period, nanos(at))
	if err != nil {
		return false, fmt.Errorf("store: note budget %s %s: %w", budget, period, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: note budget %s %s: %w", budget, period, err)
	}
	return n == 1, nil
}
