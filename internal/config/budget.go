package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/lazy"
)

// BudgetConfig is the owner's spend budgets (budget.*): the owner's alone,
// never the agent's to change (contracts.AgentConfigKeys lacks them).
// Days and months are schedules.timezone's.
type BudgetConfig struct {
	// DailyTurns is how many weighted self-driven turns (schedules) may
	// begin in a day; default 50, 0 to 10000; 0 means none.
	DailyTurns int `yaml:"daily_turns"`
	// DailyUSD and MonthlyUSD bound the money every turn spends in a day
	// and in a calendar month, priced from the recorded token usage; a
	// spent one stops self-driven turns, and the owner's turns run with a
	// warning. Default 5 and 50; 0 means no limit. Dollars, at most six
	// decimals ("2.50").
	DailyUSD   budget.Cost `yaml:"daily_usd"`
	MonthlyUSD budget.Cost `yaml:"monthly_usd"`
	// Weights is each kind of self-driven turn's cost in turns, 0 to 100;
	// default {schedule: 1}; a kind not listed weighs 1.
	Weights map[string]int `yaml:"weights"`
	// Prices overrides or adds model prices, USD per million tokens:
	// {model: {input: X, output: Y}}; a model without a price (a local
	// one) costs nothing.
	Prices map[string]budget.Price `yaml:"prices"`
}

// SchedulesConfig is when self-driven turns may run (schedules.*): the
// owner's alone.
type SchedulesConfig struct {
	// Timezone is an IANA zone name ("Europe/Berlin") for schedules and for
	// the budgets' days and months; default "" is the system's local zone.
	Timezone string `yaml:"timezone"`
	// QuietHours is a daily window, "HH:MM-HH:MM" (may wrap midnight,
	// "22:00-07:00"), in which no scheduled turn starts; default "" none.
	QuietHours string `yaml:"quiet_hours"`
}

const (
	defaultDailyTurns = budget.DefaultDailyTurns
	maxDailyTurns     = 10000
	maxWeight         = 100
)

