package budget

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Price is what a model costs per million tokens.
type Price struct {
	Input  Cost `json:"input" yaml:"input"`   // per million input tokens
	Output Cost `json:"output" yaml:"output"` // per million output tokens
}

// Of is what tokens cost at p: exact, since a price is a whole number of
// microdollars per million tokens (ParseUSD).
func (p Price) Of(input, output int64) Cost {
	return Cost(input)*(p.Input/perMillion) + Cost(output)*(p.Output/perMillion)
}

// Table prices models by their id. Find looks an id up as documented
// there; a model it does not find costs nothing (a local model, or one the
// owner has not priced).
type Table struct {
	prices map[string]Price // by normalized id
}

// NewTable is the shipped prices (Defaults) with the owner's on top: an
// owner's price replaces the shipped one of the same id, and takes part in
// the prefix rule like the shipped ones.
func NewTable(owner map[string]Price) *Table {
	t := &Table{prices: map[string]Price{}}
	for id, p := range Defaults() {
		t.prices[normalize(id)] = p
	}
	for id, p := range owner {
		t.prices[normalize(id)] = p
	}
	return t
}

// Find returns the price of a model id and whether it has one. The id is
// compared lowercased, without any routing prefix up to a last "/"
// ("anthropic/claude-sonnet-4-5" is "claude-sonnet-4-5"). An id priced
// exactly has that price; else the longest priced id P such that the id
// begins with P followed by "-", "@" or ":" (a dated snapshot or a
// variant: "claude-sonnet-4-5-20250929", "gpt-4o-mini-2024-07-18" is
// "gpt-4o-mini", not "gpt-4o"); else none, and it costs nothing.
func (t *Table) Find(model string) (Price, bool) {
	id := normalize(model)
	if id == "" {
		return Price{}, false
	}
	if p, ok := t.prices[id]; ok {
		return p, true
	}
	best, found := "", false
	for k := range t.prices {
		if len(k) > len(best) && len(id) > len(k) && strings.HasPrefix(id, k) && strings.ContainsRune("-@:", rune(id[len(k)])) {
			best, found = k, true
		}
	}
	if !found {
		return Price{}, false
	}
	return t.prices[best], true
}

// Cost is what tokens of model cost: 0 for a model without a price.
func (t *Table) Cost(model string, input, output int64) Cost {
	p, _ := t.Find(model)
	return p.Of(input, output)
}

// IDs lists the priced ids, sorted.
func (t *Table) IDs() []string { return slices.Sorted(maps.Keys(t.prices)) }

func normalize(model string) string {
	id := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return id
}

// Defaults is the shipped price list: the providers' list prices for
// standard (not batch, not cached) input and output tokens, in USD per
// million tokens. Checked 2026-03 against the providers' pricing pages:
// Anthropic, https://docs.anthropic.com/en/docs/about-claude/pricing
// (models through Opus/Sonnet 4.5 and Haiku 4.5; the 4.6 models as listed
// at the same prices in March 2026); OpenAI,
// https://platform.openai.com/docs/pricing (as summarized, March 2026).
// Prices change: the owner's budget.prices overrides any of them.
// Prompt-cache reads and writes are counted as plain input tokens, which
// is what the providers report as input to shelldon.
func Defaults() map[string]Price {
	usd := func(in, out string) Price {
		i, err := ParseUSD(in)
		if err != nil {
			panic(fmt.Sprintf("budget: shipped price %s: %v", in, err))
		}
		o, err := ParseUSD(out)
		if err != nil {
			panic(fmt.Sprintf("budget: shipped price %s: %v", out, err))
		}
		return Price{Input: i, Output: o}
	}
	return map[string]Price{
		// Anthropic Claude.
		"claude-opus-4-6":   usd("5", "25"),
		"claude-opus-4-5":   usd("5", "25"),
		"claude-opus-4-1":   usd("15", "75"),
		"claude-opus-4":     usd("15", "75"),
		"claude-sonnet-4-6": usd("3", "15"),
		"claude-sonnet-4-5": usd("3", "15"),
		"claude-sonnet-4":   usd("3", "15"),
		"claude-haiku-4-5":  usd("1", "5"),
		"claude-3-7-sonnet": usd("3", "15"),
		"claude-3-5-sonnet": usd("3", "15"),
		"claude-3-5-haiku":  usd("0.80", "4"),
		"claude-3-opus":     usd("15", "75"),
		"claude-3-haiku":    usd("0.25", "1.25"),
		// OpenAI GPT and reasoning models.
		"gpt-5.4":      usd("2.50", "15"),
		"gpt-5.1":      usd("1.25", "10"),
		"gpt-5":        usd("1.25", "10"),
		"gpt-5-mini":   usd("0.25", "2"),
		"gpt-5-nano":   usd("0.05", "0.40"),
		"gpt-5-pro":    usd("15", "120"),
		"gpt-4.1":      usd("2", "8"),
		"gpt-4.1-mini": usd("0.40", "1.60"),
		"gpt-4.1-nano": usd("0.10", "0.40"),
		"gpt-4o":       usd("2.50", "10"),
		"gpt-4o-mini":  usd("0.15", "0.60"),
		"o3":           usd("2", "8"),
		"o3-mini":      usd("1.10", "4.40"),
		"o4-mini":      usd("1.10", "4.40"),
	}
}

// perMillion: a price is per million tokens; a whole number of
// microdollars per million is a whole number of picodollars per token.
const perMillion = 1_000_000
