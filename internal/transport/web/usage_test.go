package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/core"
)

// fakeUsage records the days it was asked for.
type fakeUsage struct {
	mu   sync.Mutex
	days []int
}

func (f *fakeUsage) UsageReport(_ context.Context, days int) (core.UsageReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.days = append(f.days, days)
	return core.UsageReport{Zone: "UTC", Total: core.UsageLine{Key: "total", Calls: 2, USD: 1234 * budget.Microdollar},
		Days: []core.UsageLine{}, Models: []core.UsageLine{}, Chats: []core.UsageLine{}, Origins: []core.UsageLine{},
		Budgets: []core.BudgetView{{Name: budget.DailyUSD, Unit: "usd", Used: "0.001234", Limit: "5.00"}}}, nil
}

// TestUsageAPI: GET /api/usage needs the token, takes days (1 to 366,
// default 30) and nothing else, and answers the report with dollars as
// exact decimal strings.
func TestUsageAPI(t *testing.T) {
	t.Parallel()
	u := &fakeUsage{}
	s, err := New(Options{Chat: &fakeCore{}, Approvals: &fakeCore{}, Audit: &fakeCore{}, Usage: u, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	auth := map[string]string{"Authorization": "Bearer " + token}

	if code, _ := do(t, srv, "GET", "/api/usage", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	code, body := do(t, srv, "GET", "/api/usage", auth, "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/usage = %d %v", code, body)
	}
	total, _ := body["total"].(map[string]any)
	if total["usd"] != "0.001234" || total["calls"] != float64(2) || body["zone"] != "UTC" {
		t.Errorf("body = %v", body)
	}
	if code, _ := do(t, srv, "GET", "/api/usage?days=366", auth, ""); code != http.StatusOK {
		t.Errorf("days=366: %d", code)
	}
	for _, q := range []string{"?days=0", "?days=367", "?days=x", "?days=1&days=2", "?by=model"} {
		if code, body := do(t, srv, "GET", "/api/usage"+q, auth, ""); code != http.StatusBadRequest {
			t.Errorf("%s: %d %v; want 400", q, code, body)
		}
	}
	if code, _ := do(t, srv, "POST", "/api/usage", auth, "{}"); code == http.StatusOK {
		t.Error("POST /api/usage answered 200")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.days) != 2 || u.days[0] != 30 || u.days[1] != 366 {
		t.Errorf("asked for %v days; want [30 366]", u.days)
	}
}
