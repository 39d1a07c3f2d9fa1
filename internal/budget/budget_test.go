package budget

import (
	"testing"
	"time"
)

func TestParseUSD(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want Cost
	}{
		{"5", 5 * Dollar}, {"0", 0}, {"0.1", 10 * Cent}, {"$1.10", 110 * Cent}, {".5", 50 * Cent}, {"5.", 5 * Dollar},
		{" 2.25 ", 225 * Cent}, {"0.000001", Microdollar}, {"12.345678", 12*Dollar + 345678*Microdollar}, {"1000000", 1_000_000 * Dollar},
	} {
		if got, err := ParseUSD(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", ".", "$", "-1", "1e3", "1,5", "0.0000001", "1000001", "5 USD", "0x10", "+1", "1.2.3", "99999999999999999999"} {
		if got, err := ParseUSD(in); err == nil {
			t.Errorf("ParseUSD(%q) = %d, want an error", in, got)
		}
	}
}

func TestCostString(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		c    Cost
		want string
	}{
		{0, "$0.00"}, {5 * Dollar, "$5.00"}, {150 * Cent, "$1.50"}, {1234 * Microdollar, "$0.001234"},
		{Microdollar / 2, "$0.000001"}, {Microdollar/2 - 1, "$0.00"}, {12*Dollar + 345678*Microdollar, "$12.345678"},
		{-150 * Cent, "-$1.50"},
	} {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("Cost(%d).String() = %q, want %q", int64(tt.c), got, tt.want)
		}
	}
}

// TestPriceExact: a price times tokens is exact to the picodollar, also
// for prices with six decimals and token counts that make a fraction of a
// microdollar.
func TestPriceExact(t *testing.T) {
	t.Parallel()
	tbl := NewTable(nil)
	for _, tt := range []struct {
		model         string
		input, output int64
		want          Cost // hand-computed
	}{
		// $3/$15 per million: 1234 × 3 + 567 × 15 = 12207 microdollars.
		{"claude-sonnet-4-5-20250929", 1234, 567, 12207 * Microdollar},
		// $0.15/$0.60: 7 × 0.15 + 3 × 0.6 = 2.85 microdollars.
		{"gpt-4o-mini-2024-07-18", 7, 3, 2_850_000},
		// $0.05/$0.40: one input token is 0.05 microdollars.
		{"gpt-5-nano", 1, 0, 50_000},
		// $5/$25, a million of each: $30.
		{"claude-opus-4-6", 1_000_000, 1_000_000, 30 * Dollar},
		// unpriced and local models cost nothing.
		{"llama3.2:1b", 1_000_000, 1_000_000, 0},
		{"", 5, 5, 0},
	} {
		if got := tbl.Cost(tt.model, tt.input, tt.output); got != tt.want {
			t.Errorf("Cost(%s, %d, %d) = %d pico, want %d", tt.model, tt.input, tt.output, got, tt.want)
		}
	}
	// A billion tokens at the dearest shipped price does not overflow.
	if got, want := tbl.Cost("gpt-5-pro", 1e9, 1e9), Cost(135_000)*Dollar; got != want {
		t.Errorf("a billion tokens of gpt-5-pro = %s, want %s", got, want)
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	owner := map[string]Price{"llama3.2": {Input: Microdollar, Output: 2 * Microdollar}, "gpt-4o": {Input: 1 * Dollar, Output: 1 * Dollar}}
	tbl := NewTable(owner)
	for _, tt := range []struct {
		model string
		want  string // the priced id it resolves to, "" none
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5"},
		{"anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"Claude-Opus-4-1-20250805", "claude-opus-4-1"},
		{"claude-opus-4-20250514", "claude-opus-4"},
		{"claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku"},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4.1-mini", "gpt-4.1-mini"},
		{"gpt-5", "gpt-5"},
		{"gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{"o3-mini-high", "o3-mini"},
		{"llama3.2", "llama3.2"},
		{"llama3.2:1b", "llama3.2"},
		{"gpt-5.2", ""},       // "." is no boundary: a new model, not gpt-5
		{"gpt-4omni", ""},     // nor is a letter
		{"claude-sonnet", ""}, // a prefix of a priced id is not it
		{"qwen2.5:0.5b", ""},  // local, unpriced
		{"", ""},
	} {
		got, ok := tbl.Find(tt.model)
		want, wantOK := tbl.prices[tt.want]
		if ok != wantOK || got != want {
			t.Errorf("Find(%q) = %+v, %v; want %q's %+v", tt.model, got, ok, tt.want, want)
		}
	}
	if p, _ := tbl.Find("gpt-4o-2024-08-06"); p.Input != Dollar {
		t.Errorf("the owner's gpt-4o price does not apply to its snapshots: %+v", p)
	}
	if p, _ := NewTable(nil).Find("gpt-4o"); p.Input != 250*Cent {
		t.Errorf("NewTable(nil) kept another table's override: %+v", p)
	}
}

// TestPeriods: a day and a month begin at midnight in the zone, also
// across a change of summer time (a 23-hour day), and a month's end is
// the first of the next.
func TestPeriods(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no zone database:", err)
	}
	b := Budgets{Zone: berlin}
	// 2026-03-28 23:30 UTC is 2026-03-29 00:30 in Berlin (CET), the day
	// summer time begins.
	now := time.Date(2026, 3, 28, 23, 30, 0, 0, time.UTC)
	start, end := b.Day(now)
	if want := time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC); !start.Equal(want) {
		t.Errorf("day start = %v, want %v", start.UTC(), want)
	}
	if end.Sub(start) != 23*time.Hour {
		t.Errorf("the day summer time begins lasts %v", end.Sub(start))
	}
	ms, me := b.Month(now)
	if want := time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC); !ms.Equal(want) {
		t.Errorf("month start = %v, want %v", ms.UTC(), want)
	}
	if want := time.Date(2026, 3, 31, 22, 0, 0, 0, time.UTC); !me.Equal(want) {
		t.Errorf("month end = %v, want %v (CEST)", me.UTC(), want)
	}
	// The same instant is still the 28th in UTC.
	if s, _ := (Budgets{}).Day(now); s.Day() != 28 {
		t.Errorf("UTC day = %v", s)
	}
	st := b.States(Spent{At: now})
	if st[0].Period != "2026-03-29" || st[2].Period != "2026-03" || !st[0].ResetsAt.Equal(end) {
		t.Errorf("states = %+v", st)
	}
}