// isKindName reports whether k is a kind of self-driven turn's name: a
// lowercase letter, then up to 31 lowercase letters, digits and _. It is
// checked by hand, not by a regexp: every config's default weights hold a
// kind, so a regexp would be compiled at every start.
func isKindName(k string) bool {
	if len(k) == 0 || len(k) > 32 || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for _, c := range []byte(k[1:]) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// quietHoursRe is compiled on first use, not at package init: a daemon
// whose config has no quiet hours never compiles it (package lazy).
var quietHoursRe lazy.Value[*regexp.Regexp]

func quietHours() *regexp.Regexp {
	return quietHoursRe.Get(func() *regexp.Regexp {
		return regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-3]):([0-5][0-9])$`)
	})
}

// completeBudget applies budget.* and schedules.* defaults and validates
// them.
func (c *Config) completeBudget() []*Error {
	var errs []*Error
	add := func(e *Error) {
		if e != nil {
			errs = append(errs, e)
		}
	}
	b := &c.Budget
	add(c.intIn("budget.daily_turns", &b.DailyTurns, defaultDailyTurns, 0, maxDailyTurns))
	if b.DailyUSD == 0 && !c.set("budget.daily_usd") {
		b.DailyUSD = budget.DefaultDailyUSD
	}
	if b.MonthlyUSD == 0 && !c.set("budget.monthly_usd") {
		b.MonthlyUSD = budget.DefaultMonthlyUSD
	}
	if b.Weights == nil && !c.set("budget.weights") {
		b.Weights = map[string]int{"schedule": 1}
	}
	for _, k := range slices.Sorted(maps.Keys(b.Weights)) {
		key := "budget.weights." + k
		switch w := b.Weights[k]; {
		case !isKindName(k) || k == "owner":
			add(c.errAt(key, "%s is not a kind of self-driven turn (lowercase letters, digits and _, like schedule)", c.show(k)))
		case w < 0 || w > maxWeight:
			add(c.errAt(key, "%d is out of range: must be from 0 to %d", w, maxWeight))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b.Prices)) {
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t\n") {
			add(c.errAt("budget.prices."+k, "%s is not a model id (as the provider spells it, like claude-sonnet-4-5)", c.show(k)))
		}
	}

	s := &c.Schedules
	s.Timezone = strings.TrimSpace(s.Timezone)
	if s.Timezone != "" {
		if _, err := time.LoadLocation(s.Timezone); err != nil {
			add(c.errAt("schedules.timezone", "%s is not a time zone this system knows (an IANA name like Europe/Berlin or UTC)", c.show(s.Timezone)))
		}
	}
	s.QuietHours = strings.TrimSpace(s.QuietHours)
	if s.QuietHours != "" {
		m := quietHours().FindStringSubmatch(s.QuietHours)
		switch {
		case m == nil:
			add(c.errAt("schedules.quiet_hours", "%s is not a window of hours: want HH:MM-HH:MM, like 22:00-07:00", c.show(s.QuietHours)))
		case m[1] == m[3] && m[2] == m[4]:
			add(c.errAt("schedules.quiet_hours", "%s starts where it ends; leave it empty for no quiet hours", c.show(s.QuietHours)))
		}
	}
	return errs
}

// Location is schedules.timezone's zone: the system's local zone for "".
func (c *Config) Location() *time.Location {
	if c.Schedules.Timezone == "" {
		return time.Local
	}
	loc, err := time.LoadLocation(c.Schedules.Timezone)
	if err != nil {
		return time.Local // validated at load; the zone database changed since
	}
	return loc
}

// Budgets is the owner's budgets as core applies them, in Location's days
// and months.
func (c *Config) Budgets() budget.Budgets {
	weights := make(map[string]int, len(c.Budget.Weights))
	for k, w := range c.Budget.Weights {
		weights[k] = w
	}
	return budget.Budgets{
		DailyTurns: c.Budget.DailyTurns, DailyUSD: c.Budget.DailyUSD, MonthlyUSD: c.Budget.MonthlyUSD,
		Weights: weights, Prices: budget.NewTable(c.Budget.Prices), Zone: c.Location(),
	}
}

// budgetKeysDoc is the template's budget and schedules sections.
func budgetKeysDoc() string {
	return fmt.Sprintf(budgetTemplate, defaultDailyTurns, strings.TrimPrefix(budget.DefaultDailyUSD.String(), "$"),
		strings.TrimPrefix(budget.DefaultMonthlyUSD.String(), "$"))
}

const budgetTemplate = `
# Spend budgets: yours alone (the agent cannot change them). Days and months
# are schedules.timezone's. Worst case, self-driven turns spend
# daily_turns x agent.max_tool_calls model calls a day.
budget:
  # Self-driven turns (schedules) that may begin in a day, each weighing its
  # kind's weight below, 0 to 10000; 0: none runs.
  #daily_turns: %d
  # Money every turn may spend in a day and in a calendar month, in dollars,
  # priced from the tokens the providers report; 0: no limit. When one is
  # spent, self-driven turns stop (you are told once) and your own turns
  # still run, with a warning.
  #daily_usd: %s
  #monthly_usd: %s
  # The cost, in turns, of each kind of self-driven turn, 0 to 100; a kind
  # not listed weighs 1.
  #weights: {schedule: 1}
  # Model prices in dollars per million tokens, over the shipped ones
  # (Anthropic Claude, OpenAI GPT); a model id matches exactly, else by its
  # longest priced prefix followed by "-" (a dated snapshot). Models without
  # a price (local ones) cost nothing. For example:
  #   prices: {my-model: {input: 0.50, output: 1.50}}
  #prices: {}

# When self-driven turns may run: yours alone.
schedules:
  # An IANA time zone, like Europe/Berlin, for schedules and the budgets'
  # days; empty: this system's local zone.
  #timezone: ""
  # A daily window, HH:MM-HH:MM (may wrap midnight, like 22:00-07:00), in
  # which no scheduled turn starts; empty: none.
  #quiet_hours: ""
`
