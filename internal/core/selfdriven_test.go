package core_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
)

// at moves a synctest bubble's clock (core.Options.Now) on to t.
func at(t time.Time) { time.Sleep(time.Until(t)) }

// notices collects what core tells the owner about budgets.
type notices struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notices) add(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.msgs = append(n.msgs, msg)
}

func (n *notices) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.msgs...)
}

// priced answers each call with 10 input and 5 output tokens of a model
// the budgets price at $100 and $200 per million: 2000 microdollars a call.
func priced(text string) coretest.Step {
	c := coretest.Completion(text)
	c.Model = "priced-model"
	return func(context.Context, contracts.Request) (contracts.Completion, error) { return c, nil }
}

const callCost = 2000 * budget.Microdollar

func budgetCore(t *testing.T, st *store.Store, m *coretest.Model, b budget.Budgets, told *notices) *core.Core {
	t.Helper()
	if b.Prices == nil {
		b.Prices = budget.NewTable(map[string]budget.Price{"priced-model": {Input: 100 * budget.Dollar, Output: 200 * budget.Dollar}})
	}
	sp := &coretest.Spawner{Build: coretest.Builder(coretest.Echo("echo"))}
	c, err := core.New(core.Options{Store: st, Model: m, Spawner: sp, Workers: 4, Budget: &b, Now: time.Now, // the bubble's clock
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c.OnBudget(told.add)
	return c
}

// TestTurnBudget: self-driven turns are counted by their kind's weight;
// the one that would pass the daily budget is refused with ErrBudgetSpent
// saying which budget and when it resets, the owner is told once (also
// across a restart), a finished keyed run is still replayed, the owner's
// turns run untouched, and the next day the budget is whole again.
func TestTurnBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		path := coretest.StorePath(t)
		at(time.Date(2000, 4, 10, 9, 0, 0, 0, time.UTC))
		b := budget.Budgets{DailyTurns: 3, Weights: map[string]int{"schedule": 1, "digest": 2}}
		m := &coretest.Model{}
		told := &notices{}
		c := budgetCore(t, coretest.Reopen(t, path), m, b, told)

		m.Script(coretest.Reply("one"), coretest.Reply("two"))
		if out, err := c.SendSelf(ctx, "sched", "run-1", "water the plants", "schedule"); err != nil || out.Reply != "one" {
			t.Fatalf("first scheduled turn = %+v, %v", out, err)
		}
		if out, err := c.SendSelf(ctx, "sched", "", "digest", "digest"); err != nil || out.Reply != "two" {
			t.Fatalf("a digest (weight 2) = %+v, %v", out, err)
		}
		// 3 of 3 used: the next one is refused, before the model is asked.
		_, err := c.SendSelf(ctx, "sched", "run-2", "water the plants", "schedule")
		if !errors.Is(err, core.ErrBudgetSpent) || !strings.Contains(err.Error(), "budget.daily_turns") ||
			!strings.Contains(err.Error(), "3 of 3 weighted turns") || !strings.Contains(err.Error(), "resets at 2000-04-11 00:00 UTC") {
			t.Fatalf("the fourth weighted turn = %v; want ErrBudgetSpent naming daily_turns and its reset", err)
		}
		if _, err := c.SendSelf(ctx, "sched", "run-3", "again", "schedule"); !errors.Is(err, core.ErrBudgetSpent) {
			t.Fatalf("again = %v", err)
		}
		if got := told.all(); len(got) != 1 || !strings.Contains(got[0], "self-driven turns (schedules) are stopped") ||
			!strings.Contains(got[0], "budget.daily_turns") {
			t.Errorf("the owner was told %q; want once, naming the budget", got)
		}
		// A refused run left no turn behind: its key runs when the budget allows.
		// A finished run's key is replayed, budget or not.
		if out, err := c.SendSelf(ctx, "sched", "run-1", "water the plants", "schedule"); err != nil || out.Again != core.Replayed || out.Reply != "one" {
			t.Errorf("a finished run again = %+v, %v; want it replayed", out, err)
		}
		// The owner's turns are not counted, and run without a warning.
		m.Script(coretest.Reply("owner"))
		if out, err := c.Send(ctx, "me", "hello", core.Events{}); err != nil || out.Reply != "owner" || out.Warning != "" {
			t.Errorf("the owner's turn = %+v, %v", out, err)
		}
		if n := m.Left(); n != 0 || len(m.Requests()) != 3 {
			t.Errorf("the model was asked %d times (left %d); want 3", len(m.Requests()), n)
		}
		if n, err := coretest.Reopen(t, path).Ledger().SelfWeight(ctx, time.Time{}); err != nil || n != 3 {
			t.Errorf("recorded self-driven weight = %d, %v; want 3", n, err)
		}

		// A restart: still spent, and the owner is not told again.
		told2 := &notices{}
		c2 := budgetCore(t, coretest.Reopen(t, path), m, b, told2)
		if _, err := c2.SendSelf(ctx, "sched", "run-2", "water the plants", "schedule"); !errors.Is(err, core.ErrBudgetSpent) {
			t.Errorf("after a restart = %v; want ErrBudgetSpent", err)
		}
		if got := told2.all(); len(got) != 0 {
			t.Errorf("told again after a restart: %q", got)
		}

		// The next day the budget is whole: the refused run's key runs now.
		at(time.Date(2000, 4, 11, 0, 0, 0, 0, time.UTC))
		m.Script(coretest.Reply("next day"), coretest.Reply("3"), coretest.Reply("4"))
		if out, err := c2.SendSelf(ctx, "sched", "run-2", "water the plants", "schedule"); err != nil || out.Reply != "next day" || out.Again != "" {
			t.Fatalf("the next day = %+v, %v", out, err)
		}
		for _, key := range []string{"d2-a", "d2-b"} {
			if _, err := c2.SendSelf(ctx, "sched", key, "x", "other"); err != nil { // a kind without a weight weighs 1
				t.Fatalf("%s: %v", key, err)
			}
		}
		if _, err := c2.SendSelf(ctx, "sched", "d2-c", "x", "schedule"); !errors.Is(err, core.ErrBudgetSpent) {
			t.Errorf("the fourth of the next day = %v", err)
		}
		if got := told2.all(); len(got) != 1 || !strings.Contains(got[0], "resets at 2000-04-12 00:00 UTC") {
			t.Errorf("the next day's notice: %q; want one, for that day", got)
		}

		// Bad kinds are refused before anything.
		for _, kind := range []string{"", " ", store.OriginOwner} {
			if _, err := c2.SendSelf(ctx, "sched", "k", "x", kind); !errors.Is(err, core.ErrBadInput) {
				t.Errorf("kind %q = %v, want ErrBadInput", kind, err)
			}
		}
	})
}

