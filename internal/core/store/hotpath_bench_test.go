package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
)

// BenchmarkTurnStore is the store's part of one turn, step by step, with
// a chat whose history fills agent.history_chars' default (24,000
// characters: 45 turns of a 100-character message and a 500-character
// reply), as BenchmarkServeTurn's conversation does, and a ledger that
// holds a heavy month of use (benchLedger).
func BenchmarkTurnStore(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "shelldon.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	msg := strings.Repeat("m", 100)
	reply := strings.Repeat("r", 500)
	turn := func() int64 {
		id, err := st.BeginTurn(ctx, "bench", msg, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := st.FinishTurn(ctx, id, store.TurnEnd{Status: "ok", Reply: reply, At: time.Now(), Messages: []contracts.Message{
			{Role: contracts.RoleUser, Text: msg}, {Role: contracts.RoleAssistant, Text: reply}}}); err != nil {
			b.Fatal(err)
		}
		return id
	}
	for range 45 {
		turn()
	}
	// The next turn's history, after a turn of its own (not timed): the
	// store holds the turns it read last time (historyCache), and reads the
	// one since. "history-cold" is a handle that holds none.
	b.Run("history", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			turn()
			b.StartTimer()
			if h, err := st.History(ctx, "bench", 24000); err != nil || len(h) < 60 {
				b.Fatal(len(h), err)
			}
		}
	})
	b.Run("history-cold", func(b *testing.B) {
		cpuLoop(b, func() {
			st.ForgetHistory()
			if h, err := st.History(ctx, "bench", 24000); err != nil || len(h) < 60 {
				b.Fatal(len(h), err)
			}
		})
	})
	b.Run("begin-finish", func(b *testing.B) {
		cpuLoop(b, func() {
			turn()
		})
	})
	// A chat whose every message carries a key (a Telegram chat), 1,000
	// messages long before the benchmark adds its own.
	keys := 0 // across the runs of the sub-benchmark: a key begins one turn
	keyed := func() {
		keys++
		k, err := st.BeginKeyedTurn(ctx, "bench-keyed", fmt.Sprint("key-", keys), msg, time.Now(), 3)
		if err != nil || k.Turn == 0 {
			b.Fatal(k, err)
		}
		if err := st.FinishTurn(ctx, k.Turn, store.TurnEnd{Status: "ok", Reply: reply, At: time.Now(), Messages: []contracts.Message{
			{Role: contracts.RoleUser, Text: msg}, {Role: contracts.RoleAssistant, Text: reply}}}); err != nil {
			b.Fatal(err)
		}
	}
	for range 1000 {
		keyed()
	}
	b.Run("begin-keyed-finish", func(b *testing.B) { cpuLoop(b, keyed) })
	b.Run("usage", func(b *testing.B) {
		cpuLoop(b, func() {
			if err := st.RecordUsage(ctx, store.UsageEntry{At: time.Now(), Chat: "bench", Turn: 1, Origin: "owner", Provider: "p", Model: "m", Input: 100, Output: 10}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("audit", func(b *testing.B) {
		cpuLoop(b, func() {
			if _, err := st.AppendAudit(ctx, store.AuditEntry{At: time.Now(), Chat: "bench", Turn: 1, Kind: store.KindToolCall, Tool: "read_file", Args: `{"path":"notes.txt"}`, Summary: "read 120 bytes", OK: true}); err != nil {
				b.Fatal(err)
			}
		})
	})
	// memoryFor's two reads on an empty memory: the relevant facts, then
	// the latest ones.
	b.Run("facts-empty", func(b *testing.B) {
		cpuLoop(b, func() {
			if _, err := st.Facts(ctx, store.FactQuery{Query: "could you remind me what we said about the garden", Limit: 20}); err != nil {
				b.Fatal(err)
			}
			if _, err := st.Facts(ctx, store.FactQuery{Limit: 10}); err != nil {
				b.Fatal(err)
			}
		})
	})

	// The budgets' reads (core's spentAt on every owner's turn) over a
	// ledger of its own, so that the rows "usage" added do not count.
	lg, now := benchLedger(b)
	dayStart, monthStart := now.Truncate(24*time.Hour), time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	b.Run("model-usage-day", func(b *testing.B) {
		cpuLoop(b, func() {
			if r, err := lg.Ledger().ModelUsage(ctx, dayStart, dayStart.Add(24*time.Hour)); err != nil || len(r) == 0 {
				b.Fatal(r, err)
			}
		})
	})
	b.Run("model-usage-month", func(b *testing.B) {
		cpuLoop(b, func() {
			if r, err := lg.Ledger().ModelUsage(ctx, monthStart, monthStart.AddDate(0, 1, 0)); err != nil || len(r) == 0 {
				b.Fatal(r, err)
			}
		})
	})
	// The month in a zone behind UTC: its first UTC day is partial.
	west := time.FixedZone("-0700", -7*3600)
	westStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, west)
	b.Run("model-usage-month-utc-7", func(b *testing.B) {
		cpuLoop(b, func() {
			if r, err := lg.Ledger().ModelUsage(ctx, westStart, westStart.AddDate(0, 1, 0)); err != nil || len(r) == 0 {
				b.Fatal(r, err)
			}
		})
	})
	b.Run("spent", func(b *testing.B) { // SelfWeight, then the day and the month
		cpuLoop(b, func() {
			l := lg.Ledger()
			if _, err := l.SelfWeight(ctx, dayStart); err != nil {
				b.Fatal(err)
			}
			if _, err := l.ModelUsage(ctx, dayStart, dayStart.Add(24*time.Hour)); err != nil {
				b.Fatal(err)
			}
			if _, err := l.ModelUsage(ctx, monthStart, monthStart.AddDate(0, 1, 0)); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// benchLedger opens a store whose ledger holds a heavy month of use:
// ledgerCalls model calls of three models, spread evenly over the 28
// days before now (the 28th of a month), with 300 turns beside them
// (a tenth of them self-driven).
func benchLedger(b *testing.B) (*store.Store, time.Time) {
	const ledgerCalls = 3000
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	now := time.Date(2026, 6, 28, 12, 0, 0, 0, time.UTC)
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	step := now.Sub(start) / ledgerCalls
	models := []string{"claude-sonnet", "claude-haiku", "gpt-mini"}
	for i := range ledgerCalls {
		at := start.Add(time.Duration(i) * step)
		if i%10 == 0 {
			o := store.Origin{}
			if i%100 == 0 {
				o = store.Origin{Kind: "schedule", Weight: 1}
			}
			id, err := st.BeginTurnAs(ctx, "bench", "hello", at, o)
			if err != nil {
				b.Fatal(err)
			}
			if err := st.FinishTurn(ctx, id, store.TurnEnd{Status: "ok", At: at, Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "hello"}}}); err != nil {
				b.Fatal(err)
			}
		}
		if err := st.RecordUsage(ctx, store.UsageEntry{At: at, Chat: "bench", Turn: int64(i/10 + 1), Provider: "p", Model: models[i%len(models)],
			Input: 6000 + int64(i%500), Output: 300 + int64(i%50)}); err != nil {
			b.Fatal(err)
		}
	}
	return st, now
}
