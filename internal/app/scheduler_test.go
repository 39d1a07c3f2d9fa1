package app

// The scheduler against a real store and a real core (coretest: the
// worker's loop in-process, a scripted model), inside a testing/synctest
// bubble: the clock is the bubble's, moved to a chosen date, so a day of
// schedules passes in milliseconds.

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/worker/scheduletools"
)

// schedBench is a daemon's schedules without the daemon: a store, a core
// whose workers have the schedule tool and a RISKY launch, the desk and a
// scheduler, on a clock that reads start at the bubble's beginning.
type schedBench struct {
	t     *testing.T
	path  string
	st    *store.Store
	core  *core.Core
	model *coretest.Model
	risky *coretest.Risky
	cfg   *config.Config
	now   func() time.Time
	desk  *scheduleDesk

	mu        sync.Mutex
	ran       []time.Time // when each model call came, on the bench's clock
	delivered []string    // heads handed to Telegram
	telegram  bool        // whether the deliver hook takes runs
	poll      time.Duration

	stop    context.CancelFunc
	stopped chan struct{}
}

// newSchedBench builds a bench inside the bubble whose clock reads start
// now, with the schedules' zone and quiet hours.
func newSchedBench(t *testing.T, start time.Time, zone, quiet string) *schedBench {
	t.Helper()
	epoch := time.Now()
	b := &schedBench{t: t, path: coretest.StorePath(t), model: &coretest.Model{}, risky: coretest.NewRisky("launch"),
		now: func() time.Time { return start.Add(time.Since(epoch)) }}
	b.cfg = &config.Config{Schedules: config.SchedulesConfig{Timezone: zone, QuietHours: quiet}}
	b.open()
	return b
}

// open opens a new store handle and a new core and desk over it: the
// daemon's start, or its restart.
func (b *schedBench) open() {
	b.t.Helper()
	b.st = coretest.Reopen(b.t, b.path)
	b.desk = &scheduleDesk{st: b.st, cfg: func() *config.Config { return b.cfg }, now: b.now, log: slog.New(slog.DiscardHandler),
		wake: make(chan struct{}, 1)}
	sp := &coretest.Spawner{Build: coretest.Builder(b.risky.Tools, func(_ contracts.Job, d worker.Daemon) []*worker.Tool {
		reg := worker.NewRegistry()
		if err := scheduletools.Register(reg, d); err != nil {
			panic(err)
		}
		t, _ := reg.Get(contracts.ToolSchedule)
		return []*worker.Tool{t}
	})}
	c, err := core.New(core.Options{Store: b.st, Model: b.model, Spawner: sp, Schedules: b.desk, Now: b.now,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.t.Fatal(err)
	}
	b.core = c
}

// start runs a scheduler until stopSched.
func (b *schedBench) start() {
	// Waits only for what is due or a change: the bubble's clock changes
	// only as the test moves it.
	s := &scheduler{st: b.st, turns: b.core, cfg: func() *config.Config { return b.cfg }, wake: b.desk.wake, now: b.now,
		log: slog.New(slog.DiscardHandler), poll: b.poll}
	if s.poll == 0 {
		s.poll = 24 * time.Hour
	}
	s.deliver = func(_ store.Schedule, head string, _ core.Outcome) bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.telegram {
			b.delivered = append(b.delivered, head)
		}
		return b.telegram
	}
	stop, cancel := context.WithCancel(context.Background())
	b.stop, b.stopped = cancel, make(chan struct{})
	b.t.Cleanup(b.stopSched)
	go func() {
		defer close(b.stopped)
		s.run(stop, context.Background())
	}()
	synctest.Wait()
}

// stopSched stops the scheduler and waits for it.
func (b *schedBench) stopSched() {
	if b.stop != nil {
		b.stop()
		<-b.stopped
	}
}

