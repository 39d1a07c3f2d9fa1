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

func (o Origin) admit(ctx context.Context, s *Store, tx *sql.Tx) error {
	if o.Admit == nil {
		return nil
	}
	return o.Admit(ctx, Ledger{s: s, tx: tx})
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
	if err := o.admit(ctx, s, tx); err != nil {
		return fail(err)
	}
	res, err := s.stmt(ctx, tx, hotBeginTurn).ExecContext(ctx,
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

// Ledger reads what was spent: self-driven turns and token usage.
type Ledger struct {
	s  *Store
	tx *sql.Tx // nil: outside any transaction
}

// Ledger reads outside any transaction.
func (s *Store) Ledger() Ledger { return Ledger{s: s} }

// query is the store's db, or tx within a transaction.
func (l Ledger) query() interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
} {
	if l.tx != nil {
		return l.tx
	}
	return l.s.db
}

// SelfWeight sums the weights of the self-driven turns begun at or after
// since (running ones too).
func (l Ledger) SelfWeight(ctx context.Context, since time.Time) (int, error) {
	var n int
	err := l.s.stmt(ctx, l.tx, hotSelfWeight).QueryRowContext(ctx, nanos(since)).Scan(&n)
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
	rows, err := l.query().QueryContext(ctx, `SELECT chat, origin, provider, model, COUNT(*), SUM(input_tokens), SUM(output_tokens)
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
// price table needs. The whole UTC days of the range are read from their
// daily sums (usage_daily, migration 0009), the rest from the ledger's
// rows, so a month costs about what its first and last days do.
func (l Ledger) ModelUsage(ctx context.Context, from, to time.Time) ([]UsageRow, error) {
	lo, hi := nanos(from), nanos(to)
	d0, d1 := wholeDays(lo, hi)
	// The rows of [lo, d0's start) and [d1's start, hi); with no whole
	// day, all of [lo, hi) and nothing.
	headEnd, tailStart := hi, hi
	if d0 < d1 {
		headEnd, tailStart = d0*nanosPerDay, d1*nanosPerDay
	}
	rows, err := l.s.stmt(ctx, l.tx, hotModelUsage).QueryContext(ctx, d0, d1, lo, headEnd, tailStart, hi)
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

// nanosPerDay is the length of usage_daily's day.
const nanosPerDay = int64(24 * time.Hour)

// wholeDays returns the UTC days [d0, d1) that lie whole in [lo, hi), as
// usage_daily numbers them (at / nanosPerDay); d0 == d1 when there is
// none. Day 0 is never one: SQLite's division truncates toward zero, so
// its day 0 holds the times of the day before 1970 too.
func wholeDays(lo, hi int64) (d0, d1 int64) {
	d0 = lo / nanosPerDay
	if lo > 0 && lo%nanosPerDay != 0 {
		d0++
	}
	d0 = max(d0, 1)
	d1 = hi / nanosPerDay
	if d1 <= d0 {
		return 0, 0
	}
	return d0, d1
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
	_, err := s.stmt(ctx, nil, hotRecordUsage).ExecContext(ctx, nanos(e.At), e.Chat, e.Turn, origin, e.Provider, e.Model, e.Input, e.Output)
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
