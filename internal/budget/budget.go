// Package budget holds the owner's spend budgets and the prices they are
// counted in: a daily budget of self-driven turns, each kind of turn
// weighted, and money budgets per day and per month, computed from
// recorded token usage and a price table per model. Amounts are exact
// (Cost, integer picodollars); nothing here reads a clock, a file or the
// store: callers pass the time and the recorded usage in.
//
// Standard library only; the owner's config decodes into its types.
package budget

import (
	"fmt"
	"time"
)

// Budget names, as the config keys say them.
const (
	DailyTurns = "daily_turns"
	DailyUSD   = "daily_usd"
	MonthlyUSD = "monthly_usd"
)

// Shipped values of the owner's budget.* keys.
const (
	DefaultDailyTurns = 50
	DefaultWeight     = 1 // a kind of self-driven turn with no weight of its own
)

// Default money budgets: a personal agent's day and month. Local and
// unpriced models cost nothing and never reach them.
var (
	DefaultDailyUSD   = 5 * Dollar
	DefaultMonthlyUSD = 50 * Dollar
)

// Budgets are the owner's limits (budget.*), applied in Zone's days and
// months.
type Budgets struct {
	// DailyTurns is how many weighted self-driven turns may begin in a
	// day; 0 means none begins, whatever its weight.
	DailyTurns int
	// DailyUSD and MonthlyUSD bound the money spent in a day and in a
	// calendar month, by every turn; 0 means no limit.
	DailyUSD, MonthlyUSD Cost
	// Weights is each kind of self-driven turn's cost weight in turns;
	// a kind without one weighs DefaultWeight.
	Weights map[string]int
	// Prices price the recorded usage.
	Prices *Table
	// Zone is where a day and a month begin; nil is UTC.
	Zone *time.Location
}

// Default is the shipped budgets, in UTC days.
func Default() Budgets {
	return Budgets{DailyTurns: DefaultDailyTurns, DailyUSD: DefaultDailyUSD, MonthlyUSD: DefaultMonthlyUSD,
		Weights: map[string]int{"schedule": 1}, Prices: NewTable(nil)}
}

// Weight is the cost weight of a self-driven turn of kind.
func (b Budgets) Weight(kind string) int {
	if w, ok := b.Weights[kind]; ok {
		return w
	}
	return DefaultWeight
}

func (b Budgets) zone() *time.Location {
	if b.Zone == nil {
		return time.UTC
	}
	return b.Zone
}

// Day is the day now falls in, in Zone: its start and the next day's.
func (b Budgets) Day(now time.Time) (start, end time.Time) {
	t := now.In(b.zone())
	start = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	return start, start.AddDate(0, 0, 1)
}

// Month is the calendar month now falls in, in Zone.
func (b Budgets) Month(now time.Time) (start, end time.Time) {
	t := now.In(b.zone())
	start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location())
	return start, start.AddDate(0, 1, 0)
}

// Usage is recorded token usage of one model.
type Usage struct {
	Model         string
	Input, Output int64
}

// Spend prices usage: the sum over models of each one's tokens at its
// price, exact.
func (b Budgets) Spend(usage []Usage) Cost {
	prices := b.Prices
	if prices == nil {
		prices = NewTable(nil)
	}
	var total Cost
	for _, u := range usage {
		total += prices.Cost(u.Model, u.Input, u.Output)
	}
	return total
}

// Spent is what has been spent, as Check reads it.
type Spent struct {
	Turns      int  // weighted self-driven turns begun today
	Day, Month Cost // money spent today and this month
	At         time.Time
}

// State is one budget's state: used and limit (turns, or picodollars for
// money), and when its period ends.
type State struct {
	Name     string    `json:"name"`
	Used     int64     `json:"used"`
	Limit    int64     `json:"limit"` // 0 for a money budget: no limit
	Spent    bool      `json:"spent"`
	Period   string    `json:"period"` // "2026-03-14" or "2026-03", in Zone
	ResetsAt time.Time `json:"resets_at"`
}

// States are the three budgets' states at s.At.
func (b Budgets) States(s Spent) []State {
	_, dayEnd := b.Day(s.At)
	_, monthEnd := b.Month(s.At)
	day, month := s.At.In(b.zone()).Format(time.DateOnly), s.At.In(b.zone()).Format("2006-01")
	return []State{
		{Name: DailyTurns, Used: int64(s.Turns), Limit: int64(b.DailyTurns), Spent: s.Turns >= b.DailyTurns, Period: day, ResetsAt: dayEnd},
		{Name: DailyUSD, Used: int64(s.Day), Limit: int64(b.DailyUSD), Spent: b.DailyUSD > 0 && s.Day >= b.DailyUSD, Period: day, ResetsAt: dayEnd},
		{Name: MonthlyUSD, Used: int64(s.Month), Limit: int64(b.MonthlyUSD), Spent: b.MonthlyUSD > 0 && s.Month >= b.MonthlyUSD, Period: month, ResetsAt: monthEnd},
	}
}

// Admit decides whether a self-driven turn of weight may begin after s:
// nil, or the first spent budget: its weight would take the day's
// weighted turns past DailyTurns (any turn, when DailyTurns is 0), or a
// money budget is spent.
func (b Budgets) Admit(s Spent, weight int) *State {
	for _, st := range b.States(s) {
		if st.Name == DailyTurns {
			if b.DailyTurns == 0 || s.Turns+weight > b.DailyTurns {
				st.Spent = true
				return &st
			}
			continue
		}
		if st.Spent {
			return &st
		}
	}
	return nil
}

// Money is the owner's money budgets that are spent at s: what an
// owner's turn warns about (it is not counted against the turn budget).
func (b Budgets) Money(s Spent) []State {
	var out []State
	for _, st := range b.States(s) {
		if st.Name != DailyTurns && st.Spent {
			out = append(out, st)
		}
	}
	return out
}

// Describe says what a spent budget is, in the owner's words.
func (st State) Describe() string {
	resets := st.ResetsAt.Format("2006-01-02 15:04 MST")
	switch st.Name {
	case DailyTurns:
		return fmt.Sprintf("the daily budget of self-driven turns (budget.daily_turns) is spent: %d of %d weighted turns today; it resets at %s", st.Used, st.Limit, resets)
	case DailyUSD:
		return fmt.Sprintf("the daily money budget (budget.daily_usd) is spent: %s of %s today; it resets at %s", Cost(st.Used), Cost(st.Limit), resets)
	default:
		return fmt.Sprintf("the monthly money budget (budget.monthly_usd) is spent: %s of %s this month; it resets at %s", Cost(st.Used), Cost(st.Limit), resets)
	}
}
