package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/schedule"
)

// The scheduler runs the schedules' turns in the daemon. It sleeps until
// the earliest run is due (quiet hours counted) or a schedule changes,
// then runs each due schedule's turn through core.SendSelf (the budget's
// gate), one run per schedule at a time, in the schedule's own chat
// (core.ScheduleChat), with a note saying it is a scheduled run and, when
// it is, that it runs late and why. Its key names the schedule and the due
// time, so a run a restart cut short is not run twice (core.SendOnce).
// Runs missed while shelldon was down fold into one late run; a run due
// in the quiet hours runs once when they end. The reply goes to the
// owner's Telegram chat when the bot is there (telegram.Bot.
// DeliverScheduled), else to the inbox, committed with the schedule's next
// due time. A run the budget refuses is skipped and recorded; core tells
// the owner once.

// selfSender runs a self-driven turn: core.Core.SendSelf.
type selfSender interface {
	SendSelf(ctx context.Context, chat, key, text, kind string) (core.Outcome, error)
}

// scheduler is the daemon's loop over the schedules.
type scheduler struct {
	st    *store.Store
	turns selfSender
	cfg   func() *config.Config
	// deliver hands a run's outcome to Telegram; false means no chat
	// took it, and it goes to the inbox. nil: the inbox always.
	deliver func(sc store.Schedule, head string, out core.Outcome) bool
	wake    <-chan struct{}
	now     func() time.Time
	log     *slog.Logger
	// poll bounds one wait; 0 is maxSleep.
	poll time.Duration

	mu      sync.Mutex
	running map[int64]bool      // schedules whose run is in flight
	retry   map[int64]time.Time // schedules to look at again no sooner than
	bad     map[int64]bool      // schedules that cannot run, logged once
	done    chan struct{}       // a run ended
}

// maxSleep bounds one wait: a clock the system changed, or a schedule
// another process changed in the store (a decision carried out by a
// command that found no daemon), is seen within it.
const maxSleep = time.Minute

// retryBusy is how long a run whose key's turn is running elsewhere waits.
const retryBusy = time.Minute

// runSchedules is the daemon's scheduler: it plans runs until stop ends,
// running their turns under work (which the drain cancels after its
// grace), and returns once the runs in flight have ended.
func (d *Daemon) runSchedules(stop, work context.Context) {
	a := d.app
	desk := a.schedules()
	s := &scheduler{st: a.Store, turns: a.Core, cfg: a.current, wake: desk.wake, now: timeNow, log: a.Log}
	if d.bot != nil {
		s.deliver = func(sc store.Schedule, head string, out core.Outcome) bool {
			return d.bot.DeliverScheduled(sc.Chat, head, out)
		}
	}
	s.run(stop, work)
}

// run plans and starts runs until stop ends, then waits for the runs in
// flight.
func (s *scheduler) run(stop, work context.Context) {
	s.running, s.retry, s.bad = map[int64]bool{}, map[int64]time.Time{}, map[int64]bool{}
	s.done = make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	for first := true; stop.Err() == nil; first = false {
		next, active, started := s.startDue(work, &wg)
		if first {
			s.log.Info("scheduler started", "active", active, "due_now", started, "next", next)
		}
		poll := s.poll
		if poll <= 0 {
			poll = maxSleep
		}
		wait := poll
		if !next.IsZero() {
			wait = min(max(next.Sub(s.now()), 0), poll)
		}
		timer := time.NewTimer(wait)
		select {
		case <-stop.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-s.wake:
		case <-s.done:
		}
		timer.Stop()
	}
}

