package telegram

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestNotify: the daemon's own notice (a spent budget) reaches the
// private chat of every allowed user once, also when asked for before
// Run; a bot without allowed users has no one to tell.
func TestNotify(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		api, fc := newFakeAPI(), newFakeCore()
		b, err := New(Options{Token: testToken, APIBase: fakeBase, HTTPClient: &http.Client{Transport: api},
			AllowedUsers: []int64{owner, 77}, Core: fc, Logger: slog.New(slog.DiscardHandler), PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		const msg = "shelldon: self-driven turns (schedules) are stopped: the daily money budget (budget.daily_usd) is spent: $5.01 of $5.00 today"
		if !b.Notify(msg) {
			t.Fatal("Notify refused with allowed users")
		}
		idle()
		if n := len(api.callsOf("sendMessage")); n != 0 {
			t.Fatalf("%d messages sent before Run", n)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx) }()
		idle()
		var chats []string
		for _, c := range api.sent("budget.daily_usd") {
			chats = append(chats, c.str("chat_id"))
		}
		slices.Sort(chats)
		if !slices.Equal(chats, []string{"42", "77"}) {
			t.Errorf("sent to %q; want each allowed user's chat once", chats)
		}
		cancel()
		<-done

		lonely, err := New(Options{Token: testToken, APIBase: fakeBase, HTTPClient: &http.Client{Transport: newFakeAPI()},
			Core: newFakeCore(), Logger: slog.New(slog.DiscardHandler), PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if lonely.Notify(msg) {
			t.Error("Notify took a notice with no allowed user to send it to")
		}
	})
}