// answer scripts n model answers "done", each recording when it came.
func (b *schedBench) answer(n int) {
	for range n {
		b.model.Script(func(context.Context, contracts.Request) (contracts.Completion, error) {
			b.mu.Lock()
			b.ran = append(b.ran, b.now())
			b.mu.Unlock()
			return coretest.Completion("done"), nil
		})
	}
}

// create makes a schedule as an approved call would.
func (b *schedBench) create(when string) store.Schedule {
	b.t.Helper()
	msg, err := b.desk.Create(context.Background(), core.NewSchedule{When: when, Prompt: "water the plants", Chat: "terminal",
		Approval: "req-" + when, ApprovedBy: "terminal"})
	if err != nil {
		b.t.Fatalf("Create(%q): %v", when, err)
	}
	list, _ := b.st.Schedules(context.Background(), false)
	sc := list[len(list)-1]
	if !strings.Contains(msg, "Schedule ") || sc.When == "" {
		b.t.Fatalf("Create(%q) = %q, %+v", when, msg, sc)
	}
	return sc
}

// inputs are the messages of the scheduled turns the model saw.
func (b *schedBench) inputs() []string {
	var out []string
	for _, r := range b.model.Requests() {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == contracts.RoleUser {
			out = append(out, r.Messages[n-1].Text)
		}
	}
	return out
}

func (b *schedBench) ranAt() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Time(nil), b.ran...)
}

func (b *schedBench) schedule(id int64) store.Schedule {
	b.t.Helper()
	sc, err := b.st.Schedule(context.Background(), id)
	if err != nil {
		b.t.Fatal(err)
	}
	return sc
}

// sleepUntil moves the bubble's clock to the bench's t and lets everything
// due by then happen.
func (b *schedBench) sleepUntil(t time.Time) {
	if d := t.Sub(b.now()); d > 0 {
		time.Sleep(d)
	}
	synctest.Wait()
}

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestSchedulerFires: an interval's first run comes right after it is
// created, then one every interval, each a turn of the schedule's own
// chat headed by shelldon's note, its reply kept in the inbox.
func TestSchedulerFires(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := utc("2025-06-02 08:00")
		b := newSchedBench(t, t0, "UTC", "")
		b.answer(3)
		b.start()
		sc := b.create("every 30m")
		synctest.Wait()
		b.sleepUntil(t0.Add(61 * time.Minute))
		b.stopSched()

		want := []time.Time{t0, t0.Add(30 * time.Minute), t0.Add(time.Hour)}
		if got := b.ranAt(); !equalTimes(got, want) {
			t.Errorf("runs at %v, want %v", got, want)
		}
		for _, in := range b.inputs() {
			if !strings.HasPrefix(in, "[shelldon: this is a scheduled run of schedule 1 (\"every 30m\", UTC), due at Mon 2 Jun 2025 ") ||
				strings.Contains(in, "late") || !strings.HasSuffix(in, "\n\nwater the plants") {
				t.Errorf("a run's message = %q", in)
			}
		}
		got := b.schedule(sc.ID)
		if !got.NextDue.Equal(t0.Add(90*time.Minute)) || !strings.HasPrefix(got.LastOutcome, "ok, turn ") {
			t.Errorf("after three runs: %+v", got)
		}
		items, _ := b.st.Inbox(context.Background(), true, 0)
		if len(items) != 3 || !strings.HasPrefix(items[0].Text, "⏰ Schedule 1 (every 30m), due Mon 2 Jun 2025 08:00 UTC:\n\ndone") {
			t.Errorf("inbox = %+v", items)
		}
		hist, _ := b.st.History(context.Background(), core.ScheduleChat(sc.ID), 100000)
		if len(hist) != 6 {
			t.Errorf("the schedule's chat holds %d messages, want 6", len(hist))
		}
	})
}

