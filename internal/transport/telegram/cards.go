package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

const (
	// maxCallbackData is Telegram's limit on a button's callback_data, in bytes.
	maxCallbackData = 64
	// cardInline bounds the rendering shown on a card (UTF-16 code units of
	// its HTML); a longer one is cut and sent whole as tool.txt.
	cardInline = 3300
	// promotionInline is the same for a promotion, whose code and test read
	// better as a file than on a phone's card.
	promotionInline = 1200

	approvePrefix = "ap:"
	denyPrefix    = "dn:"
)

// callbackData is a button's payload: only the verb and the request id,
// so that a card still works after a restart.
func callbackData(prefix, id string) (string, error) {
	d := prefix + id
	if len(d) > maxCallbackData {
		return "", fmt.Errorf("telegram: callback data for request %q is %d bytes; the limit is %d", id, len(d), maxCallbackData)
	}
	return d, nil
}

// parseCallback reads a button's payload.
func parseCallback(data string) (id string, approve, ok bool) {
	switch {
	case strings.HasPrefix(data, approvePrefix):
		id, approve = data[len(approvePrefix):], true
	case strings.HasPrefix(data, denyPrefix):
		id = data[len(denyPrefix):]
	default:
		return "", false, false
	}
	return id, approve, id != ""
}

// sendCard shows a request with Approve and Deny buttons. The card holds
// the daemon's rendering (Summary) only, escaped, in <pre>. When the card
// cannot hold every byte the owner approves (a long rendering is cut
// here, or the daemon cut a long argument), the whole request is sent
// first as a file: the rendering and, for a tool call, every argument
// whole.
func (b *Bot) sendCard(ctx context.Context, id int64, a core.ApprovalView) {
	limit, title, what := cardInline, "🔐 <b>Approval needed</b>: <code>"+escapeHTML(inert.Name(a.Tool))+"</code>", "the whole request, every argument whole"
	switch a.Kind {
	case core.KindPromotion:
		limit, title, what = promotionInline, "🧩 <b>New tool to approve</b>: <code>"+escapeHTML(inert.Name(a.Tool))+"</code>", "the full proposal: code, test and gate report"
	case core.KindSkill:
		limit, title, what = promotionInline, "📘 <b>Skill to approve</b> (drafted by the agent, not in use until you approve): <code>"+escapeHTML(inert.Name(a.Tool))+"</code>", "the whole draft"
	}
	body := escapeHTML(a.Summary)
	full, argsCut := wholeRequest(a)
	var note string
	if cardCut := utf16Len(body) > limit; cardCut || argsCut {
		if cardCut {
			head, _ := headLines(a.Summary, limit)
			body = fitEscaped(head, limit) + "\n…"
		}
		note = "\nThe card does not show all of it; tool.txt above holds every byte."
		caption := fmt.Sprintf("Request %s (%s): %s.", inert.Name(a.ID), inert.Name(a.Tool), what)
		if err := b.sendDocument(ctx, id, "tool.txt", full, caption); err != nil {
			note = "\nThe card does not show all of it, and the whole could not be sent: <code>shelldon approvals show " + escapeHTML(inert.Name(a.ID)) + " --full</code> shows every byte."
		}
	}
	text := fmt.Sprintf("%s\n<pre>%s</pre>\nRequest <code>%s</code>, expires %s.%s",
		title, body, escapeHTML(inert.Name(a.ID)), a.ExpiresAt.Local().Format("Jan 2 15:04"), note)
	var kb *keyboard
	ap, err1 := callbackData(approvePrefix, a.ID)
	dn, err2 := callbackData(denyPrefix, a.ID)
	if err := errors.Join(err1, err2); err != nil {
		b.log.Error("telegram: a request cannot have buttons", "err", err)
		text += "\nDecide with: <code>shelldon approvals approve " + escapeHTML(inert.Name(a.ID)) + "</code> (or deny)."
	} else {
		kb = &keyboard{InlineKeyboard: [][]button{{{Text: "✅ Approve", CallbackData: ap}, {Text: "❌ Deny", CallbackData: dn}}}}
	}
	if b.sendHTML(ctx, id, text, kb) != 0 {
		b.mu.Lock()
		b.carded[a.ID] = true
		b.mu.Unlock()
	}
}

// wholeRequest is the text of a request's file: the daemon's rendering
// and, for a tool call, every argument whole (escaped as on the card);
// argsCut tells whether the rendering left part of an argument out.
func wholeRequest(a core.ApprovalView) (text string, argsCut bool) {
	if a.Kind == core.KindPromotion || a.Kind == core.KindSkill || a.Arguments == "" {
		return inert.Text(a.Summary), false
	}
	args := inert.Args(a.Arguments, 0, "")
	text = fmt.Sprintf("%s\n\n--- every argument, whole (%s bytes of JSON) ---\n%s", inert.Text(a.Summary), inert.Count(len(a.Arguments)), args)
	// The daemon's rendering ends without the last newline.
	return text, !strings.Contains(a.Summary, strings.TrimSuffix(args, "\n"))
}

