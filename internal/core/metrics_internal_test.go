package core

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core/store"
)

// TestMetricsBusyThenShared: a scrape that gives up before the count is
// done is told so, and the count goes on; scrapes that come meanwhile
// get a count when it ends.
func TestMetricsBusyThenShared(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := NewMetrics(MetricsOptions{Store: st})
	m.mu.Lock() // a count that takes long
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := m.Metrics(ctx); !errors.Is(err, ErrMetricsBusy) {
		t.Fatalf("a scrape that gave up: %v, want ErrMetricsBusy", err)
	}
	m.fmu.Lock()
	f := m.inflight
	m.fmu.Unlock()
	if f == nil {
		t.Fatal("the count stopped with the scrape")
	}
	var wg sync.WaitGroup
	results := make([][]MetricFamily, 8)
	for i := range results {
		wg.Go(func() {
			fams, err := m.Metrics(t.Context())
			if err != nil {
				t.Error(err)
			}
			results[i] = fams
		})
	}
	m.mu.Unlock()
	wg.Wait()
	for i, r := range results {
		if len(r) == 0 || r[0].Name != results[0][0].Name {
			t.Errorf("scrape %d: %v", i, r)
		}
	}
}