// TestSchedulerCatchesUpOnce: runs missed while shelldon was down fold
// into one late run that says so; the schedule goes on at its times.
func TestSchedulerCatchesUpOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := utc("2025-06-02 08:00")
		b := newSchedBench(t, t0, "UTC", "")
		sc := b.create("every 30m")
		// Down for 3h10m: no scheduler ran.
		b.sleepUntil(t0.Add(190 * time.Minute))
		b.answer(2)
		b.start()
		if got := b.ranAt(); !equalTimes(got, []time.Time{t0.Add(190 * time.Minute)}) {
			t.Fatalf("after the downtime, runs at %v; want one, now", got)
		}
		in := b.inputs()[0]
		for _, want := range []string{"due at Mon 2 Jun 2025 08:00 UTC", "it runs late, at Mon 2 Jun 2025 11:10 UTC, because shelldon was not running",
			"6 later run(s) due meanwhile are folded into this one"} {
			if !strings.Contains(in, want) {
				t.Errorf("the late run's message %q lacks %q", in, want)
			}
		}
		if got := b.schedule(sc.ID); !got.NextDue.Equal(t0.Add(210 * time.Minute)) {
			t.Errorf("next due %s, want 11:30", got.NextDue)
		}
		b.sleepUntil(t0.Add(211 * time.Minute))
		b.stopSched()
		if got := b.ranAt(); len(got) != 2 || !got[1].Equal(t0.Add(210*time.Minute)) {
			t.Errorf("runs at %v; the next one on time at 11:30", got)
		}
		if in := b.inputs()[1]; strings.Contains(in, "late") || strings.Contains(in, "folded") {
			t.Errorf("the run after the catch-up says %q", in)
		}
		items, _ := b.st.Inbox(context.Background(), true, 0)
		if len(items) != 2 || !strings.Contains(items[0].Text, "ran late at 11:10 UTC (shelldon was not running or was busy); 6 missed run(s) folded in") {
			t.Errorf("inbox = %+v", items)
		}
	})
}

// TestSchedulerQuietHours: a run due in the quiet hours (on the zone's
// clock) runs once when they end.
func TestSchedulerQuietHours(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// 12:00 in Berlin (CEST, UTC+2).
		t0 := utc("2025-06-02 10:00")
		b := newSchedBench(t, t0, "Europe/Berlin", "22:00-07:00")
		b.answer(5)
		b.start()
		b.create("every day at 23:00")
		b.create("every 2h")
		synctest.Wait()
		// every 2h: 12:00, 14:00, ... 20:00 run; 22:00, 00:00 ... 06:00 fold into 07:00.
		b.sleepUntil(utc("2025-06-03 04:59")) // 06:59 in Berlin
		if n := len(b.ranAt()); n != 5 {
			t.Fatalf("%d runs before the quiet hours ended, want 5 (12:00 to 20:00)", n)
		}
		b.answer(2)
		b.sleepUntil(utc("2025-06-03 05:01"))
		b.stopSched()
		got := b.ranAt()
		if len(got) != 7 || !got[5].Equal(utc("2025-06-03 05:00")) || !got[6].Equal(utc("2025-06-03 05:00")) {
			t.Fatalf("runs at %v; want the two held by the quiet hours at 07:00 Berlin, once each", got)
		}
		var daily, every string
		for _, in := range b.inputs()[5:] {
			if strings.Contains(in, "schedule 1 ") {
				daily = in
			} else {
				every = in
			}
		}
		if !strings.Contains(daily, "due at Mon 2 Jun 2025 23:00 CEST; it runs at Tue 3 Jun 2025 07:00 CEST, when the owner's quiet hours (22:00-07:00) end") ||
			strings.Contains(daily, "late") {
			t.Errorf("the daily run's message = %q", daily)
		}
		if !strings.Contains(every, "due at Mon 2 Jun 2025 22:00 CEST") || !strings.Contains(every, "4 later run(s)") {
			t.Errorf("the 2h run's message = %q", every)
		}
	})
}

