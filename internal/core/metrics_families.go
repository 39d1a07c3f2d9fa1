package core

// The families /metrics shows, from the counts of metrics.go.

import (
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
)

func (m *Metrics) turnFamilies(fresh map[turnKey]int64, running int64) []MetricFamily {
	all := make(map[turnKey]int64, len(m.turns)+len(fresh))
	for k, v := range m.turns {
		all[k] += v
	}
	for k, v := range fresh {
		all[k] += v
	}
	total := MetricFamily{Name: "shelldon_turns_total", Type: MetricCounter,
		Help: "Turns that ended, by origin (owner, or the kind of self-driven turn) and status (ok, error, deadline, cancelled, tool_limit, approval: parked for the owner)."}
	failed := MetricFamily{Name: "shelldon_turns_failed_total", Type: MetricCounter,
		Help: "Turns that ended in an error (status error), by origin."}
	workers := MetricFamily{Name: "shelldon_worker_failures_total", Type: MetricCounter,
		Help: "Turns whose worker failed: worker_start (it or its sandbox did not start), worker_killed (it overran the turn's budget), worker_exited (it died without a result), interrupted (the daemon stopped)."}
	byStatus := map[[2]string]int64{}
	byOrigin := map[string]int64{}
	byFailure := map[string]int64{}
	for k, v := range all {
		byStatus[[2]string{k.origin, k.status}] += v
		if k.status == store.StatusError {
			byOrigin[k.origin] += v
		}
		if k.failure != "" {
			byFailure[k.failure] += v
		}
	}
	for _, k := range sortedPairs(byStatus) {
		total.Samples = append(total.Samples, Sample{Labels: []Label{{"origin", k[0]}, {"status", k[1]}}, Value: float64(byStatus[k])})
	}
	for _, k := range sortedKeys(byOrigin) {
		failed.Samples = append(failed.Samples, Sample{Labels: []Label{{"origin", k}}, Value: float64(byOrigin[k])})
	}
	for _, k := range []string{store.FailWorkerStart, store.FailWorkerKilled, store.FailWorkerExited, store.FailInterrupted} {
		workers.Samples = append(workers.Samples, Sample{Labels: []Label{{"reason", k}}, Value: float64(byFailure[k])})
	}
	return []MetricFamily{total, failed, workers, {Name: "shelldon_turns_running", Type: MetricGauge,
		Help: "Turns running now.", Samples: []Sample{{Value: float64(running)}}}}
}

func (m *Metrics) toolFamilies() []MetricFamily {
	calls := MetricFamily{Name: "shelldon_tool_calls_total", Type: MetricCounter,
		Help: "Tool calls by tier (free, risky, self: self-coded or a name the model made up, unknown: no tool's name) and outcome (ok, failed, refused: a guard stopped it before the owner was asked, denied: the owner said no)."}
	for _, tier := range []string{string(contracts.TierFree), string(contracts.TierRisky), TierSelf, TierUnknown} {
		for _, outcome := range []string{"ok", "failed", "refused", "denied"} {
			calls.Samples = append(calls.Samples, Sample{Labels: []Label{{"tier", tier}, {"outcome", outcome}}, Value: float64(m.tools[[2]string{tier, outcome}])})
		}
	}
	stops := MetricFamily{Name: "shelldon_sandbox_failures_total", Type: MetricCounter,
		Help: "Tool calls a limit of their sandbox stopped (timeout, killed: CPU time, memory or processes, disk: the free-space floor) or whose sandbox failed (sandbox)."}
	for _, r := range []string{store.StopTimeout, store.StopKilled, store.StopDisk, store.StopSandbox} {
		stops.Samples = append(stops.Samples, Sample{Labels: []Label{{"reason", r}}, Value: float64(m.stops[r])})
	}
	return []MetricFamily{calls, stops}
}

func (m *Metrics) decisionFamily() MetricFamily {
	f := MetricFamily{Name: "shelldon_approvals_decided_total", Type: MetricCounter,
		Help: "Requests decided, by kind (tool_call, promotion, skill) and decision (approved, denied, expired)."}
	for _, k := range sortedPairs(m.decided) {
		f.Samples = append(f.Samples, Sample{Labels: []Label{{"kind", k[0]}, {"decision", k[1]}}, Value: float64(m.decided[k])})
	}
	return f
}

func (m *Metrics) usageFamilies(recent map[string]*modelSum) []MetricFamily {
	calls := MetricFamily{Name: "shelldon_model_calls_total", Type: MetricCounter,
		Help: "Model calls that reported token usage, by model (as the provider named it)."}
	tokens := MetricFamily{Name: "shelldon_tokens_total", Type: MetricCounter,
		Help: "Tokens sent (input) and received (output), by model."}
	spend := MetricFamily{Name: "shelldon_spend_usd_total", Type: MetricCounter,
		Help: "Dollars spent, by model, at the owner's prices: yesterday's and today's at those in force now, earlier days' at those in force when the daemon counted them."}
	all := make(map[string]modelSum, len(m.models)+len(recent))
	for _, sums := range []map[string]*modelSum{m.models, recent} {
		for k, r := range sums {
			a := all[k]
			a.calls, a.input, a.output, a.cost = a.calls+r.calls, a.input+r.input, a.output+r.output, a.cost+r.cost
			all[k] = a
		}
	}
	for _, k := range sortedKeys(all) {
		r := all[k]
		calls.Samples = append(calls.Samples, Sample{Labels: []Label{{"model", k}}, Value: float64(r.calls)})
		tokens.Samples = append(tokens.Samples,
			Sample{Labels: []Label{{"model", k}, {"direction", "input"}}, Value: float64(r.input)},
			Sample{Labels: []Label{{"model", k}, {"direction", "output"}}, Value: float64(r.output)})
		spend.Samples = append(spend.Samples, Sample{Labels: []Label{{"model", k}}, Value: float64(r.cost) / float64(budget.Dollar)})
	}
	return []MetricFamily{calls, tokens, spend}
}

