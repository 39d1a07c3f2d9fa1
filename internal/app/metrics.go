package app

import (
	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/core"
)

// metrics is the daemon's /metrics: the store's counts, priced at the
// budgets in force, and the provider attempts of every chain the daemon
// has had since it started.
func (a *App) metrics() *core.Metrics {
	b := readBuild()
	return core.NewMetrics(core.MetricsOptions{Store: a.Store, Budgets: a.Core.Budgets, Providers: a.model.providerCalls,
		Version: b.short(), Revision: b.revision, Start: timeNow(), Now: timeNow})
}

// providerCalls is the broker's counts in the core's terms.
func (m *liveModel) providerCalls() []core.ProviderCalls {
	snap := m.stats.Snapshot()
	out := make([]core.ProviderCalls, len(snap))
	for i, p := range snap {
		out[i] = core.ProviderCalls{Provider: p.Provider, Outcomes: p.Outcomes, Bounds: broker.LatencyBounds(),
			Buckets: p.Buckets, Seconds: p.Seconds, Count: p.Count}
	}
	return out
}
