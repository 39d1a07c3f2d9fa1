package telegram

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

func riskyView() core.ApprovalView {
	return core.ApprovalView{ID: store.NewApprovalID(), Kind: "tool_call", Chat: "tg:42", Tool: "run_shell",
		Summary: "Tool: run_shell\n  command: echo " + hostile, State: "pending", ExpiresAt: time.Now().Add(time.Hour)}
}

// parkOn makes every turn park a on the core's pending list, the way core
// words a parked turn.
func parkOn(fc *fakeCore, a core.ApprovalView) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.reply = func(context.Context, string, string) (core.Outcome, error) {
		fc.mu.Lock()
		fc.pending = append(fc.pending, a)
		fc.mu.Unlock()
		return core.Outcome{Turn: 1, Reply: fmt.Sprintf("This needs your approval (request %s, expires 15:04):\n%s", a.ID, a.Summary),
			Approvals: []core.ApprovalView{a}}, nil
	}
}

// cardFor waits for the card of request id and returns its call.
func cardFor(t *testing.T, api *fakeAPI, id string) apiCall {
	t.Helper()
	var card apiCall
	api.waitFor(t, "the card", func() bool {
		for _, c := range api.callsOf("sendMessage") {
			if slices.Contains(c.buttons(), approvePrefix+id) {
				card = c
				return true
			}
		}
		return false
	})
	return card
}

func edits(api *fakeAPI, sub string) []apiCall {
	var out []apiCall
	for _, c := range api.callsOf("editMessageText") {
		if strings.Contains(c.str("text"), sub) {
			out = append(out, c)
		}
	}
	return out
}

func TestRiskyCallMakesCard(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		a := riskyView()
		parkOn(h.core, a)
		h.api.push(textMsg(owner, owner, "run it"))
		card := cardFor(t, h.api, a.ID)
		data := card.buttons()
		if !slices.Equal(data, []string{"ap:" + a.ID, "dn:" + a.ID}) {
			t.Errorf("buttons = %q", data)
		}
		for _, d := range data {
			if len(d) > 64 {
				t.Errorf("callback data %q is %d bytes", d, len(d))
			}
		}
		text := card.str("text")
		if !strings.Contains(text, "<pre>Tool: run_shell\n  command: echo &lt;b&gt;x&lt;/b&gt; &amp; &lt;script&gt;</pre>") {
			t.Errorf("the card does not show the escaped summary in <pre>:\n%s", text)
		}
		if strings.Contains(text, "<script>") || strings.Contains(text, "<b>x") {
			t.Errorf("unescaped markup in the card:\n%s", text)
		}
		// The parked reply's rendering is the card's; it is not sent twice.
		idle()
		if n := len(h.api.sent("command: echo")); n != 1 {
			t.Errorf("the summary was sent %d times; want once (the card)", n)
		}
	})
}

func TestStrangerPressDecidesNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		a := riskyView()
		h.core.set(func(c *fakeCore) { c.pending = []core.ApprovalView{a} })
		h.api.push(press(strangerID, owner, 7, "card", "ap:"+a.ID))
		h.api.waitFor(t, "the answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 1 })
		idle()
		// A silent answer (it stops the spinner; no toast), and nothing
		// else: no card changed, no message, no decision; the stranger is
		// logged.
		if ans := h.api.callsOf("answerCallbackQuery")[0]; ans.Params["text"] != nil || ans.Params["show_alert"] != nil {
			t.Errorf("the stranger's press was answered with something to see: %+v", ans.Params)
		}
		for _, m := range []string{"editMessageText", "sendMessage", "sendChatAction", "sendDocument"} {
			if calls := h.api.callsOf(m); len(calls) != 0 {
				t.Errorf("a stranger's press made %s calls: %+v", m, calls)
			}
		}
		if d := h.core.decideCalls(); len(d) != 0 {
			t.Errorf("Decide called: %q", d)
		}
		if !strings.Contains(h.logs.String(), "user_id=666") {
			t.Errorf("the stranger was not logged:\n%s", h.logs.String())
		}
		// The owner's press on the same card is answered and decides.
		h.api.push(press(owner, owner, 7, "card", "ap:"+a.ID))
		h.api.waitFor(t, "the owner's answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 2 })
		if d := h.core.decideCalls(); len(d) != 1 {
			t.Errorf("Decide calls = %q; want the owner's", d)
		}
	})
}

