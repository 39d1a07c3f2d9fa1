package store

import (
	"errors"
	"testing"
	"time"
)

func TestSchedulesLifecycle(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	t0 := time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)
	sc, err := s.CreateSchedule(ctx, Schedule{When: "every 30m", Timezone: "Europe/Berlin", Prompt: "water the plants",
		Chat: "terminal", CreatedAt: t0, Approval: "req1", ApprovedBy: "terminal", NextDue: t0})
	if err != nil || sc.ID == 0 || sc.State != ScheduleActive {
		t.Fatalf("CreateSchedule = %+v, %v", sc, err)
	}
	// One schedule per approval.
	again, err := s.CreateSchedule(ctx, Schedule{When: "every 1h", Timezone: "UTC", Prompt: "other", CreatedAt: t0, Approval: "req1"})
	if err != nil || again.ID != sc.ID || again.When != "every 30m" {
		t.Errorf("CreateSchedule with the same approval = %+v, %v; want the first", again, err)
	}
	if _, err := s.CreateSchedule(ctx, Schedule{When: "every 1h", Timezone: "UTC", Prompt: " ", CreatedAt: t0}); err == nil {
		t.Error("CreateSchedule accepted an empty prompt")
	}
	got, err := s.Schedule(ctx, sc.ID)
	if err != nil || !got.NextDue.Equal(t0) || got.Prompt != "water the plants" || got.ApprovedBy != "terminal" || !got.CreatedAt.Equal(t0) {
		t.Fatalf("Schedule = %+v, %v", got, err)
	}
	if _, err := s.Schedule(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Schedule(999) = %v", err)
	}

	// A run moves it on and keeps what it said.
	next := t0.Add(30 * time.Minute)
	if err := s.FinishScheduledRun(ctx, ScheduledRun{Schedule: sc.ID, Due: t0, At: t0.Add(time.Minute), Outcome: "ok", Next: next,
		Inbox: &InboxItem{Turn: 7, Text: "watered"}}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Schedule(ctx, sc.ID)
	if !got.NextDue.Equal(next) || got.LastOutcome != "ok" || !got.LastRunAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("after a run: %+v", got)
	}
	// A run for a due the schedule no longer waits for moves nothing.
	if err := s.FinishScheduledRun(ctx, ScheduledRun{Schedule: sc.ID, Due: t0, At: t0.Add(2 * time.Minute), Outcome: "late", Next: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.Schedule(ctx, sc.ID); !got.NextDue.Equal(next) {
		t.Errorf("a stale run moved next_due to %s", got.NextDue)
	}

	// Paused while it runs: the pause stands.
	if got, err = s.SetScheduleState(ctx, sc.ID, SchedulePaused, next); err != nil || got.State != SchedulePaused || !got.NextDue.IsZero() {
		t.Fatalf("pause = %+v, %v", got, err)
	}
	if err := s.FinishScheduledRun(ctx, ScheduledRun{Schedule: sc.ID, Due: next, At: next, Outcome: "ok", Next: next.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.Schedule(ctx, sc.ID); got.State != SchedulePaused || !got.NextDue.IsZero() {
		t.Errorf("a run after the pause changed it: %+v", got)
	}
	if got, err = s.SetScheduleState(ctx, sc.ID, ScheduleActive, next.Add(time.Hour)); err != nil || !got.NextDue.Equal(next.Add(time.Hour)) {
		t.Fatalf("resume = %+v, %v", got, err)
	}
	list, err := s.Schedules(ctx, false)
	if err != nil || len(list) != 1 {
		t.Fatalf("Schedules = %+v, %v", list, err)
	}
	if _, err := s.SetScheduleState(ctx, sc.ID, ScheduleRemoved, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetScheduleState(ctx, sc.ID, ScheduleActive, next); !errors.Is(err, ErrScheduleRemoved) {
		t.Errorf("resume a removed schedule = %v", err)
	}
	if _, err := s.SetScheduleState(ctx, 999, SchedulePaused, time.Time{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("pause an unknown schedule = %v", err)
	}
	if list, _ := s.Schedules(ctx, false); len(list) != 0 {
		t.Errorf("a removed schedule is listed: %+v", list)
	}
	if list, _ := s.Schedules(ctx, true); len(list) != 1 {
		t.Errorf("with removed: %+v", list)
	}

	// The inbox: unread first, then read.
	items, err := s.Inbox(ctx, true, 0)
	if err != nil || len(items) != 1 || items[0].Text != "watered" || items[0].Turn != 7 || items[0].Schedule != sc.ID {
		t.Fatalf("Inbox = %+v, %v", items, err)
	}
	if n, err := s.MarkInboxRead(ctx, items[0].ID, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("MarkInboxRead = %d, %v", n, err)
	}
	if items, _ := s.Inbox(ctx, true, 0); len(items) != 0 {
		t.Errorf("unread after marking: %+v", items)
	}
	if items, _ := s.Inbox(ctx, false, 0); len(items) != 1 || items[0].ReadAt.IsZero() {
		t.Errorf("all: %+v", items)
	}
}

// TestInboxKeepsUnreadAndPrunesRead: unread items are never dropped; once
// read, only the newest InboxKeep stay.
func TestInboxKeepsUnreadAndPrunesRead(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	t0 := time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)
	sc, err := s.CreateSchedule(ctx, Schedule{When: "every 5m", Timezone: "UTC", Prompt: "p", CreatedAt: t0, NextDue: t0})
	if err != nil {
		t.Fatal(err)
	}
	run := func(i int) {
		t.Helper()
		if err := s.FinishScheduledRun(ctx, ScheduledRun{Schedule: sc.ID, Due: t0, At: t0.Add(time.Duration(i) * time.Minute), Outcome: "ok",
			Inbox: &InboxItem{Turn: int64(i), Text: "run"}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range InboxKeep + 5 {
		run(i)
	}
	if items, _ := s.Inbox(ctx, true, 1000); len(items) != InboxKeep+5 {
		t.Fatalf("%d unread items, want every one of %d", len(items), InboxKeep+5)
	}
	if _, err := s.MarkInboxRead(ctx, 1<<40, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	run(InboxKeep + 5)
	items, _ := s.Inbox(ctx, false, 1000)
	if len(items) != InboxKeep || items[len(items)-1].Turn != InboxKeep+5 || !items[len(items)-1].ReadAt.IsZero() {
		t.Errorf("%d items after pruning (newest %+v), want %d with the new one unread", len(items), items[len(items)-1], InboxKeep)
	}
}
