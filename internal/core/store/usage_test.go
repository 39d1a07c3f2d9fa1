package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestUsageLedger: the ledger sums model calls by chat, origin, provider
// and model, and by model alone, over a half-open range [from, to), to
// the token.
func TestUsageLedger(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t)
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, e := range []UsageEntry{
		{At: day.Add(-time.Nanosecond), Chat: "a", Model: "m1", Input: 1000, Output: 1000}, // the day before
		{At: day, Chat: "a", Turn: 1, Provider: "p", Model: "m1", Input: 10, Output: 1},
		{At: day.Add(time.Hour), Chat: "a", Turn: 1, Provider: "p", Model: "m1", Input: 20, Output: 2},
		{At: day.Add(2 * time.Hour), Chat: "b", Turn: 2, Origin: "schedule", Provider: "p", Model: "m1", Input: 3, Output: 4},
		{At: day.Add(3 * time.Hour), Chat: "b", Turn: 2, Origin: "schedule", Provider: "q", Model: "m2", Input: 5, Output: 6},
		{At: day.Add(24 * time.Hour), Chat: "a", Model: "m1", Input: 1000, Output: 1000}, // the next day
	} {
		if err := s.RecordUsage(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	l := s.Ledger()
	rows, err := l.Usage(ctx, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []UsageRow{
		{Chat: "a", Origin: OriginOwner, Provider: "p", Model: "m1", Calls: 2, Input: 30, Output: 3},
		{Chat: "b", Origin: "schedule", Provider: "p", Model: "m1", Calls: 1, Input: 3, Output: 4},
		{Chat: "b", Origin: "schedule", Provider: "q", Model: "m2", Calls: 1, Input: 5, Output: 6},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Usage (-want +got):\n%s", diff)
	}
	byModel, err := l.ModelUsage(ctx, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]UsageRow{{Model: "m1", Calls: 3, Input: 33, Output: 7}, {Model: "m2", Calls: 1, Input: 5, Output: 6}}, byModel); diff != "" {
		t.Errorf("ModelUsage (-want +got):\n%s", diff)
	}
	if rows, err := l.Usage(ctx, day.Add(48*time.Hour), day.Add(72*time.Hour)); err != nil || len(rows) != 0 {
		t.Errorf("an empty range = %v, %v", rows, err)
	}
	for _, bad := range []UsageEntry{{Chat: "a"}, {At: day, Input: -1}} {
		if err := s.RecordUsage(ctx, bad); err == nil {
			t.Errorf("RecordUsage(%+v) took it", bad)
		}
	}
}

// TestOriginAndAdmit: a turn records its origin and weight; the weights of
// self-driven turns begun since a time are summed, running ones included;
// Admit is asked in the transaction that would begin the turn (not for a
// keyed message whose turn stands), and its refusal writes nothing.
func TestOriginAndAdmit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t)
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	if _, err := s.BeginTurnAs(ctx, "c", "yesterday", day.Add(-time.Second), Origin{Kind: "schedule", Weight: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginTurn(ctx, "c", "the owner's", day); err != nil {
		t.Fatal(err)
	}
	asked := 0
	admit := func(limit int) func(context.Context, Ledger) error {
		return func(ctx context.Context, l Ledger) error {
			asked++
			n, err := l.SelfWeight(ctx, day)
			if err != nil {
				return err
			}
			if n+2 > limit {
				return errSpent
			}
			return nil
		}
	}
	if _, err := s.BeginTurnAs(ctx, "c", "run 1", day.Add(time.Hour), Origin{Kind: "schedule", Weight: 2, Admit: admit(4)}); err != nil {
		t.Fatal(err)
	}
	k, err := s.BeginKeyedTurnAs(ctx, "c", "run-2", "run 2", day.Add(2*time.Hour), 3, Origin{Kind: "digest", Weight: 2, Admit: admit(4)})
	if err != nil || k.Turn == 0 {
		t.Fatalf("run 2 = %+v, %v", k, err)
	}
	if err := s.FinishTurn(ctx, k.Turn, TurnEnd{Status: StatusOK, At: day.Add(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// 4 of 4: refused, keyed or not, and nothing is written.
	if _, err := s.BeginTurnAs(ctx, "c", "run 3", day.Add(4*time.Hour), Origin{Kind: "schedule", Weight: 2, Admit: admit(4)}); !errors.Is(err, errSpent) {
		t.Errorf("past the budget = %v", err)
	}
	if _, err := s.BeginKeyedTurnAs(ctx, "c", "run-3", "run 3", day.Add(4*time.Hour), 3, Origin{Kind: "schedule", Weight: 2, Admit: admit(4)}); !errors.Is(err, errSpent) {
		t.Errorf("past the budget, keyed = %v", err)
	}
	if n, err := s.Ledger().SelfWeight(ctx, day); err != nil || n != 4 {
		t.Errorf("SelfWeight = %d, %v; want 4 (yesterday's and the owner's not counted)", n, err)
	}
	if n, err := s.Ledger().SelfWeight(ctx, time.Time{}); err != nil || n != 9 {
		t.Errorf("SelfWeight since ever = %d, %v; want 9", n, err)
	}
	// A keyed run whose turn finished stands: Admit is not asked.
	before := asked
	k, err = s.BeginKeyedTurnAs(ctx, "c", "run-2", "run 2", day.Add(5*time.Hour), 3, Origin{Kind: "digest", Weight: 2, Admit: admit(0)})
	if err != nil || k.Turn != 0 || k.Previous == nil || asked != before {
		t.Errorf("a finished run again = %+v, %v (asked %d times more)", k, err, asked-before)
	}
	var origin string
	var weight int
	if err := s.db.QueryRowContext(ctx, `SELECT origin, weight FROM turns WHERE input = 'the owner''s'`).Scan(&origin, &weight); err != nil || origin != OriginOwner || weight != 0 {
		t.Errorf("the owner's turn: %q %d %v", origin, weight, err)
	}
}

var errSpent = errors.New("spent")

// TestNoteBudget: a budget's notice is first once per period.
func TestNoteBudget(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t)
	at := time.Unix(100, 0)
	for _, tt := range []struct {
		budget, period string
		first          bool
	}{
		{"daily_usd", "2026-03-14", true},
		{"daily_usd", "2026-03-14", false},
		{"daily_turns", "2026-03-14", true},
		{"daily_usd", "2026-03-15", true},
		{"monthly_usd", "2026-03", true},
		{"monthly_usd", "2026-03", false},
	} {
		if first, err := s.NoteBudget(ctx, tt.budget, tt.period, at); err != nil || first != tt.first {
			t.Errorf("NoteBudget(%s, %s) = %v, %v; want %v", tt.budget, tt.period, first, err, tt.first)
		}
	}
}
