package core_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
)

// TestRecentApprovals: the closed requests come newest first (by their
// decision, or their expiry), with who decided each; the pending one is
// not among them, and n bounds the list.
func TestRecentApprovals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := coretest.Store(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	file := func(id string, created time.Time, ttl time.Duration) {
		t.Helper()
		a := store.Approval{ID: id, Kind: core.KindToolCall, Chat: "c", Turn: 1, Tool: "run_shell", Args: `{"command":"` + id + `"}`,
			ArgsHash: "h", Summary: "Tool: run_shell " + id, CreatedAt: created, ExpiresAt: created.Add(ttl)}
		if err := st.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	file("old", at, time.Hour)
	file("expired", at, 10*time.Minute)
	file("denied", at, time.Hour)
	file("waiting", at, 24*time.Hour)
	if _, err := st.Decide(ctx, "old", true, "telegram", at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ExpirePending(ctx, at.Add(15*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Decide(ctx, "denied", false, "web", at.Add(20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	r, err := core.NewReader(core.Options{Store: st, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.RecentApprovals(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ id, state, by string }
	want := []row{{"denied", "denied", "web"}, {"expired", "expired", ""}, {"old", "approved", "telegram"}}
	if len(got) != len(want) {
		t.Fatalf("RecentApprovals = %+v, want %v", got, want)
	}
	for i, w := range want {
		g := got[i]
		if (row{g.ID, g.State, g.DecidedBy}) != w {
			t.Errorf("[%d] = %s %s %q, want %v", i, g.ID, g.State, g.DecidedBy, w)
		}
		if g.Arguments != `{"command":"`+w.id+`"}` || g.Summary != "Tool: run_shell "+w.id {
			t.Errorf("[%d] arguments %q summary %q", i, g.Arguments, g.Summary)
		}
	}
	if !got[0].DecidedAt.Equal(at.Add(20*time.Minute)) || !got[1].DecidedAt.IsZero() {
		t.Errorf("decided at %v, %v", got[0].DecidedAt, got[1].DecidedAt)
	}
	if got, err := r.RecentApprovals(ctx, 1); err != nil || len(got) != 1 || got[0].ID != "denied" {
		t.Errorf("RecentApprovals(1) = %+v, %v", got, err)
	}
}
