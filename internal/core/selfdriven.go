package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
)

// ErrBudgetSpent: a self-driven turn was not begun because one of the
// owner's budgets is spent; the error says which and when it resets.
var ErrBudgetSpent = errors.New("budget spent")

// selfDriven is what a Core keeps for its budgets: the owner's budgets in
// force (SetBudgets) and who is told when one is spent (OnBudget).
type selfDriven struct {
	budgets atomic.Pointer[budget.Budgets]
	notify  atomic.Pointer[func(msg string)]
}

// selfTurn is a self-driven turn SendSelf runs: its kind and weight, and
// the gate begin asks in the transaction that begins it. refused is the
// budget the gate found spent.
type selfTurn struct {
	kind    string
	weight  int
	admit   func(ctx context.Context, l store.Ledger) error
	refused *budget.State
}

// origin is how the store records the turn: the owner's for nil.
func (s *selfTurn) origin() store.Origin {
	if s == nil {
		return store.Origin{}
	}
	return store.Origin{Kind: s.kind, Weight: s.weight, Admit: s.admit}
}

// SendSelf runs a self-driven turn (kind names it: "schedule" for a
// scheduled run) with a message key (see SendOnce: a run's key makes it
// run once across restarts; "" runs it without one), after the budget
// gate: ErrBudgetSpent (wrapped, saying which budget and when it resets)
// when a budget is spent; the turn is recorded with its origin and cost
// weight (budget.weights of its kind).
//
// The gate is asked in the transaction that begins the turn, so turns
// beginning at once (in this process or another) cannot both pass it;
// only a turn that would begin is gated: a keyed run whose turn finished
// is replayed whatever the budgets. The first refusal of each budget in
// each period tells the owner (OnBudget) once, across restarts.
func (c *Core) SendSelf(ctx context.Context, chat, key, text, kind string) (Outcome, error) {
	if strings.TrimSpace(kind) == "" || kind == store.OriginOwner {
		return Outcome{}, fmt.Errorf("%w: a self-driven turn needs a kind other than %q", ErrBadInput, store.OriginOwner)
	}
	b := c.Budgets()
	self := &selfTurn{kind: kind, weight: b.Weight(kind)}
	self.admit = func(ctx context.Context, l store.Ledger) error {
		spent, err := spentAt(ctx, l, b, c.now())
		if err != nil {
			return err
		}
		if st := b.Admit(spent, self.weight); st != nil {
			self.refused = st
			return fmt.Errorf("%w: %s", ErrBudgetSpent, st.Describe())
		}
		return nil
	}
	out, err := c.send(ctx, chat, key, text, Events{self: self})
	if st := self.refused; st != nil {
		c.tellOnce(ctx, *st)
		c.log.Info("self-driven turn not begun: a budget is spent", "kind", kind, "chat", chat, "budget", st.Name, "resets_at", st.ResetsAt)
		return Outcome{}, fmt.Errorf("core: %s turn in %q: %w: %s", kind, chat, ErrBudgetSpent, st.Describe())
	}
	return out, err
}

// Budgets returns the owner's budgets in force: the last SetBudgets, else
// Options.Budget, else budget.Default().
func (c *Core) Budgets() budget.Budgets {
	if b := c.self.budgets.Load(); b != nil {
		return *b
	}
	if c.opts.Budget != nil {
		return *c.opts.Budget
	}
	return budget.Default()
}

// SetBudgets applies the owner's budgets from the next turn on (a config
// change).
func (c *Core) SetBudgets(b budget.Budgets) { c.self.budgets.Store(&b) }

// OnBudget sets f to tell the owner that a budget is spent and self-driven
// turns stop: called once per budget and period (budget_notices), from
// the turn that found it spent. nil (the default) only logs it.
func (c *Core) OnBudget(f func(msg string)) { c.self.notify.Store(&f) }

// tellOnce tells the owner that st is spent, if they were not told in its
// period yet.
func (c *Core) tellOnce(ctx context.Context, st budget.State) {
	first, err := c.opts.Store.NoteBudget(context.WithoutCancel(ctx), st.Name, st.Period, c.now())
	if err != nil {
		c.log.Error("record a budget notice", "budget", st.Name, "period", st.Period, "err", err)
		return
	}
	if !first {
		return
	}
	msg := "shelldon: self-driven turns (schedules) are stopped: " + st.Describe() + "."
	if st.Name != budget.DailyTurns {
		msg += " Your own messages still run, each with a warning."
	}
	c.log.Warn("a budget is spent: self-driven turns stop", "budget", st.Name, "period", st.Period, "resets_at", st.ResetsAt)
	if f := c.self.notify.Load(); f != nil && *f != nil {
		(*f)(msg)
	}
}

// budgetWarning is the warning an owner's turn carries when a money
// budget is spent (it runs anyway, bounded by the loop ceiling); "" when
// none is, or when the budgets cannot be read (logged).
func (c *Core) budgetWarning(ctx context.Context) string {
	b := c.Budgets()
	spent, err := spentAt(ctx, c.opts.Store.Ledger(), b, c.now())
	if err != nil {
		c.log.Error("read the budgets", "err", err)
		return ""
	}
	var parts []string
	for _, st := range b.Money(spent) {
		parts = append(parts, st.Describe())
	}
	if len(parts) == 0 {
		return ""
	}
	return "shelldon: " + strings.Join(parts, "; ") + ". This turn runs anyway; self-driven turns are stopped."
}

// warned is out with warning, at the head of its reply too, for a turn
// that ran or was replayed.
func warned(out Outcome, warning string) Outcome {
	if warning == "" || out.Turn == 0 {
		return out
	}
	out.Warning = warning
	out.Reply = "[" + warning + "]\n\n" + out.Reply
	return out
}

// spentAt reads from l what was spent in the day and the month of now, in
// b's zone.
func spentAt(ctx context.Context, l store.Ledger, b budget.Budgets, now time.Time) (budget.Spent, error) {
	dayStart, dayEnd := b.Day(now)
	monthStart, monthEnd := b.Month(now)
	turns, err := l.SelfWeight(ctx, dayStart)
	if err != nil {
		return budget.Spent{}, err
	}
	day, err := l.ModelUsage(ctx, dayStart, dayEnd)
	if err != nil {
		return budget.Spent{}, err
	}
	month, err := l.ModelUsage(ctx, monthStart, monthEnd)
	if err != nil {
		return budget.Spent{}, err
	}
	return budget.Spent{Turns: turns, Day: b.Spend(usageOf(day)), Month: b.Spend(usageOf(month)), At: now}, nil
}

func usageOf(rows []store.UsageRow) []budget.Usage {
	out := make([]budget.Usage, len(rows))
	for i, r := range rows {
		out[i] = budget.Usage{Model: r.Model, Input: r.Input, Output: r.Output}
	}
	return out
}

// meter records a model call's usage in the ledger, with the model that
// answered it: every call counts toward the money budgets, also in a turn
// that fails later.
func (c *Core) meter(ctx context.Context, job contracts.Job, ev Events, comp contracts.Completion) {
	if comp.Usage.InputTokens == 0 && comp.Usage.OutputTokens == 0 {
		return
	}
	err := c.opts.Store.RecordUsage(context.WithoutCancel(ctx), store.UsageEntry{
		At: c.now(), Chat: job.Chat, Turn: job.Turn, Origin: ev.self.origin().Kind,
		Provider: comp.Provider, Model: comp.Model,
		Input: int64(comp.Usage.InputTokens), Output: int64(comp.Usage.OutputTokens),
	})
	if err != nil {
		c.log.Error("record a model call's usage", "turn", job.Turn, "err", err)
	}
}
