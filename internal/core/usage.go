package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/core/store"
)

// MaxUsageDays bounds the days a usage report covers.
const MaxUsageDays = 366

// UsageReport is what was spent over the last days: tokens and dollars by
// day, model, chat and origin, and the budgets' state now. Days are the
// budgets' zone's; dollars are priced at the prices in force now.
type UsageReport struct {
	Zone    string       `json:"zone"`
	From    time.Time    `json:"from"` // the first day's start
	To      time.Time    `json:"to"`   // the last day's end
	Days    []UsageLine  `json:"days"` // oldest first, every day listed
	Models  []UsageLine  `json:"models"`
	Chats   []UsageLine  `json:"chats"`
	Origins []UsageLine  `json:"origins"` // "owner", or a kind of self-driven turn
	Total   UsageLine    `json:"total"`
	Budgets []BudgetView `json:"budgets"`
}

// UsageLine is the model calls that share a key (a day "2026-03-14", a
// model, a chat or an origin). USD is exact, shown to the microdollar.
type UsageLine struct {
	Key          string      `json:"key"`
	Calls        int64       `json:"calls"`
	InputTokens  int64       `json:"input_tokens"`
	OutputTokens int64       `json:"output_tokens"`
	USD          budget.Cost `json:"usd"`
	// Unpriced, for a model, says it has no price: its tokens cost nothing.
	Unpriced bool `json:"unpriced,omitempty"`
}

func (l *UsageLine) add(r store.UsageRow, cost budget.Cost) {
	l.Calls += r.Calls
	l.InputTokens += r.Input
	l.OutputTokens += r.Output
	l.USD += cost
}

// BudgetView is one budget's state: used and limit in its unit (turns, or
// dollars "1.50"); Limit is "" for a money budget without a limit.
type BudgetView struct {
	Name     string    `json:"name"`
	Unit     string    `json:"unit"` // "turns" or "usd"
	Used     string    `json:"used"`
	Limit    string    `json:"limit"`
	Spent    bool      `json:"spent"`
	Period   string    `json:"period"`
	ResetsAt time.Time `json:"resets_at"`
}

// Usage reports the last days (1 to MaxUsageDays, today included) of
// usage, priced by b, in b's zone, and b's state now.
func (r *Reader) Usage(ctx context.Context, b budget.Budgets, days int) (UsageReport, error) {
	if days < 1 || days > MaxUsageDays {
		return UsageReport{}, fmt.Errorf("%w: days must be from 1 to %d", ErrBadInput, MaxUsageDays)
	}
	if b.Prices == nil {
		b.Prices = budget.NewTable(nil)
	}
	now := r.now()
	l := r.st.Ledger()
	today, _ := b.Day(now)
	rep := UsageReport{Zone: today.Location().String(), Total: UsageLine{Key: "total"}}
	models, chats, origins := map[string]*UsageLine{}, map[string]*UsageLine{}, map[string]*UsageLine{}
	line := func(m map[string]*UsageLine, key string) *UsageLine {
		if m[key] == nil {
			m[key] = &UsageLine{Key: key}
		}
		return m[key]
	}
	for i := days - 1; i >= 0; i-- {
		start, end := b.Day(today.AddDate(0, 0, -i).Add(12 * time.Hour)) // noon: clear of a summer-time hour
		if i == days-1 {
			rep.From = start
		}
		rep.To = end
		rows, err := l.Usage(ctx, start, end)
		if err != nil {
			return UsageReport{}, fmt.Errorf("core: usage: %w", err)
		}
		day := UsageLine{Key: start.Format(time.DateOnly)}
		for _, row := range rows {
			cost := b.Prices.Cost(row.Model, row.Input, row.Output)
			day.add(row, cost)
			rep.Total.add(row, cost)
			line(models, row.Model).add(row, cost)
			line(chats, row.Chat).add(row, cost)
			line(origins, row.Origin).add(row, cost)
		}
		rep.Days = append(rep.Days, day)
	}
	for k, m := range models {
		_, priced := b.Prices.Find(k)
		m.Unpriced = !priced
	}
	rep.Models, rep.Chats, rep.Origins = sortedLines(models), sortedLines(chats), sortedLines(origins)
	spent, err := spentAt(ctx, l, b, now)
	if err != nil {
		return UsageReport{}, fmt.Errorf("core: usage: %w", err)
	}
	for _, st := range b.States(spent) {
		v := BudgetView{Name: st.Name, Unit: "usd", Spent: st.Spent, Period: st.Period, ResetsAt: st.ResetsAt}
		if st.Name == budget.DailyTurns {
			v.Unit, v.Used, v.Limit = "turns", strconv.FormatInt(st.Used, 10), strconv.FormatInt(st.Limit, 10)
		} else {
			v.Used = usd(budget.Cost(st.Used))
			if st.Limit > 0 {
				v.Limit = usd(budget.Cost(st.Limit))
			}
		}
		rep.Budgets = append(rep.Budgets, v)
	}
	return rep, nil
}

// sortedLines lists the lines, the dearest first, then by key.
func sortedLines(m map[string]*UsageLine) []UsageLine {
	out := make([]UsageLine, 0, len(m))
	for _, l := range m {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b UsageLine) int {
		if a.USD != b.USD {
			if a.USD > b.USD {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

func usd(c budget.Cost) string { return strings.TrimPrefix(c.String(), "$") }

// UsageReport is Usage with the budgets in force.
func (c *Core) UsageReport(ctx context.Context, days int) (UsageReport, error) {
	return c.Usage(ctx, c.Budgets(), days)
}
