package telegram

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// TestDeliverRecoveredTurn: the outcome of a turn recovery carried on
// reaches its Telegram chat with a note that says why it comes unasked,
// and with a card for a request it parked; one asked for before Run waits
// for Run. Another transport's chat is not the bot's.
func TestDeliverRecoveredTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		api, fc := newFakeAPI(), newFakeCore()
		b, err := New(Options{Token: testToken, APIBase: fakeBase, HTTPClient: &http.Client{Transport: api},
			AllowedUsers: []int64{owner}, Core: fc, Logger: slog.New(slog.DiscardHandler), PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		card := riskyView()
		if !b.Deliver("tg:42", core.Outcome{Turn: 7, Reply: "Done: the file is written.", Approvals: []core.ApprovalView{card}}) {
			t.Error("Deliver refused a Telegram chat")
		}
		for _, chat := range []string{"default", "web:1", "tg:", "tg:x", "tgx:42"} {
			if b.Deliver(chat, core.Outcome{Reply: "no"}) {
				t.Errorf("Deliver(%q) took a chat that is not Telegram's", chat)
			}
		}
		idle()
		if n := len(api.callsOf("sendMessage")); n != 0 {
			t.Fatalf("%d messages sent before Run", n)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx) }()
		idle()
		b.Deliver("tg:42", core.Outcome{Turn: 8, Reply: "And the second one."})
		idle()
		for _, want := range []string{"Done: the file is written.", "And the second one."} {
			if n := len(api.sent(want)); n != 1 {
				t.Errorf("%q sent %d times, want 1", want, n)
			}
		}
		if n := len(api.sent("was interrupted before its turn finished")); n != 2 {
			t.Errorf("%d notes, want one per recovered turn", n)
		}
		if n := len(api.sent(card.ID)); n == 0 {
			t.Errorf("no card for the request the recovered turn parked")
		}
		cancel()
		<-done
	})
}
