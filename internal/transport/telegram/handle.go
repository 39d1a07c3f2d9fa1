package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// commands are registered with setMyCommands and routed by onMessage.
var commands = []botCommand{
	{"start", "Greeting and your Telegram user id"},
	{"help", "What shelldon understands here"},
	{"tools", "The tools: tier, where each runs, state"},
	{"pending", "The requests waiting for your decision"},
	{"audit", "The last 10 entries of the audit trail"},
	{"schedules", "Your schedules and their next runs"},
	{"status", "How shelldon is doing"},
	{"cancel", "Cancel the running turn of this chat"},
}

const helpText = `Write to me and I answer; I may use tools on the way.
Anything that changes the world (writing a file, running a command, fetching a URL, git, a new tool of my own) waits for your tap on Approve or Deny.

/tools — the tools: tier, where each runs, state
/pending — the requests waiting for you
/audit — the last 10 entries of the audit trail
/schedules — your schedules and their next runs
/status — how shelldon is doing
/cancel — cancel the running turn of this chat`

// onMessage serves a message from an allowed sender: a command at once,
// chat text (update id in the journal) in the chat's order. A stranger's
// message is dropped unanswered.
func (b *Bot) onMessage(id int64, m *message) {
	if m.From == nil || m.From.IsBot {
		return
	}
	if !b.allowed[m.From.ID] {
		b.stranger(m.From)
		return
	}
	if b.chatText(m) {
		b.enqueue(&work{id: id, m: m})
		return
	}
	text := strings.TrimSpace(m.Text)
	if text == "" {
		b.spawn(func(ctx context.Context) {
			b.sendHTML(ctx, m.Chat.ID, "I read text messages only.", nil)
		})
		return
	}
	cmd, args, _ := parseCommand(text, b.botName())
	if cmd == "" {
		return // addressed to another bot
	}
	// Commands do not wait behind a running turn (/cancel must not).
	b.spawn(func(ctx context.Context) { b.command(ctx, m, cmd, args) })
}

// chatText reports whether m is text for a turn from an allowed sender:
// not empty, not a command.
func (b *Bot) chatText(m *message) bool {
	if m.From == nil || m.From.IsBot || !b.allowed[m.From.ID] {
		return false
	}
	text := strings.TrimSpace(m.Text)
	if text == "" {
		return false
	}
	_, _, cmd := parseCommand(text, b.botName())
	return !cmd
}

func (b *Bot) botName() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.username
}

// parseCommand splits "/name@bot args". ok is false for text that is not a
// command; cmd is "" for a command addressed to another bot.
func parseCommand(text, botName string) (cmd, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		word, rest = text[:i], strings.TrimSpace(text[i:])
	}
	name, at, addressed := strings.Cut(word[1:], "@")
	if name == "" || len(name) > 32 {
		return "", "", false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "", "", false // "/etc/passwd ..." is chat text
		}
	}
	if addressed && !strings.EqualFold(at, botName) {
		return "", "", true
	}
	return strings.ToLower(name), rest, true
}

func (b *Bot) command(ctx context.Context, m *message, cmd, _ string) {
	id := m.Chat.ID
	switch cmd {
	case "start":
		b.sendHTML(ctx, id, fmt.Sprintf("Hello %s, I am shelldon.\nYour Telegram user id is <code>%d</code>.\n/help shows what I understand.",
			escapeHTML(m.From.FirstName), m.From.ID), nil)
	case "help":
		b.sendText(ctx, id, helpText)
	case "tools":
		b.sendText(ctx, id, b.toolsText(ctx))
	case "pending":
		list, err := b.opts.Core.Approvals(ctx)
		if err != nil {
			b.log.Error("telegram: list approvals", "err", err)
			b.sendText(ctx, id, "Could not list the requests: "+err.Error())
			return
		}
		if len(list) == 0 {
			b.sendText(ctx, id, "Nothing is waiting for your decision.")
			return
		}
		for _, a := range list {
			b.sendCard(ctx, id, a)
		}
	case "audit":
		b.sendText(ctx, id, b.auditText(ctx))
	case "schedules":
		b.sendText(ctx, id, b.schedulesText(ctx))
	case "status":
		status := "shelldon is running."
		if b.opts.Status != nil {
			status = b.opts.Status()
		}
		b.sendText(ctx, id, "```\n"+status+"\n```")
	case "cancel":
		if b.cancelTurn(id) {
			b.sendText(ctx, id, "Cancelling the running turn…")
		} else {
			b.sendText(ctx, id, "Nothing is running in this chat.")
		}
	default:
		b.sendText(ctx, id, "I do not know that command; /help lists the ones I do.")
	}
}

