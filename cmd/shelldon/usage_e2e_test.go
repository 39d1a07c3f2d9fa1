package main

import (
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// TestUsageAndBudgets: after turns against a provider that reports
// usage, `shelldon usage` and GET /api/usage show the tokens and the
// dollars, exact to the microdollar at the owner's price; once the day's
// money budget is spent, the owner's next turn still runs, with a warning.
func TestUsageAndBudgets(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "anthropic", brokertest.Sequence(
		brokertest.Reply{Text: "", ToolCalls: []contracts.ToolCall{{ID: "t1", Name: "get_time", Arguments: `{}`}},
			Usage: contracts.Usage{InputTokens: 50, OutputTokens: 10}},
		brokertest.Reply{Text: "It is now.", Usage: contracts.Usage{InputTokens: 80, OutputTokens: 20}},
		brokertest.Reply{Text: "Hello again.", Usage: contracts.Usage{InputTokens: 100, OutputTokens: 7}},
		brokertest.Reply{Text: "Still here.", Usage: contracts.Usage{InputTokens: 1, OutputTokens: 1}},
	))
	// $3 and $15 per million tokens: turn 1 is 130 × 3 + 30 × 15 = 840
	// microdollars, turn 2 is 100 × 3 + 7 × 15 = 405; the budget of 1000
	// is spent after turn 2.
	h := home(t, "anthropic", srv.BaseURL(), "budget:\n  daily_usd: 0.001\n  prices:\n    test-model: {input: 3, output: 15}\n")
	d := startServe(t, h)
	for i, text := range []string{"what time is it?", "hi"} {
		status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "e2e", "text": text})
		if status != 200 || out["warning"] != nil {
			t.Fatalf("turn %d: %d %v", i+1, status, out)
		}
	}
	status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "other", "text": "still there?"})
	reply, _ := out["reply"].(string)
	warning, _ := out["warning"].(string)
	if status != 200 || !strings.HasSuffix(reply, "Still here.") || !strings.Contains(warning, "budget.daily_usd") ||
		!strings.Contains(warning, "$0.001245 of $0.001 today") || !strings.HasPrefix(reply, "["+warning+"]") {
		t.Fatalf("the turn past the budget: %d %v; want it run, with a warning", status, out)
	}

	status, rep := d.do(t, "GET", "/api/usage?days=1", d.token, nil)
	if status != 200 {
		t.Fatalf("GET /api/usage: %d %v", status, rep)
	}
	total, _ := rep["total"].(map[string]any)
	// 4 calls: 231 input and 38 output tokens; 1245 + 18 microdollars.
	if total["calls"] != float64(4) || total["input_tokens"] != float64(231) || total["output_tokens"] != float64(38) || total["usd"] != "0.001263" {
		t.Errorf("total = %v", total)
	}
	chats, _ := rep["chats"].([]any)
	if len(chats) != 2 || chats[0].(map[string]any)["key"] != "e2e" || chats[0].(map[string]any)["usd"] != "0.001245" {
		t.Errorf("chats = %v", chats)
	}
	budgets, _ := rep["budgets"].([]any)
	if len(budgets) != 3 {
		t.Fatalf("budgets = %v", budgets)
	}
	if b := budgets[1].(map[string]any); b["name"] != "daily_usd" || b["spent"] != true || b["used"] != "0.001263" || b["limit"] != "0.001" {
		t.Errorf("daily_usd = %v", b)
	}
	if code, _ := d.do(t, "GET", "/api/usage?days=0", d.token, nil); code != 400 {
		t.Errorf("days=0: %d", code)
	}

	// The CLI reads the store beside the running daemon.
	stdout, stderr, code := run(t, h, "", "usage", "--by", "chat", "--days", "3")
	if code != 0 {
		t.Fatalf("shelldon usage: %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"Usage over 3 day(s)", "(UTC), by chat", "e2e", "$0.001245", "other", "TOTAL", "4", "231", "38", "$0.001263",
		"daily_turns", "daily_usd", "$0.001", "SPENT: self-driven turns stop", "monthly_usd", "$50.00"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("shelldon usage lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, code = run(t, h, "", "usage", "--by", "model")
	if code != 0 || !strings.Contains(stdout, "test-model") || strings.Contains(stdout, "no price") {
		t.Errorf("shelldon usage --by model: %d\n%s", code, stdout)
	}
	if _, stderr, code := run(t, h, "", "usage", "--by", "week"); code != 2 || !strings.Contains(stderr, "--by must be") {
		t.Errorf("--by week: %d %s", code, stderr)
	}
}
