package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// Kinds of metric (the Prometheus text format's TYPE).
const (
	MetricCounter   = "counter"
	MetricGauge     = "gauge"
	MetricHistogram = "histogram"
)

// MetricFamily is one metric: its samples share its name, help and type.
type MetricFamily struct {
	Name    string
	Help    string
	Type    string // MetricCounter, MetricGauge or MetricHistogram
	Samples []Sample
}

// Sample is one value of a family. Suffix is "" or, for a histogram,
// "_bucket", "_sum" or "_count".
type Sample struct {
	Suffix string
	Labels []Label
	Value  float64
}

// Label is one label of a sample. Its value may be anything (a model's
// name); the transport escapes it.
type Label struct {
	Name, Value string
}

// ProviderCalls is one provider's model calls since the daemon started,
// as the broker counts them.
type ProviderCalls struct {
	Provider string
	Outcomes map[string]int64 // by the broker's outcome ("ok", "rate_limited", ...)
	Bounds   []float64        // the latency buckets' upper bounds, in seconds
	Buckets  []int64          // per bound, then one for +Inf; not cumulative
	Seconds  float64
	Count    int64
}

// MetricsOptions configure Metrics.
type MetricsOptions struct {
	Store *store.Store
	// Budgets gives the prices the spend is reckoned at: those in force
	// at the scrape. nil: no prices, no spend.
	Budgets func() budget.Budgets
	// Providers reads the model calls' counts; nil: none.
	Providers func() []ProviderCalls
	Version   string // the binary's version
	Revision  string // the VCS revision it was built from; "" if unknown
	Start     time.Time
	Now       func() time.Time
}

// maxLabelSets bounds the label sets a metric fed by outside words (a
// model's name as its provider reports it, a tool's name as the model
// wrote it) keeps; past it they are counted under "other", so the
// daemon's memory stays flat. maxLabelValue bounds a value, in bytes.
const (
	maxLabelSets  = 64
	maxLabelValue = 100
	otherLabel    = "other"
)

// Metrics collects what /metrics shows. The counts of turns, tool calls,
// decisions, sandbox and worker failures, tokens and spend come from the
// store, so they hold across restarts: the audit trail, the turns and the
// usage ledger are never pruned, and each of their rows is read once, by
// id (store/metrics.go), after a first scrape that reads them all. The
// provider calls' counts and latency are the broker's, since the daemon
// started. It is safe for concurrent use; scrapes run one at a time.
type Metrics struct {
	o MetricsOptions

	fmu      sync.Mutex // guards inflight
	inflight *flight    // the count running, if any

	mu       sync.Mutex // held by a count
	audit    int64      // the audit rows counted: ids ≤ audit
	settled  int64      // the turns counted in turns: ids ≤ settled, none running
	usageDay int64      // the usage counted in models: the UTC days before it
	tools    map[[2]string]int64
	decided  map[[2]string]int64
	stops    map[string]int64
	turns    map[turnKey]int64
	models   map[string]*modelSum
	origins  labelSet // the turns' origins
	names    labelSet // the models' names
}

// labelSet admits at most maxLabelSets values of a label; any more are
// otherLabel.
type labelSet map[string]bool

func (l labelSet) admit(v string) string {
	v = labelValue(v)
	if !l[v] {
		if len(l) >= maxLabelSets-1 { // one left for other
			return otherLabel
		}
		l[v] = true
	}
	return v
}

type turnKey struct{ origin, status, failure string }

// modelSum is the model calls of a model, and what they cost.
type modelSum struct {
	calls, input, output int64
	cost                 budget.Cost
}

// NewMetrics returns the collector.
func NewMetrics(o MetricsOptions) *Metrics {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Start.IsZero() {
		o.Start = o.Now()
	}
	return &Metrics{o: o, tools: map[[2]string]int64{}, decided: map[[2]string]int64{}, stops: map[string]int64{},
		turns: map[turnKey]int64{}, models: map[string]*modelSum{}, origins: labelSet{}, names: labelSet{}}
}

// Tiers of a tool call as the metrics count them: contracts.TierFree and
// TierRisky for a built-in tool, TierSelf for any other name a self-coded
// tool could have (a name the model made up, which failed, too), and
// TierUnknown for a name no tool can have.
const (
	TierSelf    = "self"
	TierUnknown = "unknown"
)

// toolTier is the tier of the tool a call named; a function of the name
// alone, so a count never moves between tiers.
func toolTier(name string) string {
	if b, ok := contracts.Builtin(name); ok {
		return string(b.Tier)
	}
	if n, err := selfcode.Normalize(name); err == nil && n == name {
		return TierSelf
	}
	return TierUnknown
}

// metricKinds are the audit kinds a scrape counts (core/approvals writes
// the decisions; the e2e test of /metrics checks the names agree).
func metricKinds() []string {
	return []string{store.KindToolCall, auditRefused, "approval_approved", "approval_denied", "approval_expired"}
}

// ErrMetricsBusy is returned to a scrape that gave up before the count
// it waited for was done (the first, which reads the whole history, on a
// slow machine); the count goes on, and a later scrape gets it.
var ErrMetricsBusy = errors.New("core: the metrics are still being counted")

// flight is one count, which every scrape that comes while it runs waits
// for and shares.
type flight struct {
	done chan struct{}
	fams []MetricFamily
	err  error
}