// startDue starts the run of every schedule that is due now and returns
// when the next one falls due (zero: none), with how many schedules are
// active and how many runs it started.
func (s *scheduler) startDue(work context.Context, wg *sync.WaitGroup) (next time.Time, active, started int) {
	list, err := s.st.Schedules(work, false)
	if err != nil {
		s.log.Error("read the schedules", "err", err)
		return s.now().Add(time.Minute), 0, 0
	}
	cfg := s.cfg()
	q, qloc := quietOf(cfg)
	now := s.now()
	soonest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range list {
		if sc.State != store.ScheduleActive || sc.NextDue.IsZero() {
			continue
		}
		active++
		if s.running[sc.ID] {
			continue
		}
		if t, ok := s.retry[sc.ID]; ok && now.Before(t) {
			soonest(t)
			continue
		}
		spec, loc, err := parsed(sc)
		if err != nil {
			if !s.bad[sc.ID] {
				s.bad[sc.ID] = true
				s.log.Error("a schedule cannot run", "schedule", sc.ID, "err", err)
			}
			continue
		}
		plan := schedule.PlanRun(sc.NextDue, now, q, qloc)
		if plan.At.After(now) {
			soonest(plan.At)
			continue
		}
		delete(s.retry, sc.ID)
		s.running[sc.ID] = true
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.fire(work, sc, spec, loc, plan, q)
			s.mu.Lock()
			delete(s.running, sc.ID)
			s.mu.Unlock()
			select {
			case s.done <- struct{}{}:
			default:
			}
		}()
	}
	return next, active, started
}

// parsed is a stored schedule's spec and zone.
func parsed(sc store.Schedule) (schedule.Spec, *time.Location, error) {
	spec, err := schedule.Parse(sc.When)
	if err != nil {
		return schedule.Spec{}, nil, err
	}
	loc, err := loadZone(sc.Timezone)
	if err != nil {
		return schedule.Spec{}, nil, fmt.Errorf("time zone %q: %w", sc.Timezone, err)
	}
	return spec, loc, nil
}

// fire runs one run of sc planned as plan, delivers what it said and
// moves the schedule on, once the turn has ended.
func (s *scheduler) fire(ctx context.Context, sc store.Schedule, spec schedule.Spec, loc *time.Location, plan schedule.Plan, q schedule.Quiet) {
	started := s.now()
	missed := spec.Missed(plan.Due, started, sc.CreatedAt, loc, 1000)
	text := runNote(sc, loc, plan, started, missed, q) + "\n\n" + sc.Prompt
	key := fmt.Sprintf("sched:%d:%d", sc.ID, plan.Due.Unix())
	chat := core.ScheduleChat(sc.ID)
	s.log.Info("scheduled run", "schedule", sc.ID, "due", plan.Due, "late", plan.Late, "quiet", plan.Quiet, "missed", missed)
	out, err := s.turns.SendSelf(ctx, chat, key, text, core.KindSchedule)
	end := store.ScheduledRun{Schedule: sc.ID, Due: plan.Due, At: s.now(), Next: spec.Next(maxTime(started, plan.Due), sc.CreatedAt, loc)}
	switch {
	case errors.Is(err, core.ErrRunning):
		// The turn of this run is running in another process: look again
		// later, and never run it twice.
		s.mu.Lock()
		s.retry[sc.ID] = s.now().Add(retryBusy)
		s.mu.Unlock()
		return
	case out.Turn == 0 && ctx.Err() != nil:
		// Stopped before its turn began (shelldon is stopping): it stays
		// due, and runs (late) after the restart.
		return
	case errors.Is(err, core.ErrBudgetSpent):
		end.Outcome = "skipped: " + budgetReason(err)
		s.log.Warn("scheduled run skipped: a budget is spent", "schedule", sc.ID, "err", err)
	case out.Turn == 0:
		end.Outcome = "failed: " + errText(err)
		s.log.Error("scheduled run failed before its turn", "schedule", sc.ID, "err", err)
	default:
		end.Outcome = outcomeOf(out, err)
		head := runHead(sc, loc, plan, started, missed)
		if s.deliver == nil || !s.deliver(sc, head, out) {
			end.Inbox = &store.InboxItem{Turn: out.Turn, Text: capInbox(head+"\n\n"+deliveredText(out), chat, out.Turn)}
		}
	}
	if err := s.st.FinishScheduledRun(context.WithoutCancel(ctx), end); err != nil {
		s.log.Error("record a scheduled run", "schedule", sc.ID, "err", err)
		s.mu.Lock()
		s.retry[sc.ID] = s.now().Add(time.Minute)
		s.mu.Unlock()
	}
}

