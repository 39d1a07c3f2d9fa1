package broker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

func TestOutcome(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want string
	}{
		{nil, broker.OutcomeOK},
		{&provider.Error{Status: 429, Retryable: true}, broker.OutcomeRateLimited},
		{fmt.Errorf("wrapped: %w", &provider.Error{Status: 529, Retryable: true}), broker.OutcomeServerError},
		{&provider.Error{Status: 500}, broker.OutcomeServerError},
		{&provider.Error{Status: 401}, broker.OutcomeAuth},
		{&provider.Error{Status: 403}, broker.OutcomeAuth},
		{&provider.Error{Status: 400}, broker.OutcomeClientError},
		{&provider.Error{Status: 0, Retryable: true}, broker.OutcomeNetwork},
		{&provider.Error{Status: 200, Malformed: true}, broker.OutcomeMalformed},
		{&provider.Error{OverCap: true}, broker.OutcomeTooLarge},
		{provider.ErrReplyTooLarge, broker.OutcomeTooLarge},
		{context.DeadlineExceeded, broker.OutcomeTimeout},
		{fmt.Errorf("x: %w", context.Canceled), broker.OutcomeCancelled},
		{errors.New("something else"), broker.OutcomeOther},
		{&provider.Error{Status: 302}, broker.OutcomeOther},
	}
	for _, c := range cases {
		if got := broker.Outcome(c.err); got != c.want {
			t.Errorf("Outcome(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestChainCountsAttempts: every attempt is counted, a retry and a
// fallback too, with its outcome and its time in the right bucket.
func TestChainCountsAttempts(t *testing.T) {
	t.Parallel()
	var stats broker.Stats
	s := &sleeps{}
	busy := &fake{name: "anthropic:a", fn: func(n int, _ func(string)) (contracts.Completion, error) {
		return contracts.Completion{}, retryable(429)
	}}
	good := &fake{name: "openai:b", fn: func(int, func(string)) (contracts.Completion, error) { return answer("hi") }}
	c := broker.NewChain([]provider.Provider{busy, good}, broker.Options{Sleep: s.sleep, MaxAttempts: 2}).WithStats(&stats)
	for range 2 {
		if _, err := c.Complete(t.Context(), hello, nil); err != nil {
			t.Fatal(err)
		}
	}
	got := stats.Snapshot()
	if len(got) != 2 {
		t.Fatalf("snapshot = %+v", got)
	}
	if d := cmp.Diff(map[string]int64{broker.OutcomeRateLimited: 4}, got[0].Outcomes); got[0].Provider != "anthropic:a" || d != "" {
		t.Errorf("%s: %s", got[0].Provider, d)
	}
	if d := cmp.Diff(map[string]int64{broker.OutcomeOK: 2}, got[1].Outcomes); got[1].Provider != "openai:b" || d != "" {
		t.Errorf("%s: %s", got[1].Provider, d)
	}
	if got[1].Count != 2 || got[1].Buckets[0] != 2 || len(got[1].Buckets) != len(broker.LatencyBounds())+1 {
		t.Errorf("latency of openai:b: %+v", got[1])
	}
	// The chain without stats is untouched, and counts nothing.
	if _, err := broker.NewChain([]provider.Provider{good}, broker.Options{}).Complete(t.Context(), hello, nil); err != nil {
		t.Fatal(err)
	}
	if n := stats.Snapshot()[1].Count; n != 2 {
		t.Errorf("a chain without stats counted: %d", n)
	}
}

func TestStatsBuckets(t *testing.T) {
	t.Parallel()
	var s broker.Stats
	for _, d := range []time.Duration{0, 250 * time.Millisecond, 251 * time.Millisecond, 3 * time.Second, 10 * time.Minute} {
		s.Observe("p", d, nil)
	}
	p := s.Snapshot()[0]
	want := make([]int64, len(broker.LatencyBounds())+1)
	want[0] = 2           // 0 and exactly 0.25 s
	want[1] = 1           // 0.251 s ≤ 0.5 s
	want[4] = 1           // 3 s ≤ 5 s
	want[len(want)-1] = 1 // 10 min: +Inf
	if d := cmp.Diff(want, p.Buckets); d != "" || p.Count != 5 || p.Seconds < 603.5 || p.Seconds > 603.6 {
		t.Errorf("buckets (-want +got):\n%s\n%+v", d, p)
	}
}

// TestStatsProvidersAreBounded: a config changed over and over, naming a
// new provider each time, leaves at most MaxStatsProviders counts.
func TestStatsProvidersAreBounded(t *testing.T) {
	t.Parallel()
	var s broker.Stats
	for i := range 1000 {
		s.Observe(fmt.Sprintf("openai:model-%d", i), time.Second, nil)
	}
	snap := s.Snapshot()
	var total int64
	for _, p := range snap {
		total += p.Count
	}
	if len(snap) > broker.MaxStatsProviders || total != 1000 {
		t.Errorf("%d providers kept, %d attempts; want at most %d and 1000", len(snap), total, broker.MaxStatsProviders)
	}
	var nilStats *broker.Stats
	nilStats.Observe("p", time.Second, nil) // a chain without stats
	if nilStats.Snapshot() != nil {
		t.Error("nil stats have a snapshot")
	}
}