func (m *Metrics) providerFamilies() []MetricFamily {
	reqs := MetricFamily{Name: "shelldon_provider_requests_total", Type: MetricCounter,
		Help: "Attempts of a model call at a provider since the daemon started, by outcome (ok, or the kind of error)."}
	lat := MetricFamily{Name: "shelldon_provider_request_seconds", Type: MetricHistogram,
		Help: "How long an attempt at a provider took, streamed reply included, since the daemon started."}
	if m.o.Providers == nil {
		return []MetricFamily{reqs, lat}
	}
	for _, p := range m.o.Providers() {
		name := labelValue(p.Provider)
		for _, o := range sortedKeys(p.Outcomes) {
			reqs.Samples = append(reqs.Samples, Sample{Labels: []Label{{"provider", name}, {"outcome", o}}, Value: float64(p.Outcomes[o])})
		}
		var cum int64
		for i, b := range p.Buckets {
			cum += b
			le := "+Inf"
			if i < len(p.Bounds) {
				le = strconv.FormatFloat(p.Bounds[i], 'g', -1, 64)
			}
			lat.Samples = append(lat.Samples, Sample{Suffix: "_bucket", Labels: []Label{{"provider", name}, {"le", le}}, Value: float64(cum)})
		}
		lat.Samples = append(lat.Samples,
			Sample{Suffix: "_sum", Labels: []Label{{"provider", name}}, Value: p.Seconds},
			Sample{Suffix: "_count", Labels: []Label{{"provider", name}}, Value: float64(p.Count)})
	}
	return []MetricFamily{reqs, lat}
}

// processFamilies are the process's basics: what it is, since when, and
// what it holds.
func (m *Metrics) processFamilies() []MetricFamily {
	now := m.o.Now()
	out := []MetricFamily{
		{Name: "shelldon_build_info", Type: MetricGauge, Help: "The binary's version and revision; always 1.",
			Samples: []Sample{{Labels: []Label{{"version", labelValue(m.o.Version)}, {"revision", labelValue(m.o.Revision)}, {"goversion", runtime.Version()}}, Value: 1}}},
		{Name: "shelldon_start_time_seconds", Type: MetricGauge, Help: "When the daemon started, in seconds since 1970.",
			Samples: []Sample{{Value: float64(m.o.Start.UnixNano()) / 1e9}}},
		{Name: "shelldon_uptime_seconds", Type: MetricGauge, Help: "How long the daemon has run.",
			Samples: []Sample{{Value: now.Sub(m.o.Start).Seconds()}}},
	}
	if rss, ok := residentBytes(); ok {
		out = append(out, MetricFamily{Name: "shelldon_resident_memory_bytes", Type: MetricGauge,
			Help: "The daemon's resident memory (/proc/self/statm), its workers not included.", Samples: []Sample{{Value: float64(rss)}}})
	}
	// runtime.ReadMemStats, not runtime/metrics: that package's init (0.2
	// ms, 95 allocations) would run in every process of the binary, each
	// turn's worker included, for the sake of a scrape.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, f := range []MetricFamily{
		{Name: "shelldon_go_heap_bytes", Help: "Bytes of live and not yet swept heap objects.", Samples: []Sample{{Value: float64(ms.HeapAlloc)}}},
		{Name: "shelldon_go_memory_bytes", Help: "All the memory the Go runtime mapped.", Samples: []Sample{{Value: float64(ms.Sys)}}},
		{Name: "shelldon_goroutines", Help: "Goroutines that exist now.", Samples: []Sample{{Value: float64(runtime.NumGoroutine())}}},
	} {
		f.Type = MetricGauge
		out = append(out, f)
	}
	return out
}

// residentBytes reads the process's resident set size where the system
// has /proc (Linux).
func residentBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// labelValue is s cut to maxLabelValue bytes, and a rune the cut split
// dropped.
func labelValue(s string) string {
	if len(s) <= maxLabelValue {
		return s
	}
	return strings.ToValidUTF8(s[:maxLabelValue], "")
}

// sortedKeys returns m's keys in order.
func sortedKeys[K ~string, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// sortedPairs returns m's keys in order.
func sortedPairs[V any](m map[[2]string]V) [][2]string {
	return slices.SortedFunc(maps.Keys(m), func(a, b [2]string) int { return slices.Compare(a[:], b[:]) })
}