// maxInboxText caps one inbox item: the whole reply stays in the
// schedule's conversation.
const maxInboxText = 16 << 10

// capInbox is text within maxInboxText, cut between characters with a
// note saying where the rest is.
func capInbox(text, chat string, turn int64) string {
	if len(text) <= maxInboxText {
		return text
	}
	cut := maxInboxText
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n[… %d more bytes: the whole reply is turn %d of the conversation %s]", len(text)-cut, turn, chat)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// budgetReason is what ErrBudgetSpent's error says after it.
func budgetReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, core.ErrBudgetSpent.Error()); i >= 0 {
		return msg[i:]
	}
	return msg
}

func errText(err error) string {
	if err == nil {
		return "no turn"
	}
	return err.Error()
}

// outcomeOf is a run's outcome in a few words, for `schedules list`.
func outcomeOf(out core.Outcome, err error) string {
	var s string
	switch {
	case err != nil:
		s = "failed: " + err.Error()
	case out.Stopped == contracts.StopApproval:
		s = "waits for your approval"
	case out.Stopped != "":
		s = "stopped: " + out.Stopped
	default:
		s = "ok"
	}
	if out.Again != "" && out.Again != core.Rerun {
		s += " (" + out.Again + ")"
	}
	s = fmt.Sprintf("%s, turn %d", s, out.Turn)
	if len(s) > 300 {
		s = s[:300]
	}
	return strings.ToValidUTF8(s, "")
}

// deliveredText is a run's reply and what it asks of the owner, for the
// inbox.
func deliveredText(out core.Outcome) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(out.Reply))
	for _, a := range out.Approvals {
		if !strings.Contains(out.Reply, a.ID) {
			fmt.Fprintf(&b, "\n\nWaiting for your approval: request %s (%s): shelldon approvals show %s", a.ID, a.Tool, a.ID)
		}
	}
	return b.String()
}

// runTime is how a run's time reads in a note.
const runTime = "Mon 2 Jan 2006 15:04 MST"

// runNote is shelldon's note heading a scheduled run's message: which
// schedule, when it was due, and, for a run that does not run at its
// time, when it runs and why.
func runNote(sc store.Schedule, loc *time.Location, p schedule.Plan, at time.Time, missed int, q schedule.Quiet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "this is a scheduled run of schedule %d (%q, %s), due at %s", sc.ID, sc.When, sc.Timezone, p.Due.In(loc).Format(runTime))
	switch {
	case p.Late:
		fmt.Fprintf(&b, "; it runs late, at %s, because shelldon was not running (or was busy) then", at.In(loc).Format(runTime))
		if p.Quiet {
			fmt.Fprintf(&b, " and then the owner's quiet hours (%s) held it", q.String())
		}
	case p.Quiet:
		fmt.Fprintf(&b, "; it runs at %s, when the owner's quiet hours (%s) end", at.In(loc).Format(runTime), q.String())
	}
	if missed > 0 {
		fmt.Fprintf(&b, "; %d later run(s) due meanwhile are folded into this one", missed)
	}
	b.WriteString(". The owner approved this schedule and its prompt, which follows.")
	return contracts.Note(b.String()).Text
}

// runHead heads a run's reply for the owner.
func runHead(sc store.Schedule, loc *time.Location, p schedule.Plan, at time.Time, missed int) string {
	s := fmt.Sprintf("⏰ Schedule %d (%s), due %s", sc.ID, sc.When, p.Due.In(loc).Format(runTime))
	switch {
	case p.Late:
		s += fmt.Sprintf(", ran late at %s (shelldon was not running or was busy)", at.In(loc).Format("15:04 MST"))
	case p.Quiet:
		s += fmt.Sprintf(", ran at %s, after the quiet hours", at.In(loc).Format("15:04 MST"))
	}
	if missed > 0 {
		s += fmt.Sprintf("; %d missed run(s) folded in", missed)
	}
	return s + ":"
}
