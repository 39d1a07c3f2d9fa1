package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/schedule"
	"github.com/shelldon/shelldon/internal/transport/web"
	"github.com/shelldon/shelldon/internal/worker/scheduletools"
)

// scheduleDesk is the app's side of the schedules: it creates the schedule
// an approved schedule call asks for (core.Schedules), carries out the
// owner's commands on them, reads the inbox, and wakes the daemon's
// scheduler (scheduler.go) on every change. The zone and quiet hours are
// the config's in force (schedules.timezone, schedules.quiet_hours).
type scheduleDesk struct {
	st   *store.Store
	cfg  func() *config.Config
	now  func() time.Time
	log  *slog.Logger
	wake chan struct{} // a change the scheduler must see; holds one
}

var _ core.Schedules = (*scheduleDesk)(nil)

// localZone is how a schedule records the system's own zone
// (schedules.timezone empty).
const localZone = "Local"

// scheduleLimit bounds the schedules that may be active or paused at once.
const scheduleLimit = 100

// schedules is the App's schedule desk, made once.
func (a *App) schedules() *scheduleDesk {
	a.schedOnce.Do(func() {
		a.sched = &scheduleDesk{st: a.Store, cfg: a.current, now: timeNow, log: a.Log, wake: make(chan struct{}, 1)}
	})
	return a.sched
}

// changed wakes the scheduler.
func (d *scheduleDesk) changed() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// zone is the config's zone for schedules, with the name a schedule
// records.
func zoneOf(cfg *config.Config) (string, *time.Location) {
	if cfg.Schedules.Timezone == "" {
		return localZone, time.Local
	}
	return cfg.Schedules.Timezone, cfg.Location()
}

// quiet is the config's quiet hours and their zone; validated at load.
func quietOf(cfg *config.Config) (schedule.Quiet, *time.Location) {
	q, _ := schedule.ParseQuiet(cfg.Schedules.QuietHours)
	_, loc := zoneOf(cfg)
	return q, loc
}

// loadZone is a schedule's recorded zone.
func loadZone(name string) (*time.Location, error) {
	if name == localZone || name == "" {
		return time.Local, nil
	}
	return time.LoadLocation(name)
}

// Create makes the schedule of an approved call, in the zone in force,
// once per approval, and says what it did.
func (d *scheduleDesk) Create(ctx context.Context, ns core.NewSchedule) (string, error) {
	if err := scheduletools.Check(scheduletools.Args{When: ns.When, Prompt: ns.Prompt}); err != nil {
		return "", err
	}
	spec, _ := schedule.Parse(ns.When)
	cfg := d.cfg()
	zone, loc := zoneOf(cfg)
	list, err := d.st.Schedules(ctx, false)
	if err != nil {
		return "", err
	}
	if len(list) >= scheduleLimit {
		return "", fmt.Errorf("schedule: the owner has %d schedules already, the most there may be; they can remove one with shelldon schedules remove ID", len(list))
	}
	now := d.now()
	first := spec.First(now, loc)
	if first.IsZero() {
		return "", fmt.Errorf("schedule: %q never runs", spec.String())
	}
	sc, err := d.st.CreateSchedule(ctx, store.Schedule{When: spec.String(), Timezone: zone, Prompt: ns.Prompt, Chat: ns.Chat,
		CreatedAt: now, Approval: ns.Approval, ApprovedBy: ns.ApprovedBy, NextDue: first})
	if err != nil {
		return "", err
	}
	d.changed()
	d.log.Info("schedule created", "schedule", sc.ID, "when", sc.When, "timezone", sc.Timezone, "by", sc.ApprovedBy)
	q, qloc := quietOf(cfg)
	var runs []string
	for _, r := range upcoming(spec, sc.NextDue, sc.CreatedAt, loc, q, qloc, 3) {
		runs = append(runs, r.At.In(loc).Format(cardTime))
	}
	return fmt.Sprintf("Schedule %d is set: %s (%s). Its next runs: %s. Each run is a turn of its own conversation (%s); the owner sees what it says. The owner lists, pauses and removes schedules with `shelldon schedules`.",
		sc.ID, sc.When, sc.Timezone, strings.Join(runs, "; "), core.ScheduleChat(sc.ID)), nil
}