func TestAdmit(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	b := Budgets{DailyTurns: 10, DailyUSD: 1 * Dollar, MonthlyUSD: 20 * Dollar, Weights: map[string]int{"schedule": 2, "free": 0}}
	for _, tt := range []struct {
		name   string
		spent  Spent
		weight int
		want   string // the spent budget, "" admitted
	}{
		{"fresh", Spent{At: at}, 2, ""},
		{"up to the budget", Spent{Turns: 8, At: at}, 2, ""},
		{"past it", Spent{Turns: 9, At: at}, 2, DailyTurns},
		{"weight 0 at the budget", Spent{Turns: 10, At: at}, 0, ""},
		{"a day's money", Spent{Day: Dollar, Month: Dollar, At: at}, 1, DailyUSD},
		{"just under", Spent{Day: Dollar - Picodollar, Month: Dollar, At: at}, 1, ""},
		{"a month's money", Spent{Day: 0, Month: 20 * Dollar, At: at}, 1, MonthlyUSD},
	} {
		got := b.Admit(tt.spent, tt.weight)
		if name := func() string {
			if got == nil {
				return ""
			}
			return got.Name
		}(); name != tt.want {
			t.Errorf("%s: Admit = %+v, want %q", tt.name, got, tt.want)
		}
	}
	if b.Weight("schedule") != 2 || b.Weight("free") != 0 || b.Weight("other") != DefaultWeight {
		t.Error("weights")
	}
	if st := (Budgets{DailyTurns: 0}).Admit(Spent{At: at}, 0); st == nil || st.Name != DailyTurns {
		t.Errorf("daily_turns 0 admitted a turn: %+v", st)
	}
	// No money limit: never spent.
	if st := (Budgets{DailyTurns: 1}).Admit(Spent{Day: 1000 * Dollar, Month: 1000 * Dollar, At: at}, 1); st != nil {
		t.Errorf("no money limit refused: %+v", st)
	}
	if got := (Budgets{DailyUSD: Dollar}).Money(Spent{Day: 2 * Dollar, At: at}); len(got) != 1 || got[0].Name != DailyUSD {
		t.Errorf("Money = %+v", got)
	}
	st := b.Admit(Spent{Day: 150 * Cent, At: at}, 1)
	if got, want := st.Describe(), "the daily money budget (budget.daily_usd) is spent: $1.50 of $1.00 today; it resets at 2026-05-02 00:00 UTC"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

// TestSpendExact: Spend sums each model's priced usage exactly.
func TestSpendExact(t *testing.T) {
	t.Parallel()
	b := Default()
	got := b.Spend([]Usage{
		{Model: "claude-haiku-4-5", Input: 333, Output: 77}, // 333 × 1 + 77 × 5 = 718 µ$
		{Model: "gpt-4.1-nano", Input: 3, Output: 1},        // 0.3 + 0.4 = 0.7 µ$
		{Model: "local", Input: 1e6, Output: 1e6},           // 0
	})
	if want := 718*Microdollar + 700_000; got != want {
		t.Errorf("Spend = %d pico, want %d", got, want)
	}
}