// Metrics returns the metrics now. One count runs at a time, whatever
// the number of scrapes; it goes on when the scrape that began it gives
// up (ErrMetricsBusy).
func (m *Metrics) Metrics(ctx context.Context) ([]MetricFamily, error) {
	m.fmu.Lock()
	f := m.inflight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		m.inflight = f
		go func() {
			f.fams, f.err = m.collect(context.WithoutCancel(ctx))
			m.fmu.Lock()
			m.inflight = nil
			m.fmu.Unlock()
			close(f.done)
		}()
	}
	m.fmu.Unlock()
	select {
	case <-f.done:
		return f.fams, f.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrMetricsBusy, context.Cause(ctx))
	}
}

// collect counts what came since the last count and returns the metrics.
func (m *Metrics) collect(ctx context.Context) ([]MetricFamily, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.o.Store
	top, err := st.MaxIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("core: metrics: %w", err)
	}
	if err := m.countAudit(ctx, top.Audit); err != nil {
		return nil, err
	}
	recent, err := m.countUsage(ctx)
	if err != nil {
		return nil, err
	}
	fresh, running, err := m.countTurns(ctx, top.Turns)
	if err != nil {
		return nil, err
	}
	pending, err := st.PendingApprovals(ctx)
	if err != nil {
		return nil, fmt.Errorf("core: metrics: %w", err)
	}
	var out []MetricFamily
	out = append(out, m.turnFamilies(fresh, running)...)
	out = append(out, m.toolFamilies()...)
	out = append(out, MetricFamily{Name: "shelldon_approvals_pending", Type: MetricGauge,
		Help: "Requests waiting for the owner's decision.", Samples: []Sample{{Value: float64(pending)}}})
	out = append(out, m.decisionFamily())
	out = append(out, m.usageFamilies(recent)...)
	out = append(out, m.providerFamilies()...)
	out = append(out, m.processFamilies()...)
	return out, nil
}

// countAudit adds the audit rows up to top.
func (m *Metrics) countAudit(ctx context.Context, top int64) error {
	// Both read before either is added: a failure counts nothing twice.
	rows, err := m.o.Store.TallyAudit(ctx, m.audit, top, metricKinds())
	if err != nil {
		return fmt.Errorf("core: metrics: %w", err)
	}
	stops, err := m.o.Store.TallyStops(ctx, m.audit, top)
	if err != nil {
		return fmt.Errorf("core: metrics: %w", err)
	}
	for _, r := range rows {
		switch r.Kind {
		case store.KindToolCall:
			outcome := "ok"
			if !r.OK {
				outcome = "failed"
			}
			m.tools[[2]string{toolTier(r.Tool), outcome}] += r.N
		case auditRefused:
			m.tools[[2]string{toolTier(r.Tool), "refused"}] += r.N
		default:
			decision := strings.TrimPrefix(r.Kind, "approval_")
			kind := r.Request
			if kind == "" {
				kind = TierUnknown
			}
			m.decided[[2]string{kind, decision}] += r.N
			if decision == "denied" && r.Request == store.KindToolCall {
				m.tools[[2]string{toolTier(r.Tool), "denied"}] += r.N
			}
		}
	}
	for k, n := range stops {
		m.stops[k] += n
	}
	m.audit = max(m.audit, top)
	return nil
}

// countUsage adds to models the days before yesterday (UTC) not counted
// yet, and returns the sums of yesterday and today, which may still grow
// (a call recorded at midnight is committed just after it). Each day is
// priced at the prices in force when it is read: a past day once, when
// it is counted.
func (m *Metrics) countUsage(ctx context.Context) (map[string]*modelSum, error) {
	rows, err := m.o.Store.TallyDays(ctx, m.usageDay)
	if err != nil {
		return nil, fmt.Errorf("core: metrics: %w", err)
	}
	prices := budget.NewTable(nil)
	if m.o.Budgets != nil {
		if b := m.o.Budgets(); b.Prices != nil {
			prices = b.Prices
		}
	}
	open := store.UsageDay(m.o.Now()) - 1
	recent := map[string]*modelSum{}
	for _, r := range rows {
		sums := recent
		if r.Day < open {
			sums = m.models
		}
		name := m.names.admit(r.Model)
		sum := sums[name]
		if sum == nil {
			sum = &modelSum{}
			sums[name] = sum
		}
		sum.calls += r.Calls
		sum.input += r.Input
		sum.output += r.Output
		sum.cost += prices.Cost(r.Model, r.Input, r.Output)
	}
	m.usageDay = max(m.usageDay, open)
	return recent, nil
}

// countTurns adds to turns the finished turns below the first one still
// running, and returns the counts of those past it (read again at the
// next scrape, as they may be joined by the running ones when they end)
// and how many run.
func (m *Metrics) countTurns(ctx context.Context, top int64) (map[turnKey]int64, int64, error) {
	st := m.o.Store
	first, running, err := st.Running(ctx, m.settled)
	if err != nil {
		return nil, 0, fmt.Errorf("core: metrics: %w", err)
	}
	settle := top
	if first > 0 && first <= top {
		settle = first - 1
	}
	rows, err := st.TallyTurns(ctx, m.settled, settle)
	if err != nil {
		return nil, 0, fmt.Errorf("core: metrics: %w", err)
	}
	for _, r := range rows {
		m.turns[m.turnKey(r)] += r.N
	}
	m.settled = max(m.settled, settle)
	fresh := map[turnKey]int64{}
	rows, err = st.TallyTurns(ctx, m.settled, top)
	if err != nil {
		return nil, 0, fmt.Errorf("core: metrics: %w", err)
	}
	for _, r := range rows {
		fresh[m.turnKey(r)] += r.N
	}
	return fresh, running, nil
}

// turnKey is r's key.
func (m *Metrics) turnKey(r store.TurnTally) turnKey {
	return turnKey{m.origins.admit(r.Origin), r.Status, r.Failure}
}
