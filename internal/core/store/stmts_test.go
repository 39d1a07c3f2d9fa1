package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// TestHotQueriesWellFormed: every hot query has its text, each once
// (Open prepares them all, so a query that does not compile fails every
// Open).
func TestHotQueriesWellFormed(t *testing.T) {
	t.Parallel()
	seen := map[string]hot{}
	for q, text := range hotSQL {
		if strings.TrimSpace(text) == "" {
			t.Errorf("hot query %d has no text", q)
		}
		if p, dup := seen[text]; dup {
			t.Errorf("hot queries %d and %d are the same text", p, q)
		}
		seen[text] = hot(q)
	}
	s := newStore(t)
	for q, st := range s.hot {
		if st == nil {
			t.Errorf("hot query %d not prepared by Open", q)
		}
	}
}

// TestHotQueryPlans: the hot queries that could read a whole table use
// their index: the keyed turns' partial index (the key bound, and said
// not to be empty), the self-driven turns' partial index (the owner's
// origin in the text), the daily sums.
func TestHotQueryPlans(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for q, want := range map[hot][]string{
		hotKeyedAttempts:   {"turns_key"},
		hotKeyedPrevious:   {"turns_key"},
		hotSelfWeight:      {"turns_self"},
		hotModelUsage:      {"SEARCH usage_daily", "SEARCH usage USING INDEX usage_at"},
		hotHistoryTurns:    {"turns_chat"},
		hotHistoryMessages: {"messages_chat"},
		hotExpireDue:       {"approvals_state"},
	} {
		args := make([]any, strings.Count(hotSQL[q], "?"))
		rows, err := s.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+hotSQL[q], args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "\n")
		for _, w := range want {
			if !strings.Contains(all, w) {
				t.Errorf("plan of hot query %d lacks %q:\n%s", q, w, all)
			}
		}
		if strings.Contains(all, "SCAN turns") || strings.Contains(all, "SCAN usage") {
			t.Errorf("hot query %d reads a whole table:\n%s", q, all)
		}
	}
}

// TestHotStatementsOutliveConnections: with every connection closed as
// soon as it is put back (as the pool does to one idle for
// connMaxIdleTime), each call runs its prepared statement on a new
// connection, in and out of transactions, many at once; Close closes
// them, and a call after it fails rather than panics.
func TestHotStatementsOutliveConnections(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t)
	s.db.SetMaxIdleConns(0)
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	turn := func(chat string, i int) error {
		at := day.Add(time.Duration(i) * time.Minute)
		admitted := false
		o := Origin{Kind: "schedule", Weight: 1, Admit: func(ctx context.Context, l Ledger) error {
			if _, err := l.SelfWeight(ctx, day); err != nil {
				return err
			}
			_, err := l.ModelUsage(ctx, day, day.Add(24*time.Hour))
			admitted = err == nil
			return err
		}}
		k, err := s.BeginKeyedTurnAs(ctx, chat, fmt.Sprint("k", i), "hello", at, 3, o)
		if err != nil {
			return err
		}
		if !admitted {
			return fmt.Errorf("turn %d: not admitted", i)
		}
		if err := s.RecordUsage(ctx, UsageEntry{At: at, Chat: chat, Turn: k.Turn, Model: "m", Input: 10, Output: 1}); err != nil {
			return err
		}
		if _, err := s.AppendAudit(ctx, AuditEntry{At: at, Chat: chat, Turn: k.Turn, Kind: KindToolCall, Tool: "t", OK: true}); err != nil {
			return err
		}
		if _, err := s.Facts(ctx, FactQuery{Query: "hello"}); err != nil {
			return err
		}
		if _, err := s.Facts(ctx, FactQuery{}); err != nil {
			return err
		}
		return s.FinishTurn(ctx, k.Turn, TurnEnd{Status: StatusOK, At: at, Messages: []contracts.Message{
			{Role: contracts.RoleUser, Text: "hello"}, {Role: contracts.RoleAssistant, Text: fmt.Sprint("reply ", i)}}})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*3*2)
	for g := range 2 {
		wg.Go(func() {
			chat := fmt.Sprint("c", g)
			for i := range 3 {
				if err := turn(chat, i); err != nil {
					errs <- err
				}
				if h, err := s.History(ctx, chat, 10000); err != nil || len(h) != 2*(i+1) || h[len(h)-1].Text != fmt.Sprint("reply ", i) {
					errs <- fmt.Errorf("History of %s after turn %d = %v, %v", chat, i, h, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rows, err := s.Ledger().ModelUsage(ctx, day, day.Add(24*time.Hour))
	if err != nil || len(rows) != 1 || rows[0].Calls != 6 || rows[0].Input != 60 {
		t.Errorf("ModelUsage = %+v, %v; want 6 calls, 60 input tokens", rows, err)
	}
	if n, err := s.Ledger().SelfWeight(ctx, day); err != nil || n != 6 {
		t.Errorf("SelfWeight = %d, %v; want 6", n, err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.History(ctx, "c0", 10000); err == nil {
		t.Error("History after Close: no error")
	}
	if _, err := s.BeginTurn(ctx, "c0", "late", day); err == nil {
		t.Error("BeginTurn after Close: no error")
	}
}