// onPress handles a button press (update id in the journal). A
// stranger's press (someone else in a group the card is in) decides
// nothing and is answered with no text: nothing shows on their screen,
// and their phone's spinner stops at once instead of running until it
// gives up. Not answering would show nothing either, but leave the
// spinner; the silent answer tells them nothing they did not know (they
// can see the card), and costs one call per press, which only a person
// tapping can cause.
func (b *Bot) onPress(id int64, q *callbackQuery) {
	if !b.allowed[q.From.ID] {
		b.stranger(&q.From)
		b.spawn(func(ctx context.Context) { b.answer(ctx, q.ID, "") })
		return
	}
	b.spawnPress(id, q)
}

// spawnPress decides a press in its own goroutine: not queued behind the
// chat's turn, a press is served while a turn runs. It is marked started
// in the journal and removed once the decision and what it resumed are
// delivered. A press the bot's stopping cut short is decided again at the
// next start: a decision is taken once (the store refuses a second), so
// that press at most learns it was already decided.
func (b *Bot) spawnPress(id int64, q *callbackQuery) {
	b.spawn(func(ctx context.Context) {
		if err := b.journal.start(id); err != nil {
			b.log.Error("telegram: the queue", "err", err)
		}
		b.press(ctx, q)
		if ctx.Err() != nil {
			return
		}
		if err := b.journal.done(id); err != nil {
			b.log.Error("telegram: the queue", "err", err)
		}
	})
}

type decision struct {
	out core.Outcome
	err error
}

// press decides a request: every press is answered, the card is edited to
// its final state, and the resumed turn's reply follows.
func (b *Bot) press(ctx context.Context, q *callbackQuery) {
	id, approve, ok := parseCallback(q.Data)
	if !ok {
		b.answer(ctx, q.ID, "This button is not one of shelldon's.")
		return
	}
	chatID, msgID, orig := q.From.ID, int64(0), ""
	if m := q.Message; m != nil {
		chatID = m.Chat.ID
		if m.Date != 0 { // 0: too old to edit
			msgID, orig = m.MessageID, m.Text
		}
	}
	stop := b.typing(ctx, chatID)
	done := make(chan decision, 1)
	b.wg.Go(func() {
		d := decision{err: errors.New("telegram: the decision panicked")}
		defer func() {
			if r := recover(); r != nil {
				b.log.Error("telegram: panic in Decide", "panic", fmt.Sprint(r))
			}
			done <- d
		}()
		d.out, d.err = b.opts.Core.Decide(ctx, id, approve, "telegram", core.Events{})
	})
	// The press is answered at once when Decide is quick (a refusal), else
	// after a moment, so that the phone stops its spinner; Decide itself
	// returns only when the resumed turn has ended.
	var d decision
	answered := false
	t := time.NewTimer(b.ackWait)
	select {
	case d = <-done:
	case <-t.C:
		b.answer(ctx, q.ID, "Working on it…")
		answered = true
		verb := "⏳ Denying…"
		if approve {
			verb = "⏳ Approving, running…"
		}
		if msgID != 0 {
			b.edit(ctx, chatID, msgID, cardState(orig, verb))
		}
		d = <-done
	}
	t.Stop()
	stop()
	state := decidedState(approve, d.err)
	if !answered {
		b.answer(ctx, q.ID, state)
	}
	if msgID != 0 {
		b.edit(ctx, chatID, msgID, cardState(orig, state))
	}
	switch {
	case errors.Is(d.err, core.ErrUnknownApproval), errors.Is(d.err, core.ErrAlreadyDecided), errors.Is(d.err, core.ErrApprovalExpired):
		return
	}
	b.deliver(ctx, chatID, d.out, d.err)
}

// decidedState is a card's final state after Decide.
func decidedState(approve bool, err error) string {
	switch {
	case err == nil && approve:
		return "✅ Approved"
	case err == nil:
		return "❌ Denied"
	case errors.Is(err, core.ErrApprovalExpired):
		return "⌛ Expired"
	case errors.Is(err, core.ErrAlreadyDecided):
		return "Already decided"
	case errors.Is(err, core.ErrUnknownApproval):
		return "❔ No such request"
	case errors.Is(err, core.ErrStaleApproval):
		return "⚠️ Approved, but it can no longer be carried out (see below)"
	}
	return "⚠️ Something went wrong (see below); /pending shows what still waits"
}

// cardState is a card's text with its state below, and no buttons. The
// card's text comes back from Telegram as plain text, so it is escaped again.
func cardState(orig, state string) string {
	s := "<b>" + escapeHTML(state) + "</b>"
	if orig == "" {
		return s
	}
	return fitEscaped(orig, maxMessage-200) + "\n\n" + s
}