// TestSchedulerClockChanges: a daily 02:30 in Berlin runs once on the
// nights the clocks change: at the jump in spring, at the first 02:30 in
// autumn.
func TestSchedulerClockChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		start time.Time
		want  []time.Time
	}{
		{"spring forward", utc("2025-03-29 12:00"), []time.Time{utc("2025-03-30 01:00"), utc("2025-03-31 00:30"), utc("2025-04-01 00:30")}},
		{"fall back", utc("2025-10-25 12:00"), []time.Time{utc("2025-10-26 00:30"), utc("2025-10-27 01:30"), utc("2025-10-28 01:30")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := newSchedBench(t, tc.start, "Europe/Berlin", "")
				b.answer(3)
				b.start()
				b.create("30 2 * * *")
				b.sleepUntil(tc.start.Add(3 * 24 * time.Hour))
				b.stopSched()
				if got := b.ranAt(); !equalTimes(got, tc.want) {
					t.Errorf("runs at %v, want %v", got, tc.want)
				}
			})
		})
	}
}

// TestSchedulerSurvivesRestart: next_due is in the store; a restarted
// daemon runs what came due while it was down, once, and a run a crash
// cut short runs again under its key, once.
func TestSchedulerSurvivesRestart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := utc("2025-06-02 08:00")
		b := newSchedBench(t, t0, "UTC", "")
		b.answer(1)
		b.start()
		sc := b.create("every 1h")
		synctest.Wait()
		b.stopSched()
		// The 09:00 run begins and the daemon dies in it: its turn is
		// left running under the run's key.
		b.sleepUntil(t0.Add(time.Hour))
		key := "sched:1:" + strconv.FormatInt(t0.Add(time.Hour).Unix(), 10)
		cut, err := b.st.BeginKeyedTurnAs(context.Background(), core.ScheduleChat(sc.ID), key, "cut short", b.now(), core.MaxAttempts,
			store.Origin{Kind: core.KindSchedule, Weight: 1})
		if err != nil || cut.Turn == 0 {
			t.Fatal(cut, err)
		}
		// Down until 10:30; a new handle on the store, a new core.
		b.sleepUntil(t0.Add(150 * time.Minute))
		b.open()
		b.answer(2)
		b.start()
		b.sleepUntil(t0.Add(181 * time.Minute))
		b.stopSched()
		got := b.ranAt()
		if !equalTimes(got, []time.Time{t0, t0.Add(150 * time.Minute), t0.Add(180 * time.Minute)}) {
			t.Fatalf("runs at %v; want 08:00, the 09:00 run once at 10:30, 11:00", got)
		}
		if in := b.inputs()[1]; !strings.Contains(in, "due at Mon 2 Jun 2025 09:00 UTC; it runs late") || !strings.Contains(in, "1 later run(s)") {
			t.Errorf("the run after the restart says %q", in)
		}
		after := b.schedule(sc.ID)
		if !after.NextDue.Equal(t0.Add(4*time.Hour)) || !strings.HasPrefix(after.LastOutcome, "ok") {
			t.Errorf("schedule after the restart: %+v", after)
		}
		// The cut-short turn is closed as interrupted; its run ran once more.
		if ti, err := b.st.Turn(context.Background(), cut.Turn); err != nil || ti.Error != store.Interrupted {
			t.Errorf("the cut-short turn: %+v, %v", ti, err)
		}
	})
}

// TestSchedulerBudgetSpent: a run the budget refuses is skipped and
// recorded, and the schedule moves on; nothing reaches the inbox.
func TestSchedulerBudgetSpent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := utc("2025-06-02 08:00")
		b := newSchedBench(t, t0, "UTC", "")
		bud := budget.Default()
		bud.DailyTurns = 1
		b.core.SetBudgets(bud)
		b.answer(1)
		b.start()
		sc := b.create("every 30m")
		b.sleepUntil(t0.Add(31 * time.Minute))
		b.stopSched()
		if n := len(b.ranAt()); n != 1 {
			t.Fatalf("%d runs, want 1: the budget allows one a day", n)
		}
		got := b.schedule(sc.ID)
		if !strings.HasPrefix(got.LastOutcome, "skipped: budget spent") || !got.NextDue.Equal(t0.Add(time.Hour)) {
			t.Errorf("after the refused run: %+v", got)
		}
		if items, _ := b.st.Inbox(context.Background(), true, 0); len(items) != 1 {
			t.Errorf("inbox = %+v; want the one run's", items)
		}
	})
}

