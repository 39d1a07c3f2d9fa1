package telegram

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// lister is a ScheduleLister of fixed schedules.
type lister []core.ScheduleView

func (l lister) Schedules(context.Context) ([]core.ScheduleView, error) { return l, nil }

// TestDeliverScheduled: a scheduled run's outcome goes to the chat that
// asked for the schedule when that is a Telegram chat, else to every
// allowed user's private chat, headed by the daemon's words, with a card
// for what it parked; with nobody allowed it is not taken (it goes to the
// inbox). One asked for before Run waits for Run.
func TestDeliverScheduled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		api, fc := newFakeAPI(), newFakeCore()
		b, err := New(Options{Token: testToken, APIBase: fakeBase, HTTPClient: &http.Client{Transport: api},
			AllowedUsers: []int64{owner, 77}, Core: fc, Logger: slog.New(slog.DiscardHandler), PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		card := riskyView()
		if !b.DeliverScheduled("terminal", "⏰ Schedule 1 (every 30m), due 08:00:", core.Outcome{Turn: 7, Reply: "Watered <b>all</b>.", Approvals: []core.ApprovalView{card}}) {
			t.Fatal("DeliverScheduled refused")
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx) }()
		idle()
		if !b.DeliverScheduled("tg:77", "⏰ Schedule 2 (every 1h), due 09:00:", core.Outcome{Turn: 8, Reply: "Only for 77."}) {
			t.Fatal("DeliverScheduled refused a Telegram chat")
		}
		idle()
		chats := func(sub string) []int64 {
			var ids []int64
			for _, c := range api.sent(sub) {
				ids = append(ids, int64(c.Params["chat_id"].(float64)))
			}
			return ids
		}
		if got := chats("Schedule 1 (every 30m)"); len(got) != 2 || got[0] != owner || got[1] != 77 {
			t.Errorf("the head went to %v, want every allowed user", got)
		}
		if got := chats("Watered &lt;b&gt;all&lt;/b&gt;."); len(got) != 2 {
			t.Errorf("the reply, escaped, went to %v", got)
		}
		if n := len(api.sent(card.ID)); n != 2 {
			t.Errorf("%d cards, want one per chat", n)
		}
		if got := chats("Only for 77."); len(got) != 1 || got[0] != 77 {
			t.Errorf("the reply for the chat that asked went to %v", got)
		}
		cancel()
		<-done
		// Stopped: not taken, so the caller keeps it.
		if b.DeliverScheduled("terminal", "late", core.Outcome{Reply: "x"}) {
			t.Error("a stopped bot took a run")
		}
		nobody, err := New(Options{Token: testToken, APIBase: fakeBase, HTTPClient: &http.Client{Transport: api}, Core: fc,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if nobody.DeliverScheduled("terminal", "head", core.Outcome{Reply: "x"}) {
			t.Error("a bot that serves nobody took a run")
		}
	})
}

// TestSchedulesCommand: /schedules lists each schedule with its next run,
// the prompt inert.
func TestSchedulesCommand(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		next := time.Date(2025, 6, 2, 6, 0, 0, 0, time.UTC)
		l := lister{
			{ID: 1, When: "every day at 08:00", Timezone: "Europe/Berlin", Prompt: "summarise <script>\u202e the news", State: "active", NextRun: next},
			{ID: 2, When: "*/30 * * * *", Timezone: "UTC", Prompt: "check", State: "paused"},
		}
		api, fc := newFakeAPI(), newFakeCore()
		b, err := New(Options{Token: testToken, APIBase: fakeBase, HTTPClient: &http.Client{Transport: api},
			AllowedUsers: []int64{owner}, Core: fc, Schedules: l, Logger: slog.New(slog.DiscardHandler), PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx) }()
		api.push(textMsg(owner, owner, "/schedules"))
		api.waitFor(t, "/schedules", func() bool { return len(api.sent("Schedules:")) > 0 })
		text := api.sent("Schedules:")[0].str("text")
		for _, want := range []string{"1 every day at 08:00 (Europe/Berlin), next: Mon 2 Jun 08:00 CEST; ", "&lt;script&gt;", "2 */30 * * * * (UTC), paused; check"} {
			if !strings.Contains(text, want) {
				t.Errorf("/schedules = %q, lacks %q", text, want)
			}
		}
		if strings.Contains(text, "\u202e") || strings.Contains(text, "<script>") {
			t.Errorf("/schedules shows the prompt raw: %q", text)
		}
		cancel()
		<-done
	})
}