func (b *Bot) toolsText(ctx context.Context) string {
	list, err := b.opts.Core.Tools(ctx)
	if err != nil {
		b.log.Error("telegram: list tools", "err", err)
		return "Could not list the tools: " + err.Error()
	}
	var s strings.Builder
	s.WriteString("Tools:\n```\n")
	for _, t := range list {
		line := fmt.Sprintf("%-13s %-5s %-7s %-7s %s", inert.Name(t.Name), t.Tier, t.Runs, t.Source, t.State)
		if t.Version > 0 {
			line += fmt.Sprintf(" v%d", t.Version)
		}
		if t.Strikes > 0 {
			line += fmt.Sprintf(" (%d strikes)", t.Strikes)
		}
		s.WriteString(oneLine(line, 120) + "\n")
	}
	s.WriteString("```")
	return s.String()
}

func (b *Bot) auditText(ctx context.Context) string {
	if b.opts.Audit == nil {
		return "The audit trail is not available here."
	}
	list, err := b.opts.Audit.Audit(ctx, core.AuditQuery{Limit: 10})
	if err != nil {
		b.log.Error("telegram: read the audit trail", "err", err)
		return "Could not read the audit trail: " + err.Error()
	}
	if len(list) == 0 {
		return "The audit trail is empty."
	}
	var s strings.Builder
	s.WriteString("The last entries of the audit trail:\n```\n")
	for _, e := range list {
		mark := "ok"
		if !e.OK {
			mark = "FAIL"
		}
		line := fmt.Sprintf("%s %s %s %s %s", e.At.Local().Format("01-02 15:04"), mark, inert.Name(e.Kind), inert.Name(e.Tool), e.Summary)
		s.WriteString(oneLine(line, 300) + "\n")
	}
	s.WriteString("```")
	return s.String()
}

// turn runs one chat message through the core, with the typing action
// shown meanwhile, and sends the outcome. It reports whether the turn ran
// to its end and its outcome was delivered: false when ctx ended (the bot
// stopping) before that; a /cancel of the owner's is an end.
func (b *Bot) turn(ctx context.Context, w *work) bool {
	m := w.m
	id := m.Chat.ID
	tctx, cancel := context.WithCancel(ctx)
	done := b.setTurn(id, cancel)
	stop := b.typing(ctx, id)
	out, err := b.opts.Core.SendOnce(tctx, chatName(id), b.messageKey(w), m.Text, core.Events{})
	cancelled := tctx.Err() != nil && ctx.Err() == nil
	stop()
	done()
	if ctx.Err() != nil {
		return false
	}
	switch {
	case err != nil && cancelled && out.Reply == "":
		b.sendText(ctx, id, "Cancelled.")
	case out.Again == core.Rerun:
		b.sendHTML(ctx, id, fmt.Sprintf("⚠️ shelldon restarted while working on your message “%s”, before it had done anything, so I ran it again:",
			escapeHTML(oneLine(m.Text, 80))), nil)
		b.deliver(ctx, id, out, err)
	default:
		b.deliver(ctx, id, out, err)
	}
	return ctx.Err() == nil
}