func TestPressApproves(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		a := riskyView()
		parkOn(h.core, a)
		h.api.push(textMsg(owner, owner, "run it"))
		card := cardFor(t, h.api, a.ID)
		h.api.push(press(owner, owner, card.MsgID, "plain card text", "ap:"+a.ID))
		h.api.waitFor(t, "the resumed reply", func() bool { return len(h.api.sent("resumed after "+a.ID)) == 1 })
		if d := h.core.decideCalls(); !slices.Equal(d, []string{a.ID + "|true|telegram"}) {
			t.Errorf("Decide calls = %q", d)
		}
		ans := h.api.callsOf("answerCallbackQuery")
		if len(ans) != 1 || !strings.Contains(ans[0].str("text"), "Approved") {
			t.Errorf("answers = %+v", ans)
		}
		ed := edits(h.api, "✅ Approved")
		if len(ed) != 1 || ed[0].str("message_id") != fmt.Sprint(card.MsgID) || ed[0].Params["reply_markup"] != nil {
			t.Errorf("card edits = %+v", h.api.callsOf("editMessageText"))
		}
		if !strings.Contains(ed[0].str("text"), "plain card text") {
			t.Errorf("the edited card lost its text: %q", ed[0].str("text"))
		}
	})
}

func TestDenyAndDoublePress(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		a := riskyView()
		h.core.set(func(c *fakeCore) { c.pending = []core.ApprovalView{a} })
		h.api.push(press(owner, owner, 7, "card", "dn:"+a.ID))
		h.api.waitFor(t, "the first edit", func() bool { return len(edits(h.api, "❌ Denied")) == 1 })
		h.api.push(press(owner, owner, 7, "card", "dn:"+a.ID))
		h.api.waitFor(t, "the second edit", func() bool { return len(edits(h.api, "Already decided")) == 1 })
		idle()
		if n := h.core.executions(a.ID); n != 1 {
			t.Errorf("executed %d times", n)
		}
		if n := len(h.api.callsOf("answerCallbackQuery")); n != 2 {
			t.Errorf("%d presses answered; want 2", n)
		}
		if n := len(h.api.sent("resumed after")); n != 1 {
			t.Errorf("%d resumed replies; want 1", n)
		}
	})
}

func TestPressAfterExpiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		a := riskyView()
		h.core.set(func(c *fakeCore) { c.pending = []core.ApprovalView{a} })
		h.core.set(func(c *fakeCore) { c.expired[a.ID] = true })
		h.api.push(press(owner, owner, 7, "card", "ap:"+a.ID))
		h.api.waitFor(t, "the edit", func() bool { return len(edits(h.api, "⌛ Expired")) == 1 })
		h.api.waitFor(t, "the answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 1 })
		if h.core.executions(a.ID) != 0 {
			t.Error("an expired request ran")
		}
	})
}

func TestUnknownButtonData(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.api.push(press(owner, owner, 7, "card", "rm:-rf"))
		h.api.waitFor(t, "the answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 1 })
		idle()
		if len(h.core.decideCalls()) != 0 {
			t.Error("Decide called for foreign data")
		}
	})
}

func TestSlowDecisionIsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		api, fc := newFakeAPI(), newFakeCore()
		a := riskyView()
		fc.pending = []core.ApprovalView{a}
		release := make(chan struct{})
		fc.decide = func(context.Context, string, bool) { <-release }
		h := startBot(t, api, fc, "", nil)
		h.api.push(press(owner, owner, 7, "card", "ap:"+a.ID))
		h.api.waitFor(t, "the early answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 1 })
		h.api.waitFor(t, "the running state", func() bool { return len(edits(h.api, "⏳")) == 1 })
		close(release)
		h.api.waitFor(t, "the final state", func() bool { return len(edits(h.api, "✅ Approved")) == 1 })
		if n := len(h.api.callsOf("answerCallbackQuery")); n != 1 {
			t.Errorf("answered %d times", n)
		}
	})
}

