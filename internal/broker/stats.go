package broker

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/broker/provider"
)

// Outcomes of a provider attempt, as Stats counts them.
const (
	OutcomeOK          = "ok"
	OutcomeRateLimited = "rate_limited" // 429
	OutcomeServerError = "server_error" // 5xx, or an overload reported in a 200
	OutcomeAuth        = "auth"         // 401, 403: the key
	OutcomeClientError = "client_error" // any other 4xx
	OutcomeTimeout     = "timeout"      // the deadline passed
	OutcomeCancelled   = "cancelled"
	OutcomeTooLarge    = "too_large" // the reply went over a cap
	OutcomeMalformed   = "malformed" // a reply that could not be read
	OutcomeNetwork     = "network"   // no HTTP status: the connection failed
	OutcomeOther       = "other"
)

// Outcome classifies how a provider attempt ended: one of the Outcome*
// constants, a small fixed set whatever the provider sent.
func Outcome(err error) string {
	if err == nil {
		return OutcomeOK
	}
	var pe *provider.Error
	isPE := errors.As(err, &pe)
	switch {
	case errors.Is(err, provider.ErrReplyTooLarge) || isPE && pe.OverCap:
		return OutcomeTooLarge
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case !isPE:
		return OutcomeOther
	case pe.Malformed:
		return OutcomeMalformed
	case pe.Status == 429:
		return OutcomeRateLimited
	case pe.Status == 401 || pe.Status == 403:
		return OutcomeAuth
	case pe.Status >= 500:
		return OutcomeServerError
	case pe.Status >= 400:
		return OutcomeClientError
	case pe.Status == 0:
		return OutcomeNetwork
	}
	return OutcomeOther
}

// LatencyBounds are the upper bounds, in seconds, of the buckets of
// ProviderStats.Latency (a fresh slice each call); a last bucket, +Inf,
// takes the rest.
func LatencyBounds() []float64 {
	return []float64{0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80}
}

// MaxStatsProviders bounds the providers Stats keeps apart; the attempts
// of any more (a config changed many times over) are counted under
// OtherProvider, so its memory stays flat.
const MaxStatsProviders = 32

// OtherProvider is the provider name the attempts past MaxStatsProviders
// are counted under.
const OtherProvider = "other"

// Stats counts the attempts of a Chain's providers since the process
// started: how each ended (Outcome) and how long it took, by provider.
// Several chains (one per config in force) may share one. It is safe for
// concurrent use; the zero value is ready.
type Stats struct {
	mu sync.Mutex
	by map[string]*ProviderStats
}

// ProviderStats is one provider's attempts.
type ProviderStats struct {
	Provider string
	Outcomes map[string]int64 // by Outcome
	// Buckets[i] counts the attempts that took at most LatencyBounds()[i]
	// seconds and more than the bound before (not cumulative); the last,
	// one past the bounds, those that took longer.
	Buckets []int64
	Seconds float64 // the attempts' total time
	Count   int64
}

// Observe counts an attempt of provider name that took d and ended with err.
func (s *Stats) Observe(name string, d time.Duration, err error) {
	if s == nil {
		return
	}
	outcome := Outcome(err)
	secs := d.Seconds()
	bounds := LatencyBounds()
	i, _ := slices.BinarySearch(bounds, secs) // the first bound ≥ secs
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[string]*ProviderStats{}
	}
	p := s.by[name]
	if p == nil {
		if len(s.by) >= MaxStatsProviders-1 { // one left for other
			name = OtherProvider
			p = s.by[name]
		}
		if p == nil {
			p = &ProviderStats{Provider: name, Outcomes: map[string]int64{}, Buckets: make([]int64, len(bounds)+1)}
			s.by[name] = p
		}
	}
	p.Outcomes[outcome]++
	p.Buckets[i]++
	p.Seconds += secs
	p.Count++
}

// Snapshot returns a copy of the counts, by provider name.
func (s *Stats) Snapshot() []ProviderStats {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ProviderStats, 0, len(s.by))
	for _, p := range s.by {
		c := *p
		c.Outcomes = make(map[string]int64, len(p.Outcomes))
		for k, v := range p.Outcomes {
			c.Outcomes[k] = v
		}
		c.Buckets = slices.Clone(p.Buckets)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ProviderStats) int {
		switch {
		case a.Provider < b.Provider:
			return -1
		case a.Provider > b.Provider:
			return 1
		}
		return 0
	})
	return out
}

// WithStats returns a copy of c that counts its attempts in s.
func (c *Chain) WithStats(s *Stats) *Chain {
	cp := *c
	cp.opts.Stats = s
	return &cp
}
