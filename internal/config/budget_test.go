package config

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/contracts"
)

// TestBudgetAndSchedulesConfig: budget.* and schedules.* default as
// documented, read money exactly from its text, take maps of weights and
// prices, refuse what is out of range naming the key, and are the owner's:
// the agent's update_config cannot change them.
func TestBudgetAndSchedulesConfig(t *testing.T) {
	t.Parallel()
	env := []string{"ANTHROPIC_API_KEY=" + anthropicKey}

	c := mustLoad(t, nil, env...)
	b := c.Budgets()
	if b.DailyTurns != 50 || b.DailyUSD != 5*budget.Dollar || b.MonthlyUSD != 50*budget.Dollar ||
		!cmp.Equal(b.Weights, map[string]int{"schedule": 1}) || b.Zone != time.Local {
		t.Errorf("default budgets = %+v", b)
	}
	if p, ok := b.Prices.Find("claude-sonnet-4-5-20250929"); !ok || p.Input != 3*budget.Dollar {
		t.Errorf("shipped price of claude-sonnet-4-5-20250929 = %v, %v", p, ok)
	}

	c = mustLoad(t, map[string]string{FileConfig: `
budget:
  daily_turns: 0
  daily_usd: 0.1
  monthly_usd: 12.345678
  weights: {schedule: 3, digest: 0}
  prices:
    my-model: {input: 0.5, output: "1.25"}
    claude-sonnet-4-5: {input: 2, output: 10}
schedules:
  timezone: Europe/Berlin
  quiet_hours: " 22:00-07:30 "
`}, env...)
	b = c.Budgets()
	if b.DailyTurns != 0 || b.DailyUSD != 10*budget.Cent || b.MonthlyUSD != 12*budget.Dollar+345678*budget.Microdollar {
		t.Errorf("budgets = %d, %s, %s", b.DailyTurns, b.DailyUSD, b.MonthlyUSD)
	}
	if !cmp.Equal(b.Weights, map[string]int{"schedule": 3, "digest": 0}) || b.Weight("other") != 1 {
		t.Errorf("weights = %v", b.Weights)
	}
	if p, _ := b.Prices.Find("my-model"); p != (budget.Price{Input: 50 * budget.Cent, Output: 125 * budget.Cent}) {
		t.Errorf("owner's price = %+v", p)
	}
	if p, _ := b.Prices.Find("claude-sonnet-4-5-20250929"); p.Input != 2*budget.Dollar {
		t.Errorf("the owner's price does not override the shipped one under the prefix rule: %+v", p)
	}
	if c.Schedules.QuietHours != "22:00-07:30" || b.Zone.String() != "Europe/Berlin" {
		t.Errorf("schedules = %+v, zone %v", c.Schedules, b.Zone)
	}

	for _, tt := range []struct{ file, key, msg string }{
		{"budget: {daily_turns: -1}\n", "budget.daily_turns", "out of range: must be from 0 to 10000"},
		{"budget: {daily_turns: 10001}\n", "budget.daily_turns", "out of range"},
		{"budget: {daily_usd: -1}\n", "budget.daily_usd", `"-1" is not an amount of dollars`},
		{"budget: {daily_usd: 0.0000001}\n", "budget.daily_usd", "at most six decimals"},
		{"budget: {monthly_usd: lots}\n", "budget.monthly_usd", `"lots" is not an amount of dollars`},
		{"budget: {weights: {schedule: 101}}\n", "budget.weights.schedule", "out of range: must be from 0 to 100"},
		{"budget: {weights: {Owner: 1}}\n", "budget.weights.Owner", "not a kind of self-driven turn"},
		{"budget: {weights: {owner: 1}}\n", "budget.weights.owner", "not a kind of self-driven turn"},
		{"budget: {weights: [1]}\n", "budget.weights", "must be a mapping"},
		{"budget: {prices: {m: {input: 1, outptu: 2}}}\n", "budget.prices.m.outptu", "unknown key"},
		{"budget: {prices: {m: {input: x}}}\n", "budget.prices.m.input", "not an amount of dollars"},
		{"schedules: {timezone: Mars/Olympus}\n", "schedules.timezone", "not a time zone"},
		{"schedules: {quiet_hours: 22-7}\n", "schedules.quiet_hours", "want HH:MM-HH:MM"},
		{"schedules: {quiet_hours: 24:00-07:00}\n", "schedules.quiet_hours", "want HH:MM-HH:MM"},
		{"schedules: {quiet_hours: 07:00-07:00}\n", "schedules.quiet_hours", "starts where it ends"},
	} {
		_, err := Load(newHome(t, map[string]string{FileConfig: tt.file}), env)
		var e *Error
		if !errors.As(err, &e) || e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%q: %v; want %s: %s", tt.file, err, tt.key, tt.msg)
		}
	}

	// The owner's alone: the agent's path refuses them, before the owner
	// is asked and again in the daemon, and writes nothing.
	h := newHome(t, map[string]string{FileConfig: "provider: {kind: anthropic}\n"})
	for _, changes := range []map[string]any{
		{"budget": map[string]any{"daily_turns": 1000}},
		{"budget": map[string]any{"daily_usd": "1000"}},
		{"budget": map[string]any{"monthly_usd": 0}},
		{"budget": map[string]any{"weights": map[string]any{"schedule": 0}}},
		{"budget": map[string]any{"prices": map[string]any{"claude-opus-4-6": map[string]any{"input": 0, "output": 0}}}},
		{"budget.daily_usd": "0"},
		{"schedules": map[string]any{"quiet_hours": ""}},
		{"schedules": map[string]any{"timezone": "UTC"}},
	} {
		err := contracts.CheckAgentConfig(changes)
		if err == nil || !strings.Contains(err.Error(), "not a key the agent may change") {
			t.Errorf("%v: the worker's check: %v", changes, err)
		}
		if _, err := PrepareAgentOverlay(h, env, changes); err == nil {
			t.Errorf("%v: the daemon's path let it through", changes)
		}
		if _, err := os.Stat(filepath.Join(h, FileOverlay)); err == nil {
			t.Fatal("something was written")
		}
	}
	// The owner sets them like any key, and they read back exactly.
	o, err := PrepareOverlay(h, env, map[string]any{"budget": map[string]any{"daily_usd": 2.5, "prices": map[string]any{"x": map[string]any{"input": "0.000001", "output": 3}}}})
	if err != nil {
		t.Fatalf("the owner's change: %v", err)
	}
	if o.After.Budget.DailyUSD != 250*budget.Cent || o.After.Budget.Prices["x"] != (budget.Price{Input: budget.Microdollar, Output: 3 * budget.Dollar}) {
		t.Errorf("the owner's change: %+v", o.After.Budget)
	}
	if err := o.Write(); err != nil {
		t.Fatal(err)
	}
	back, err := Load(h, env)
	if err != nil || back.Budget.DailyUSD != 250*budget.Cent || back.Budget.Prices["x"].Input != budget.Microdollar {
		t.Errorf("read back: %+v, %v", back, err)
	}
}

// TestIsKindName: the hand-written check accepts exactly what the pattern
// ^[a-z][a-z0-9_]{0,31}$ does.
func TestIsKindName(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	for _, k := range []string{
		"", "schedule", "s", "a_b9", "_a", "9a", "Schedule", "sched-ule", "sched ule", "é",
		"a" + strings.Repeat("b", 31), "a" + strings.Repeat("b", 32), "owner", "a\n", "\x00",
	} {
		if got, want := isKindName(k), re.MatchString(k); got != want {
			t.Errorf("isKindName(%q) = %v, want %v", k, got, want)
		}
	}
}