// TestSchedulerRiskyCallParks: a RISKY call in a scheduled turn parks like
// any other, in the schedule's chat, and reaches the owner: through
// Telegram when it takes the run, else in the inbox.
func TestSchedulerRiskyCallParks(t *testing.T) {
	t.Parallel()
	for _, telegram := range []bool{false, true} {
		t.Run(map[bool]string{false: "inbox", true: "telegram"}[telegram], func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := utc("2025-06-02 08:00")
				b := newSchedBench(t, t0, "UTC", "")
				b.telegram = telegram
				b.model.Script(coretest.Reply("Launching.", coretest.Call("c1", "launch", `{"target":"/garden"}`)))
				b.start()
				sc := b.create("every 1h")
				synctest.Wait()
				b.stopSched()
				pending, err := b.core.Approvals(context.Background())
				if err != nil || len(pending) != 1 || pending[0].Chat != core.ScheduleChat(sc.ID) || pending[0].Tool != "launch" {
					t.Fatalf("pending = %+v, %v", pending, err)
				}
				if len(b.risky.Runs()) != 0 {
					t.Error("the RISKY call ran before the owner decided")
				}
				items, _ := b.st.Inbox(context.Background(), true, 0)
				if telegram {
					if len(items) != 0 || len(b.delivered) != 1 {
						t.Errorf("inbox %+v, delivered %v; want Telegram to take it", items, b.delivered)
					}
				} else if len(items) != 1 || !strings.Contains(items[0].Text, pending[0].ID) {
					t.Errorf("inbox = %+v; want the request %s in it", items, pending[0].ID)
				}
				if got := b.schedule(sc.ID); !strings.HasPrefix(got.LastOutcome, "waits for your approval") {
					t.Errorf("outcome %q", got.LastOutcome)
				}
			})
		})
	}
}

func equalTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// TestSchedulerSeesOtherProcesses: a schedule another process created (a
// decision carried out by a command that found no daemon) wakes no one,
// and runs within the scheduler's poll.
func TestSchedulerSeesOtherProcesses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := utc("2025-06-02 08:00")
		b := newSchedBench(t, t0, "UTC", "")
		b.poll = maxSleep
		b.answer(1)
		b.start()
		other := &scheduleDesk{st: coretest.Reopen(t, b.path), cfg: b.desk.cfg, now: b.now, log: b.desk.log, wake: make(chan struct{}, 1)}
		if _, err := other.Create(context.Background(), core.NewSchedule{When: "every 30m", Prompt: "water", Chat: "cli"}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := len(b.ranAt()); n != 0 {
			t.Fatalf("%d runs before the poll", n)
		}
		b.sleepUntil(t0.Add(maxSleep))
		if got := b.ranAt(); !equalTimes(got, []time.Time{t0.Add(maxSleep)}) {
			t.Errorf("runs at %v; want one at the poll, %s after", got, maxSleep)
		}
	})
}

// TestCapInbox: a long reply is cut between characters, with where the
// whole of it is.
func TestCapInbox(t *testing.T) {
	t.Parallel()
	if got := capInbox("short", "sched:1", 3); got != "short" {
		t.Errorf("capInbox(short) = %q", got)
	}
	long := strings.Repeat("é", maxInboxText) // two bytes each
	got := capInbox(long, "sched:1", 3)
	if len(got) > maxInboxText+200 || !utf8.ValidString(got) || !strings.HasSuffix(got, "the whole reply is turn 3 of the conversation sched:1]") {
		t.Errorf("capInbox(long) = %d bytes, valid %v, ends %q", len(got), utf8.ValidString(got), got[len(got)-80:])
	}
}