// cardTime is how a run time reads on the owner's card and lists.
const cardTime = "Mon 2 Jan 2006 15:04 MST"

// run is a run as it will happen: due then by the schedule, at At.
type run struct{ Due, At time.Time }

// upcoming is the next n runs from first as they will happen: a run due in
// the quiet hours at their end, runs that fall to the same time once.
func upcoming(spec schedule.Spec, first, anchor time.Time, loc *time.Location, q schedule.Quiet, qloc *time.Location, n int) []run {
	var out []run
	for t, i := first, 0; !t.IsZero() && len(out) < n && i < 2000; t, i = spec.Next(t, anchor, loc), i+1 {
		at := q.End(t, qloc)
		if k := len(out); k > 0 && !at.After(out[k-1].At) {
			continue // folded into the run before it
		}
		out = append(out, run{Due: t, At: at})
	}
	return out
}

// scheduleCard is the daemon's facts on the owner's card of a schedule
// call: how the `when` reads, the zone, the next three runs computed here
// (never by the model), the quiet hours, where the results go.
func scheduleCard(home string, environ []string, when string, now time.Time) []string {
	spec, err := schedule.Parse(when)
	if err != nil {
		return []string{"Would be refused: " + err.Error()}
	}
	cfg, err := config.Load(home, environ)
	if err != nil {
		return []string{"The config does not load, so this cannot be scheduled now: " + err.Error()}
	}
	zone, loc := zoneOf(cfg)
	lines := []string{"Schedule: " + spec.String() + ": " + spec.Describe()}
	if zone == localZone {
		lines = append(lines, "Time zone: this system's local zone ("+now.In(loc).Format("MST")+"); set schedules.timezone to name one")
	} else {
		lines = append(lines, "Time zone: "+zone+" (schedules.timezone)")
	}
	q, qloc := quietOf(cfg)
	var runs []string
	for _, r := range upcoming(spec, spec.First(now, loc), now, loc, q, qloc, 3) {
		s := r.At.In(loc).Format(cardTime)
		if !r.At.Equal(r.Due) {
			s += " (due " + r.Due.In(loc).Format("15:04") + ", after the quiet hours)"
		}
		runs = append(runs, s)
	}
	lines = append(lines, "Next runs if you approve now: "+strings.Join(runs, "; "))
	if !q.IsZero() {
		lines = append(lines, "Quiet hours: "+q.String()+" (schedules.quiet_hours): a run due then waits until "+q.Until()+" and runs once")
	}
	where := "your inbox (shown when `shelldon chat` starts, GET /api/inbox)"
	if cfg.Secret(cfg.Telegram.TokenEnv) != "" && len(cfg.Telegram.AllowedUsers) > 0 {
		where = "your Telegram chat"
	}
	return append(lines,
		"Each run is a new turn of the schedule's own conversation, with the prompt above as its message; its reply goes to "+where+
			"; a RISKY call in it asks you like any other. Every run counts against budget.daily_turns",
		"Manage it with `shelldon schedules list|pause|resume|remove`")
}

// auditScheduleKinds are the audit kinds of the owner's commands on a
// schedule (web.ScheduleActions).
var auditScheduleKinds = map[string]string{
	web.SchedulePause: "schedule_paused", web.ScheduleResume: "schedule_resumed", web.ScheduleRemove: "schedule_removed",
}

var _ web.ScheduleKeeper = (*App)(nil)

// Schedules lists the schedules that are not removed, each with when it
// runs next, quiet hours counted.
func (a *App) Schedules(ctx context.Context) ([]core.ScheduleView, error) {
	d := a.schedules()
	list, err := d.st.Schedules(ctx, false)
	if err != nil {
		return nil, err
	}
	out := make([]core.ScheduleView, 0, len(list))
	for _, sc := range list {
		out = append(out, d.view(sc))
	}
	return out, nil
}

