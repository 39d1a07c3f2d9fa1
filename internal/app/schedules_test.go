package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/transport/web"
)

// TestScheduleToolApproved: the schedule tool parks with the daemon's
// card; approved, the schedule exists once, in the chat that asked, and
// the scheduler runs it at once (an interval's first run).
func TestScheduleToolApproved(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := utc("2025-06-02 08:00")
		b := newSchedBench(t, t0, "Europe/Berlin", "")
		b.start()
		args := `{"prompt":"water the plants","when":"every 2h"}`
		b.model.Script(coretest.Reply("I will ask.", coretest.Call("c1", contracts.ToolSchedule, args)))
		out, err := b.core.Send(context.Background(), "terminal", "water the plants every two hours", core.Events{})
		if err != nil || len(out.Approvals) != 1 {
			t.Fatalf("Send = %+v, %v", out, err)
		}
		if list, _ := b.st.Schedules(context.Background(), true); len(list) != 0 {
			t.Fatalf("a schedule exists before the owner decided: %+v", list)
		}
		// The resumed turn and the schedule's first run ask at once:
		// each step answers the one that asks.
		smart := func(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
			if n := len(req.Messages); n > 0 && len(req.Messages[n-1].ToolResults) > 0 {
				return coretest.Results(ctx, req)
			}
			b.mu.Lock()
			b.ran = append(b.ran, b.now())
			b.mu.Unlock()
			return coretest.Completion("done"), nil
		}
		b.model.Script(smart, smart)
		dec, err := b.core.Decide(context.Background(), out.Approvals[0].ID, true, "terminal", core.Events{})
		if err != nil || !strings.Contains(dec.Reply, "schedule ok=true Schedule 1 is set: every 2h (Europe/Berlin)") {
			t.Fatalf("Decide = %+v, %v", dec, err)
		}
		synctest.Wait()
		b.stopSched()
		list, _ := b.st.Schedules(context.Background(), true)
		if len(list) != 1 || list[0].Chat != "terminal" || list[0].ApprovedBy != "terminal" || list[0].Approval != out.Approvals[0].ID ||
			list[0].Timezone != "Europe/Berlin" || list[0].Prompt != "water the plants" {
			t.Fatalf("schedules = %+v", list)
		}
		if got := b.ranAt(); !equalTimes(got, []time.Time{t0}) {
			t.Errorf("runs at %v; want the first right after the approval", got)
		}
		audit, _ := b.core.Audit(context.Background(), core.AuditQuery{Limit: 20})
		found := false
		for _, e := range audit {
			found = found || (e.Kind == "schedule_created" && e.OK)
		}
		if !found {
			t.Errorf("no schedule_created audit row: %+v", audit)
		}
	})
}

// TestScheduleActions: the owner pauses, resumes and removes a schedule
// through the App (what the API and the commands call), each audited; a
// removed schedule stays removed.
func TestScheduleActions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := coretest.Store(t)
	t0 := utc("2025-06-02 08:00")
	clock := t0
	a := &App{Store: st, Log: slog.New(slog.DiscardHandler)}
	a.setConfig(&config.Config{Schedules: config.SchedulesConfig{Timezone: "UTC"}}, nil)
	a.schedOnce.Do(func() {
		a.sched = &scheduleDesk{st: st, cfg: a.current, now: func() time.Time { return clock }, log: a.Log, wake: make(chan struct{}, 1)}
	})
	if _, err := a.schedules().Create(ctx, core.NewSchedule{When: "0 9 * * *", Prompt: "news", Chat: "terminal"}); err != nil {
		t.Fatal(err)
	}
	<-a.sched.wake // a change wakes the scheduler
	v, err := a.ScheduleAction(ctx, 1, web.SchedulePause, "cli")
	if err != nil || v.State != "paused" || !v.NextRun.IsZero() {
		t.Fatalf("pause = %+v, %v", v, err)
	}
	clock = t0.Add(48 * time.Hour) // paused over two runs: they do not run
	v, err = a.ScheduleAction(ctx, 1, web.ScheduleResume, "http")
	if err != nil || v.State != "active" || !v.NextRun.Equal(utc("2025-06-04 09:00")) {
		t.Fatalf("resume = %+v, %v", v, err)
	}
	if _, err := a.ScheduleAction(ctx, 1, web.ScheduleRemove, "http"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ScheduleAction(ctx, 1, web.ScheduleResume, "http"); !errors.Is(err, web.ErrScheduleRefused) {
		t.Errorf("resume a removed schedule = %v", err)
	}
	if _, err := a.ScheduleAction(ctx, 9, web.SchedulePause, "http"); !errors.Is(err, web.ErrNoSchedule) {
		t.Errorf("pause an unknown schedule = %v", err)
	}
	if _, err := a.ScheduleAction(ctx, 1, "approve", "http"); !errors.Is(err, web.ErrScheduleRefused) {
		t.Errorf("an unknown action = %v", err)
	}
	if list, err := a.Schedules(ctx); err != nil || len(list) != 0 {
		t.Errorf("Schedules after the removal = %+v, %v", list, err)
	}
	entries, _ := st.Audit(ctx, store.AuditQuery{Limit: 10})
	var kinds []string
	for _, e := range entries {
		kinds = append(kinds, e.Kind+" "+e.Summary)
	}
	if want := "schedule_removed schedule 1 by http,schedule_resumed schedule 1 by http,schedule_paused schedule 1 by cli"; strings.Join(kinds, ",") != want {
		t.Errorf("audit = %q, want %q", kinds, want)
	}
}