// TestTurnBudgetAtOnce: self-driven turns that begin at the same moment
// cannot together pass the budget: the gate is asked in the transaction
// that begins each turn.
func TestTurnBudgetAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		at(time.Date(2000, 4, 10, 9, 0, 0, 0, time.UTC))
		m := &coretest.Model{}
		const runs, limit = 8, 3
		for range runs {
			m.Script(coretest.Reply("ran"))
		}
		c := budgetCore(t, coretest.Store(t), m, budget.Budgets{DailyTurns: limit}, &notices{})
		var (
			wg           sync.WaitGroup
			mu           sync.Mutex
			ran, refused int
		)
		for i := range runs {
			wg.Go(func() {
				_, err := c.SendSelf(ctx, "sched", "", "run "+string(rune('a'+i)), "schedule")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ran++
				case errors.Is(err, core.ErrBudgetSpent):
					refused++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if ran != limit || refused != runs-limit {
			t.Errorf("%d ran, %d refused; want %d and %d", ran, refused, limit, runs-limit)
		}
	})
}

// TestMoneyBudget: every model call's usage is priced exactly; when the
// day's money is spent an owner's turn runs with a warning at the head of
// its reply, a self-driven turn is refused and the owner told once; the
// month's budget holds across days; the usage report matches the ledger
// to the picodollar.
func TestMoneyBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		at(time.Date(2000, 4, 30, 22, 0, 0, 0, time.UTC))
		b := budget.Budgets{DailyTurns: 100, DailyUSD: 2 * callCost, MonthlyUSD: 3 * callCost}
		m := &coretest.Model{}
		told := &notices{}
		st := coretest.Store(t)
		c := budgetCore(t, st, m, b, told)

		m.Script(priced("a"), priced("b"), priced("c"))
		for i, want := range []string{"a", "b"} {
			out, err := c.Send(ctx, "me", "hi", core.Events{})
			if err != nil || out.Reply != want || out.Warning != "" {
				t.Fatalf("owner turn %d = %+v, %v", i, out, err)
			}
		}
		// 2 calls: the day's money is spent. The owner's turn runs, warned.
		out, err := c.Send(ctx, "me", "hi", core.Events{})
		if err != nil || !strings.HasSuffix(out.Reply, "\n\nc") || !strings.Contains(out.Warning, "budget.daily_usd") ||
			!strings.HasPrefix(out.Reply, "["+out.Warning+"]") || !strings.Contains(out.Warning, "$0.004 of $0.004 today") {
			t.Fatalf("the owner's turn past the budget = %+v, %v; want it run with a warning", out, err)
		}
		if _, err := c.SendSelf(ctx, "sched", "r1", "x", "schedule"); !errors.Is(err, core.ErrBudgetSpent) || !strings.Contains(err.Error(), "budget.daily_usd") {
			t.Errorf("a self-driven turn past the day's money = %v", err)
		}
		if _, err := c.SendSelf(ctx, "sched", "r2", "x", "schedule"); !errors.Is(err, core.ErrBudgetSpent) {
			t.Errorf("again = %v", err)
		}
		if got := told.all(); len(got) != 1 || !strings.Contains(got[0], "Your own messages still run") {
			t.Errorf("told %q; want once", got)
		}

		// The report, to the picodollar: 3 calls of 10 and 5 tokens.
		rep, err := c.Usage(ctx, c.Budgets(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Total.Calls != 3 || rep.Total.InputTokens != 30 || rep.Total.OutputTokens != 15 || rep.Total.USD != 3*callCost {
			t.Errorf("total = %+v; want 3 calls, 30/15 tokens, %s", rep.Total, 3*callCost)
		}
		if len(rep.Days) != 2 || rep.Days[0].Key != "2000-04-29" || rep.Days[1].Key != "2000-04-30" || rep.Days[1].USD != 3*callCost || rep.Days[0].Calls != 0 {
			t.Errorf("days = %+v", rep.Days)
		}
		if len(rep.Models) != 1 || rep.Models[0].Key != "priced-model" || rep.Models[0].Unpriced ||
			len(rep.Chats) != 1 || rep.Chats[0].Key != "me" || len(rep.Origins) != 1 || rep.Origins[0].Key != store.OriginOwner {
			t.Errorf("models %+v, chats %+v, origins %+v", rep.Models, rep.Chats, rep.Origins)
		}
		if v := rep.Budgets[1]; v.Name != budget.DailyUSD || v.Used != "0.006" || v.Limit != "0.004" || !v.Spent || v.Period != "2000-04-30" {
			t.Errorf("daily_usd = %+v", v)
		}

		// May: a new day and a new month. An unpriced model costs nothing.
		at(time.Date(2000, 5, 1, 0, 0, 0, 0, time.UTC))
		free := coretest.Completion("free")
		free.Model = "llama3.2:1b"
		m.Script(func(context.Context, contracts.Request) (contracts.Completion, error) { return free, nil }, priced("d"))
		if out, err := c.SendSelf(ctx, "sched", "may-1", "x", "schedule"); err != nil || out.Reply != "free" {
			t.Fatalf("the first of May = %+v, %v", out, err)
		}
		if out, err := c.Send(ctx, "me", "hi", core.Events{}); err != nil || out.Warning != "" {
			t.Errorf("the owner's turn on a new day = %+v, %v; want no warning", out, err)
		}
		rep, err = c.Usage(ctx, c.Budgets(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Total.USD != callCost || rep.Total.Calls != 2 {
			t.Errorf("the first of May = %+v", rep.Total)
		}
		for _, l := range rep.Models {
			if l.Key == "llama3.2:1b" && (!l.Unpriced || l.USD != 0) {
				t.Errorf("an unpriced model = %+v", l)
			}
		}
		if len(rep.Origins) != 2 {
			t.Errorf("origins = %+v; want owner and schedule", rep.Origins)
		}
	})
}

// TestMonthlyBudgetAcrossDays: the month's money is the sum of its days,
// in the budgets' zone.
func TestMonthlyBudgetAcrossDays(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		tokyo, err := time.LoadLocation("Asia/Tokyo")
		if err != nil {
			t.Skip("no zone database:", err)
		}
		// 2000-05-31 15:30 UTC is June 1st, 00:30 in Tokyo.
		at(time.Date(2000, 5, 30, 16, 0, 0, 0, time.UTC)) // May 31st in Tokyo
		b := budget.Budgets{DailyTurns: 100, MonthlyUSD: 2 * callCost, Zone: tokyo}
		m := &coretest.Model{}
		told := &notices{}
		c := budgetCore(t, coretest.Store(t), m, b, told)
		m.Script(priced("1"), priced("2"), priced("3"))
		if _, err := c.SendSelf(ctx, "s", "a", "x", "schedule"); err != nil {
			t.Fatal(err)
		}
		at(time.Date(2000, 5, 31, 14, 0, 0, 0, time.UTC)) // still May 31st in Tokyo, a later hour
		if _, err := c.SendSelf(ctx, "s", "b", "x", "schedule"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.SendSelf(ctx, "s", "c", "x", "schedule"); !errors.Is(err, core.ErrBudgetSpent) || !strings.Contains(err.Error(), "budget.monthly_usd") ||
			!strings.Contains(err.Error(), "resets at 2000-06-01 00:00 JST") {
			t.Errorf("past the month's money = %v", err)
		}
		at(time.Date(2000, 5, 31, 15, 30, 0, 0, time.UTC)) // June in Tokyo, May in UTC
		if out, err := c.SendSelf(ctx, "s", "c", "x", "schedule"); err != nil || out.Reply != "3" {
			t.Errorf("a new month in Tokyo = %+v, %v", out, err)
		}
		if got := told.all(); len(got) != 1 {
			t.Errorf("told %q", got)
		}
	})
}