// view is a schedule as the owner sees it.
func (d *scheduleDesk) view(sc store.Schedule) core.ScheduleView {
	v := core.ScheduleView{ID: sc.ID, When: sc.When, Timezone: sc.Timezone, Prompt: sc.Prompt, Chat: sc.Chat,
		RunsIn: core.ScheduleChat(sc.ID), State: sc.State, CreatedAt: sc.CreatedAt, ApprovedBy: sc.ApprovedBy,
		LastRunAt: sc.LastRunAt, LastOutcome: sc.LastOutcome}
	if sc.State == store.ScheduleActive && !sc.NextDue.IsZero() {
		q, qloc := quietOf(d.cfg())
		v.NextRun = schedule.PlanRun(sc.NextDue, d.now(), q, qloc).At
	}
	return v
}

// ScheduleAction pauses, resumes or removes schedule id, audited as done
// by by, and returns it as it is now. A resumed schedule runs next at its
// first time after now: what it missed while paused does not run. A
// refusal wraps web.ErrNoSchedule or web.ErrScheduleRefused.
func (a *App) ScheduleAction(ctx context.Context, id int64, action, by string) (core.ScheduleView, error) {
	d := a.schedules()
	sc, err := d.st.Schedule(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return core.ScheduleView{}, refusal{fmt.Errorf("no schedule %d", id), web.ErrNoSchedule}
	}
	if err != nil {
		return core.ScheduleView{}, err
	}
	var (
		state = store.SchedulePaused
		next  time.Time
	)
	switch action {
	case web.SchedulePause:
	case web.ScheduleRemove:
		state = store.ScheduleRemoved
	case web.ScheduleResume:
		spec, err := schedule.Parse(sc.When)
		if err != nil {
			return core.ScheduleView{}, refusal{fmt.Errorf("schedule %d cannot run: %v", id, err), web.ErrScheduleRefused}
		}
		loc, err := loadZone(sc.Timezone)
		if err != nil {
			return core.ScheduleView{}, refusal{fmt.Errorf("schedule %d cannot run: its time zone: %v", id, err), web.ErrScheduleRefused}
		}
		state, next = store.ScheduleActive, spec.Next(d.now(), sc.CreatedAt, loc)
	default:
		return core.ScheduleView{}, refusal{fmt.Errorf("no action %q (%s)", action, strings.Join(web.ScheduleActions, ", ")), web.ErrScheduleRefused}
	}
	sc, err = d.st.SetScheduleState(ctx, id, state, next)
	if errors.Is(err, store.ErrScheduleRemoved) {
		return core.ScheduleView{}, refusal{fmt.Errorf("schedule %d was removed", id), web.ErrScheduleRefused}
	}
	if err != nil {
		return core.ScheduleView{}, err
	}
	d.changed()
	kind := auditScheduleKinds[action]
	if _, err := a.Store.AppendAudit(context.WithoutCancel(ctx), store.AuditEntry{
		At: d.now(), Kind: kind, Tool: contracts.ToolSchedule, Args: fmt.Sprintf(`{"id":%d}`, id), Summary: "schedule " + fmt.Sprint(id) + " by " + by, OK: true,
	}); err != nil {
		a.Log.Error("audit", "kind", kind, "schedule", id, "err", err)
	}
	return d.view(sc), nil
}

// Inbox lists what scheduled runs said (unreadOnly: what the owner has
// not read), oldest first.
func (a *App) Inbox(ctx context.Context, unreadOnly bool) ([]core.InboxItem, error) {
	items, err := a.schedules().st.Inbox(ctx, unreadOnly, 0)
	if err != nil {
		return nil, err
	}
	out := make([]core.InboxItem, 0, len(items))
	for _, it := range items {
		out = append(out, core.InboxItem{ID: it.ID, Schedule: it.Schedule, Turn: it.Turn, Text: it.Text, CreatedAt: it.CreatedAt, Read: !it.ReadAt.IsZero()})
	}
	return out, nil
}

// MarkInboxRead marks the inbox read up to item upTo (what the owner was
// shown) and says how many items that was.
func (a *App) MarkInboxRead(ctx context.Context, upTo int64) (int, error) {
	d := a.schedules()
	return d.st.MarkInboxRead(ctx, upTo, d.now())
}