func TestLongPromotionGoesAsFile(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		code := strings.Repeat("def run(text):\n    return text.upper()  # <&>\n", 200)
		p := core.ApprovalView{ID: store.NewApprovalID(), Kind: core.KindPromotion, Chat: "tg:42", Tool: "shout",
			Summary: "New tool: shout (version 1, starlark)\n--- code ---\n" + code, ExpiresAt: time.Now().Add(time.Hour)}
		// A promotion is pending without being in the turn's outcome.
		h.core.set(func(c *fakeCore) {
			c.reply = func(context.Context, string, string) (core.Outcome, error) {
				h.core.mu.Lock()
				h.core.pending = append(h.core.pending, p)
				h.core.mu.Unlock()
				return core.Outcome{Reply: "I proposed the tool shout."}, nil
			}
		})
		h.api.push(textMsg(owner, owner, "make a tool"))
		card := cardFor(t, h.api, p.ID)
		doc := h.api.callsOf("sendDocument")
		if len(doc) != 1 || doc[0].FileName != "tool.txt" || doc[0].File != p.Summary {
			t.Fatalf("documents = %+v", doc)
		}
		text := card.str("text")
		if !strings.Contains(text, "New tool to approve") || !strings.Contains(text, "tool.txt") || utf16Len(text) >= 4096 {
			t.Errorf("card (%d units):\n%s", utf16Len(text), text)
		}
		if strings.Contains(text, "<&>") {
			t.Error("unescaped code on the card")
		}
		// /pending shows it again.
		h.api.push(textMsg(owner, owner, "/pending"))
		h.api.waitFor(t, "the card again", func() bool { return len(h.api.callsOf("sendDocument")) == 2 })
	})
}

func TestRestartKeepsCardsWorking(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		api, fc := newFakeAPI(), newFakeCore()
		offsetFile := filepath.Join(t.TempDir(), "telegram.offset")
		a := riskyView()
		parkOn(fc, a)
		first := startBot(t, api, fc, offsetFile, nil)
		last := api.push(textMsg(owner, owner, "run it"))
		card := cardFor(t, api, a.ID)
		// The bot saves the offset before it asks for the next updates.
		api.waitFor(t, "the update to be confirmed", func() bool { return api.acked(last) })
		if raw, _ := os.ReadFile(offsetFile); strings.TrimSpace(string(raw)) != fmt.Sprint(last+1) {
			t.Errorf("offset file holds %q; want %d", raw, last+1)
		}
		first.stop()
		if fi, err := os.Stat(offsetFile); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("offset file: %v, %v", fi.Mode(), err)
		}

		second := startBot(t, api, fc, offsetFile, nil)
		api.push(press(owner, owner, card.MsgID, "card", "ap:"+a.ID))
		api.waitFor(t, "the resumed reply", func() bool { return len(api.sent("resumed after "+a.ID)) == 1 })
		if d := fc.decideCalls(); !slices.Equal(d, []string{a.ID + "|true|telegram"}) {
			t.Errorf("Decide calls = %q", d)
		}
		if n := fc.sendCount(); n != 1 {
			t.Errorf("the old message ran %d times; want 1 (the offset was not kept)", n)
		}
		second.stop()
	})
}

func TestPressAndCancelDuringLongTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		a := riskyView()
		h.core.set(func(c *fakeCore) { c.pending = []core.ApprovalView{a} })
		started := make(chan struct{})
		h.core.set(func(c *fakeCore) {
			c.reply = func(ctx context.Context, _, _ string) (core.Outcome, error) {
				close(started)
				<-ctx.Done()
				return core.Outcome{}, ctx.Err()
			}
		})
		h.api.push(textMsg(owner, owner, "take your time"))
		<-started
		h.api.push(press(owner, owner, 7, "card", "ap:"+a.ID))
		h.api.waitFor(t, "the press to be decided during the turn", func() bool { return len(edits(h.api, "✅ Approved")) == 1 })
		h.api.push(textMsg(owner, owner, "/cancel"))
		h.api.waitFor(t, "the cancel", func() bool { return len(h.api.sent("Cancelled.")) == 1 })
		if len(h.api.sent("Cancelling the running turn")) != 1 {
			t.Error("/cancel did not say it cancels")
		}
	})
}
