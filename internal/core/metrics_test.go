package core_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

// flat is the families as "name{l=v,...}" → value.
func flat(t *testing.T, fams []core.MetricFamily) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.Samples {
			var ls []string
			for _, l := range s.Labels {
				ls = append(ls, l.Name+"="+l.Value)
			}
			key := f.Name + s.Suffix
			if len(ls) > 0 {
				key += "{" + strings.Join(ls, ",") + "}"
			}
			if _, dup := out[key]; dup {
				t.Errorf("a second sample %s", key)
			}
			out[key] = s.Value
		}
	}
	return out
}

// fromStore drops the samples that do not come from the store.
func fromStore(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if !strings.HasPrefix(k, "shelldon_provider_") && !strings.HasPrefix(k, "shelldon_go_") && !strings.HasPrefix(k, "shelldon_goroutines") &&
			!strings.HasPrefix(k, "shelldon_resident") && !strings.HasPrefix(k, "shelldon_uptime") && !strings.HasPrefix(k, "shelldon_start") {
			out[k] = v
		}
	}
	return out
}

type metricsFixture struct {
	t   *testing.T
	ctx context.Context
	st  *store.Store
	at  time.Time
}

func (f *metricsFixture) audit(kind, tool string, turn int64, ok bool, summary string) {
	f.t.Helper()
	f.at = f.at.Add(time.Second)
	if _, err := f.st.AppendAudit(f.ctx, store.AuditEntry{At: f.at, Chat: "c", Turn: turn, Kind: kind, Tool: tool, OK: ok, Summary: summary}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *metricsFixture) approval(kind, tool string, turn int64) {
	f.t.Helper()
	f.at = f.at.Add(time.Second)
	a := store.Approval{ID: store.NewApprovalID(), Kind: kind, Chat: "c", Turn: turn, Tool: tool, Args: "{}", ArgsHash: "h",
		CreatedAt: f.at, ExpiresAt: f.at.Add(time.Hour)}
	if err := f.st.CreateApproval(f.ctx, a); err != nil {
		f.t.Fatal(err)
	}
}

func (f *metricsFixture) begin() int64 {
	f.t.Helper()
	f.at = f.at.Add(time.Second)
	id, err := f.st.BeginTurn(f.ctx, "c", "hi", f.at)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

func (f *metricsFixture) finish(id int64, status, errText string) {
	f.t.Helper()
	f.at = f.at.Add(time.Second)
	if err := f.st.FinishTurn(f.ctx, id, store.TurnEnd{Status: status, Error: errText, At: f.at}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *metricsFixture) usage(model string, in, out int64) {
	f.t.Helper()
	f.at = f.at.Add(time.Second)
	f.usageAt(f.at, model, in, out)
}

func (f *metricsFixture) usageAt(at time.Time, model string, in, out int64) {
	f.t.Helper()
	if err := f.st.RecordUsage(f.ctx, store.UsageEntry{At: at, Chat: "c", Turn: 1, Provider: "anthropic", Model: model, Input: in, Output: out}); err != nil {
		f.t.Fatal(err)
	}
}

func newMetricsFixture(t *testing.T) *metricsFixture {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &metricsFixture{t: t, ctx: ctx, st: st, at: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}
}

func (f *metricsFixture) metrics() *core.Metrics {
	prices := budget.NewTable(map[string]budget.Price{"test-model": {Input: 3 * budget.Dollar, Output: 15 * budget.Dollar}})
	return core.NewMetrics(core.MetricsOptions{Store: f.st, Budgets: func() budget.Budgets { return budget.Budgets{Prices: prices} },
		Version: "v1.2.3", Revision: "abc", Start: f.at, Now: func() time.Time { return f.at }})
}

// TestMetricsCountTheStore: the counts of turns, tool calls by tier and
// outcome, decisions, sandbox and worker failures, tokens and spend are
// the store's; a second scrape adds only what came since, and agrees with
// a collector that reads everything anew (a restarted daemon).
func TestMetricsCountTheStore(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	ok1 := f.begin()
	f.finish(ok1, store.StatusOK, "")
	spawn := f.begin()
	f.finish(spawn, store.StatusError, "spawn worker: sandbox: clone: operation not permitted")
	over := f.begin()
	f.finish(over, store.StatusError, "the worker overran the turn's budget and was killed")
	parked := f.begin()
	f.finish(parked, store.StatusApproval, "")
	running := f.begin() // still running at the first scrape
	after := f.begin()
	f.finish(after, store.StatusOK, "")

	f.audit(store.KindToolCall, "get_time", ok1, true, "12:00")
	f.audit(store.KindToolCall, "get_time", ok1, true, "12:00")
	f.audit(store.KindToolCall, "read_file", ok1, false, "error: no such file")
	f.audit(store.KindToolCall, "run_shell", ok1, false, "error: timed out after 30s and was killed (with everything it started)")
	f.audit(store.KindToolCall, "run_shell", ok1, false, "error: killed by killed")
	f.audit(store.KindToolCall, "run_shell", ok1, false, "error: sandbox: the helper ended without a status")
	f.audit(store.KindToolCall, "git", ok1, false, "error: stopped after 2s: free space on /ws is low")
	f.audit(store.KindToolCall, "word_count", ok1, true, "3")
	f.audit(store.KindToolCall, "word_count", ok1, false, "error: it did not finish within 10s and was killed")
	f.audit(store.KindToolCall, "../../etc/passwd\n", ok1, false, "error: no such tool")
	f.audit("tool_refused", "write_file", ok1, false, "refused by the argument check")
	// A RISKY call parked, denied; another approved; a promotion expired;
	// a skill named like a RISKY tool denied (not a tool call denied).
	f.approval(store.KindToolCall, "write_file", parked)
	f.audit("approval_requested", "write_file", parked, true, "request x")
	f.audit("approval_denied", "write_file", parked, false, "request x by http")
	f.approval(store.KindToolCall, "run_shell", after)
	f.audit("approval_approved", "run_shell", after, true, "request y by http")
	f.approval(store.KindPromotion, "word_count", ok1)
	f.audit("approval_expired", "word_count", ok1, false, "request z expired undecided")
	f.approval(store.KindSkill, "git", spawn)
	f.audit("approval_denied", "git", spawn, false, "request s by telegram")
	f.audit("approval_denied", "nothing", 999, false, "request gone by http") // no request found
	f.approval(store.KindToolCall, "schedule", after)                         // pending
	f.audit("tool_promoted", "word_count", ok1, true, "not counted")

	f.usage("test-model", 100, 10)
	f.usage("test-model", 100, 10)
	hostile := "model\"} 1\n" + strings.Repeat("é", 100)
	f.usage(hostile, 5, 5)

	m := f.metrics()
	fams, err := m.Metrics(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := flat(t, fams)
	cut := hostile[:100]
	cut = strings.ToValidUTF8(cut, "")
	want := map[string]float64{
		"shelldon_turns_total{origin=owner,status=ok}":                                      2,
		"shelldon_turns_total{origin=owner,status=error}":                                   2,
		"shelldon_turns_total{origin=owner,status=approval}":                                1,
		"shelldon_turns_failed_total{origin=owner}":                                         2,
		"shelldon_turns_running":                                                            1,
		"shelldon_worker_failures_total{reason=worker_start}":                               1,
		"shelldon_worker_failures_total{reason=worker_killed}":                              1,
		"shelldon_worker_failures_total{reason=worker_exited}":                              0,
		"shelldon_worker_failures_total{reason=interrupted}":                                0,
		"shelldon_tool_calls_total{tier=free,outcome=ok}":                                   2,
		"shelldon_tool_calls_total{tier=free,outcome=failed}":                               1,
		"shelldon_tool_calls_total{tier=risky,outcome=failed}":                              4,
		"shelldon_tool_calls_total{tier=risky,outcome=refused}":                             1,
		"shelldon_tool_calls_total{tier=risky,outcome=denied}":                              1,
		"shelldon_tool_calls_total{tier=self,outcome=ok}":                                   1,
		"shelldon_tool_calls_total{tier=self,outcome=failed}":                               1,
		"shelldon_tool_calls_total{tier=unknown,outcome=failed}":                            1,
		"shelldon_sandbox_failures_total{reason=timeout}":                                   2,
		"shelldon_sandbox_failures_total{reason=killed}":                                    1,
		"shelldon_sandbox_failures_total{reason=disk}":                                      1,
		"shelldon_sandbox_failures_total{reason=sandbox}":                                   1,
		"shelldon_approvals_pending":                                                        5, // the fixture decides none in the store
		"shelldon_approvals_decided_total{kind=tool_call,decision=denied}":                  1,
		"shelldon_approvals_decided_total{kind=tool_call,decision=approved}":                1,
		"shelldon_approvals_decided_total{kind=promotion,decision=expired}":                 1,
		"shelldon_approvals_decided_total{kind=skill,decision=denied}":                      1,
		"shelldon_approvals_decided_total{kind=unknown,decision=denied}":                    1,
		"shelldon_model_calls_total{model=test-model}":                                      2,
		"shelldon_tokens_total{model=test-model,direction=input}":                           200,
		"shelldon_tokens_total{model=test-model,direction=output}":                          20,
		"shelldon_spend_usd_total{model=test-model}":                                        0.0009,
		"shelldon_model_calls_total{model=" + cut + "}":                                     1,
		"shelldon_tokens_total{model=" + cut + ",direction=input}":                          5,
		"shelldon_tokens_total{model=" + cut + ",direction=output}":                         5,
		"shelldon_spend_usd_total{model=" + cut + "}":                                       0,
		"shelldon_build_info{version=v1.2.3,revision=abc,goversion=" + goVersion(got) + "}": 1,
		"shelldon_start_time_seconds":                                                       float64(f.at.UnixNano()) / 1e9,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 && strings.HasPrefix(k, "shelldon_tool_calls_total") {
			t.Errorf("unexpected %s = %v", k, v)
		}
	}
	if len(cut) > 100 {
		t.Errorf("a model's name is not cut: %d bytes", len(cut))
	}

	// The running turn ends; more rows come. The second scrape counts
	// each once.
	f.finish(running, store.StatusError, "the worker exited without a result (EOF; signal: killed)")
	f.audit(store.KindToolCall, "get_time", after, true, "12:01")
	f.usage("test-model", 1000, 0)
	fams, err = m.Metrics(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got = flat(t, fams)
	for k, v := range map[string]float64{
		"shelldon_turns_total{origin=owner,status=error}":         3,
		"shelldon_turns_total{origin=owner,status=ok}":            2,
		"shelldon_turns_running":                                  0,
		"shelldon_worker_failures_total{reason=worker_exited}":    1,
		"shelldon_tool_calls_total{tier=free,outcome=ok}":         3,
		"shelldon_tokens_total{model=test-model,direction=input}": 1200,
		"shelldon_spend_usd_total{model=test-model}":              0.0039,
	} {
		if got[k] != v {
			t.Errorf("after more rows: %s = %v, want %v", k, got[k], v)
		}
	}
	// A restarted daemon reads the same counts.
	again, err := f.metrics().Metrics(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fromStore(got), fromStore(flat(t, again))); d != "" {
		t.Errorf("a fresh collector disagrees (-incremental +fresh):\n%s", d)
	}
}

func goVersion(m map[string]float64) string {
	for k := range m {
		if v, ok := strings.CutPrefix(k, "shelldon_build_info{"); ok {
			_, g, _ := strings.Cut(v, "goversion=")
			return strings.TrimSuffix(g, "}")
		}
	}
	return ""
}

// TestMetricsLabelSetsAreBounded: a provider that names a new model in
// every reply leaves at most a fixed number of label sets; the tokens are
// all counted still.
func TestMetricsLabelSetsAreBounded(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	m := f.metrics()
	const n = 300
	for i := range n {
		f.usage(fmt.Sprintf("model-%d", i), 1, 2)
		if i%100 == 99 { // between scrapes too
			if _, err := m.Metrics(f.ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	fams, err := m.Metrics(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sets, input int
	for _, fam := range fams {
		if fam.Name != "shelldon_tokens_total" {
			continue
		}
		for _, s := range fam.Samples {
			if s.Labels[1].Value == "input" {
				sets++
				input += int(s.Value)
			}
		}
	}
	if sets > 64 || input != n {
		t.Errorf("%d label sets, %d input tokens; want at most 64 and %d", sets, input, n)
	}
}

// TestMetricsUsageDaysSettle: the usage of past days is counted once as
// the days pass; today's and yesterday's are read again at each scrape;
// a restarted daemon reads the same totals.
func TestMetricsUsageDaysSettle(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	day := 24 * time.Hour
	f.usageAt(f.at.Add(-30*day), "test-model", 1000, 100)
	f.usageAt(f.at.Add(-1*day), "test-model", 100, 10)
	f.usageAt(f.at, "test-model", 10, 1)
	m := f.metrics()
	scrape := func(m *core.Metrics) map[string]float64 {
		fams, err := m.Metrics(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return flat(t, fams)
	}
	if got := scrape(m); got["shelldon_tokens_total{model=test-model,direction=input}"] != 1110 || got["shelldon_model_calls_total{model=test-model}"] != 3 {
		t.Errorf("first scrape: %v", got)
	}
	f.usageAt(f.at.Add(time.Minute), "test-model", 1, 1) // today, after the scrape
	f.at = f.at.Add(3 * day)                             // three days later: all of it is past
	f.usageAt(f.at, "test-model", 2, 2)
	got := scrape(m)
	if got["shelldon_tokens_total{model=test-model,direction=input}"] != 1113 || got["shelldon_model_calls_total{model=test-model}"] != 5 {
		t.Errorf("three days later: %v", got)
	}
	// (1113 × $3 + 114 × $15) per million tokens.
	if v := got["shelldon_spend_usd_total{model=test-model}"]; v != 0.005049 {
		t.Errorf("spend = %v", v)
	}
	if d := cmp.Diff(fromStore(got), fromStore(scrape(f.metrics()))); d != "" {
		t.Errorf("a fresh collector disagrees (-incremental +fresh):\n%s", d)
	}
}