// typing shows "typing…" in a chat, renewed until stop is called.
func (b *Bot) typing(ctx context.Context, id int64) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(b.typingEvery)
		defer t.Stop()
		for {
			if err := b.api.call(ctx, "sendChatAction", chatActionParams{ChatID: id, Action: "typing"}, nil, 0); err != nil && ctx.Err() == nil {
				b.log.Debug("telegram: typing action", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// deliver sends a finished turn: its reply, then a card for each request
// it left for the owner.
func (b *Bot) deliver(ctx context.Context, id int64, out core.Outcome, err error) {
	reply := stripParked(out.Reply, out.Approvals)
	if err != nil {
		b.log.Error("telegram: turn failed", "chat", chatName(id), "turn", out.Turn, "err", err)
		if reply == "" {
			switch {
			case errors.Is(err, core.ErrBadInput):
				reply = "I cannot take that message: " + err.Error()
			case errors.Is(err, core.ErrStaleApproval):
				reply = "Approved, but not carried out: " + err.Error()
			default:
				reply = "Sorry, this turn failed inside shelldon: " + err.Error()
			}
		}
	}
	if strings.TrimSpace(reply) != "" {
		b.sendText(ctx, id, reply)
	}
	shown := map[string]bool{}
	for _, a := range out.Approvals {
		b.sendCard(ctx, id, a)
		shown[a.ID] = true
	}
	b.newCards(ctx, id, shown)
}

// newCards shows the chat's pending requests that have no card yet: a
// promotion a turn proposed is pending without being in its outcome.
func (b *Bot) newCards(ctx context.Context, id int64, shown map[string]bool) {
	list, err := b.opts.Core.Approvals(ctx)
	if err != nil {
		b.log.Error("telegram: list approvals", "err", err)
		return
	}
	pending := map[string]bool{}
	var fresh []core.ApprovalView
	b.mu.Lock()
	for _, a := range list {
		pending[a.ID] = true
		if a.Chat == chatName(id) && !shown[a.ID] && !b.carded[a.ID] {
			fresh = append(fresh, a)
		}
	}
	for cid := range b.carded {
		if !pending[cid] && !shown[cid] {
			delete(b.carded, cid) // decided or expired: forget it
		}
	}
	b.mu.Unlock()
	for _, a := range fresh {
		b.sendCard(ctx, id, a)
	}
}

// stripParked removes from a reply the parked requests' renderings, which
// their cards show: core words a parked turn's reply as "This needs your
// approval (request <id>, ...):" followed by the summary.
func stripParked(reply string, list []core.ApprovalView) string {
	for _, a := range list {
		if a.Summary == "" {
			continue
		}
		at := strings.Index(reply, a.Summary)
		if at < 0 {
			continue
		}
		idAt := strings.LastIndex(reply[:at], a.ID)
		if idAt < 0 {
			continue
		}
		start := strings.LastIndexByte(reply[:idAt], '\n') + 1
		reply = reply[:start] + reply[at+len(a.Summary):]
	}
	return strings.TrimSpace(reply)
}

// sendText sends plain text (everything escaped, ``` fences as <pre>),
// split into messages under the limit; a very long text goes as a file.
func (b *Bot) sendText(ctx context.Context, id int64, text string) {
	if len(text) > docThreshold {
		caption := fmt.Sprintf("The reply is long (%d characters), so it comes as a file.", len([]rune(text)))
		if err := b.sendDocument(ctx, id, "reply.txt", text, caption); err == nil {
			return
		}
		// Could not upload: fall back to messages, if only the start.
		text, _ = headLines(text, docThreshold)
	}
	for _, part := range formatText(text, maxMessage) {
		b.sendHTML(ctx, id, part, nil)
	}
}

// sendHTML sends one message of ready HTML; it returns its id (0 on failure).
func (b *Bot) sendHTML(ctx context.Context, id int64, html string, kb *keyboard) int64 {
	var sent message
	err := b.api.do(ctx, "sendMessage", sendMessageParams{ChatID: id, Text: html, ParseMode: "HTML",
		ReplyMarkup: kb, LinkPreview: &linkPreview{IsDisabled: true}}, &sent)
	if err != nil {
		if ctx.Err() == nil {
			b.log.Error("telegram: send a message", "chat_id", id, "err", err)
		}
		return 0
	}
	return sent.MessageID
}

func (b *Bot) sendDocument(ctx context.Context, id int64, name, content, caption string) error {
	fields := map[string]string{"chat_id": strconv.FormatInt(id, 10), "caption": oneLine(caption, captionMax)}
	err := b.api.upload(ctx, "sendDocument", fields, "document", name, []byte(content), nil)
	if err != nil && ctx.Err() == nil {
		b.log.Error("telegram: send a document", "chat_id", id, "err", err)
	}
	return err
}

func (b *Bot) edit(ctx context.Context, id, msgID int64, html string) {
	err := b.api.do(ctx, "editMessageText", editMessageTextParams{ChatID: id, MessageID: msgID, Text: html,
		ParseMode: "HTML", LinkPreview: &linkPreview{IsDisabled: true}}, nil)
	if err != nil && ctx.Err() == nil {
		b.log.Warn("telegram: edit a card", "chat_id", id, "err", err)
	}
}

func (b *Bot) answer(ctx context.Context, queryID, text string) {
	if err := b.api.do(ctx, "answerCallbackQuery", answerCallbackParams{CallbackQueryID: queryID, Text: text}, nil); err != nil && ctx.Err() == nil {
		b.log.Warn("telegram: answer a button press", "err", err)
	}
}
