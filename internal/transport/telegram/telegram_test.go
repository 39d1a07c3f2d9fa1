package telegram

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

const hostile = "<b>x</b> & <script>"

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
	waitFor(t, "the card", func() bool {
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

func TestAllowedUserChats(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.core.set(func(c *fakeCore) {
		c.reply = func(_ context.Context, _, text string) (core.Outcome, error) {
			time.Sleep(100 * time.Millisecond) // a turn takes a while: time to show typing
			return core.Outcome{Reply: "echo: " + text}, nil
		}
	})
	h.api.push(textMsg(owner, owner, "hello there"))
	waitFor(t, "the reply", func() bool { return len(h.api.sent("echo: hello there")) == 1 })
	if got := h.core.sendCalls(); !slices.Equal(got, []string{"tg:42|hello there"}) {
		t.Errorf("Send calls = %q", got)
	}
	typing := h.api.callsOf("sendChatAction")
	if len(typing) == 0 || typing[0].str("action") != "typing" || typing[0].chatID() != owner {
		t.Errorf("typing action = %+v", typing)
	}
	reply := h.api.sent("echo: hello there")[0]
	if reply.chatID() != owner || reply.str("parse_mode") != "HTML" {
		t.Errorf("reply = %+v", reply.Params)
	}
	if len(h.api.callsOf("setMyCommands")) != 1 || len(h.api.callsOf("deleteWebhook")) != 1 {
		t.Error("setMyCommands and deleteWebhook are called once at start")
	}
}

func TestStrangerGetsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A stranger in the owner's own chat (a group) is still a stranger: the
	// sender counts, not the chat.
	h.api.push(textMsg(strangerID, strangerID, "secret plans"))
	h.api.push(textMsg(strangerID, owner, "/start"))
	h.api.push(textMsg(strangerID, strangerID, "again"))
	h.api.push(textMsg(owner, owner, "marker"))
	waitFor(t, "the owner's reply", func() bool { return len(h.api.sent("echo: marker")) == 1 })
	settle()
	if n := h.core.sendCount(); n != 1 {
		t.Errorf("Send called %d times; want 1 (the owner's)", n)
	}
	for _, m := range []string{"sendMessage", "sendChatAction", "sendDocument"} {
		for _, c := range h.api.callsOf(m) {
			if c.chatID() == strangerID || strings.Contains(c.str("text"), "666") {
				t.Errorf("the stranger got %s: %+v", m, c.Params)
			}
		}
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "user_id=666"); n != 1 {
		t.Errorf("the stranger is logged %d times; want once:\n%s", n, logs)
	}
	if strings.Contains(logs, "secret plans") || strings.Contains(logs, "again") {
		t.Errorf("a stranger's words reached the log:\n%s", logs)
	}
}

func TestEmptyAllowListServesNobody(t *testing.T) {
	t.Parallel()
	h := startBot(t, newFakeAPI(t), newFakeCore(), "", func(o *Options) { o.AllowedUsers = nil })
	h.api.push(textMsg(owner, owner, "hello"))
	waitFor(t, "the update to be consumed", func() bool { return len(h.api.callsOf("getUpdates")) >= 2 })
	settle()
	if h.core.sendCount() != 0 || len(h.api.callsOf("sendMessage")) != 0 {
		t.Error("an empty allow list served someone")
	}
	if !strings.Contains(h.logs.String(), "allowed_users is empty") {
		t.Errorf("no clear log line about the empty list:\n%s", h.logs.String())
	}
}

func TestRiskyCallMakesCard(t *testing.T) {
	t.Parallel()
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
	settle()
	if n := len(h.api.sent("command: echo")); n != 1 {
		t.Errorf("the summary was sent %d times; want once (the card)", n)
	}
}

func TestStrangerPressDecidesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := riskyView()
	h.core.set(func(c *fakeCore) { c.pending = []core.ApprovalView{a} })
	h.api.push(press(strangerID, owner, 7, "card", "ap:"+a.ID))
	waitFor(t, "the answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 1 })
	settle()
	ans := h.api.callsOf("answerCallbackQuery")[0]
	if !strings.Contains(strings.ToLower(ans.str("text")), "not allowed") {
		t.Errorf("answer = %q", ans.str("text"))
	}
	if d := h.core.decideCalls(); len(d) != 0 {
		t.Errorf("Decide called: %q", d)
	}
	if len(h.api.callsOf("editMessageText")) != 0 || len(h.api.callsOf("sendMessage")) != 0 {
		t.Error("a stranger's press changed a card or sent a message")
	}
}

func TestPressApproves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := riskyView()
	parkOn(h.core, a)
	h.api.push(textMsg(owner, owner, "run it"))
	card := cardFor(t, h.api, a.ID)
	h.api.push(press(owner, owner, card.MsgID, "plain card text", "ap:"+a.ID))
	waitFor(t, "the resumed reply", func() bool { return len(h.api.sent("resumed after "+a.ID)) == 1 })
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
}

func TestDenyAndDoublePress(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := riskyView()
	h.core.set(func(c *fakeCore) { c.pending = []core.ApprovalView{a} })
	h.api.push(press(owner, owner, 7, "card", "dn:"+a.ID))
	waitFor(t, "the first edit", func() bool { return len(edits(h.api, "❌ Denied")) == 1 })
	h.api.push(press(owner, owner, 7, "card", "dn:"+a.ID))
	waitFor(t, "the second edit", func() bool { return len(edits(h.api, "Already decided")) == 1 })
	settle()
	if n := h.core.executions(a.ID); n != 1 {
		t.Errorf("executed %d times", n)
	}
	if n := len(h.api.callsOf("answerCallbackQuery")); n != 2 {
		t.Errorf("%d presses answered; want 2", n)
	}
	if n := len(h.api.sent("resumed after")); n != 1 {
		t.Errorf("%d resumed replies; want 1", n)
	}
}

func TestPressAfterExpiry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := riskyView()
	h.core.set(func(c *fakeCore) { c.pending = []core.ApprovalView{a} })
	h.core.set(func(c *fakeCore) { c.expired[a.ID] = true })
	h.api.push(press(owner, owner, 7, "card", "ap:"+a.ID))
	waitFor(t, "the edit", func() bool { return len(edits(h.api, "⌛ Expired")) == 1 })
	waitFor(t, "the answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 1 })
	if h.core.executions(a.ID) != 0 {
		t.Error("an expired request ran")
	}
}

func TestUnknownButtonData(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.api.push(press(owner, owner, 7, "card", "rm:-rf"))
	waitFor(t, "the answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 1 })
	settle()
	if len(h.core.decideCalls()) != 0 {
		t.Error("Decide called for foreign data")
	}
}

func TestSlowDecisionIsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	api, fc := newFakeAPI(t), newFakeCore()
	a := riskyView()
	fc.pending = []core.ApprovalView{a}
	release := make(chan struct{})
	fc.decide = func(context.Context, string, bool) { <-release }
	h := startTuned(t, api, fc, "", nil, func(b *Bot) { b.ackWait = 20 * time.Millisecond })
	h.api.push(press(owner, owner, 7, "card", "ap:"+a.ID))
	waitFor(t, "the early answer", func() bool { return len(h.api.callsOf("answerCallbackQuery")) == 1 })
	waitFor(t, "the running state", func() bool { return len(edits(h.api, "⏳")) == 1 })
	close(release)
	waitFor(t, "the final state", func() bool { return len(edits(h.api, "✅ Approved")) == 1 })
	if n := len(h.api.callsOf("answerCallbackQuery")); n != 1 {
		t.Errorf("answered %d times", n)
	}
}

func TestUntrustedHTMLIsEscaped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.core.set(func(c *fakeCore) {
		c.reply = func(context.Context, string, string) (core.Outcome, error) {
			return core.Outcome{Reply: "tool said: " + hostile + "\n```\n" + hostile + "\n```"}, nil
		}
	})
	h.api.push(textMsg(owner, owner, "show"))
	waitFor(t, "the reply", func() bool { return len(h.api.sent("tool said")) == 1 })
	got := h.api.sent("tool said")[0].str("text")
	want := "tool said: &lt;b&gt;x&lt;/b&gt; &amp; &lt;script&gt;\n<pre>&lt;b&gt;x&lt;/b&gt; &amp; &lt;script&gt;</pre>"
	if got != want {
		t.Errorf("reply =\n%s\nwant\n%s", got, want)
	}
}

func TestLongReplySplit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var lines []string
	for i := 0; len(strings.Join(lines, "\n")) < 10000; i++ {
		lines = append(lines, fmt.Sprintf("%04d %s & <tag> é", i, strings.Repeat("word ", 12)))
	}
	long := strings.Join(lines, "\n")
	h.core.set(func(c *fakeCore) {
		c.reply = func(context.Context, string, string) (core.Outcome, error) { return core.Outcome{Reply: long}, nil }
	})
	h.api.push(textMsg(owner, owner, "long"))
	waitFor(t, "the last part", func() bool { return len(h.api.sent(html.EscapeString(lines[len(lines)-1]))) == 1 })
	var parts []string
	for _, c := range h.api.callsOf("sendMessage") {
		text := c.str("text")
		if n := utf16Len(text); n >= 4096 {
			t.Errorf("a part is %d UTF-16 units", n)
		}
		parts = append(parts, html.UnescapeString(text))
	}
	if len(parts) < 3 {
		t.Errorf("%d parts; want at least 3", len(parts))
	}
	if strings.Join(parts, "\n") != long {
		t.Error("the parts do not add up to the reply")
	}
	if len(h.api.callsOf("sendDocument")) != 0 {
		t.Error("a 10,000-character reply went as a document")
	}
}

func TestHugeReplyIsADocument(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	huge := strings.Repeat("0123456789 <&>\n", 50000/15)
	h.core.set(func(c *fakeCore) {
		c.reply = func(context.Context, string, string) (core.Outcome, error) { return core.Outcome{Reply: huge}, nil }
	})
	h.api.push(textMsg(owner, owner, "huge"))
	waitFor(t, "the document", func() bool { return len(h.api.callsOf("sendDocument")) == 1 })
	doc := h.api.callsOf("sendDocument")[0]
	if doc.FileName != "reply.txt" || doc.File != strings.TrimSpace(huge) || doc.chatID() != owner {
		t.Errorf("document %q (%d bytes) to %d", doc.FileName, len(doc.File), doc.chatID())
	}
	if doc.str("caption") == "" {
		t.Error("no short message with the document")
	}
	settle()
	if n := len(h.api.callsOf("sendMessage")); n != 0 {
		t.Errorf("%d messages besides the document", n)
	}
}

func TestLongPromotionGoesAsFile(t *testing.T) {
	t.Parallel()
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
	waitFor(t, "the card again", func() bool { return len(h.api.callsOf("sendDocument")) == 2 })
}

func TestRestartKeepsCardsWorking(t *testing.T) {
	t.Parallel()
	api, fc := newFakeAPI(t), newFakeCore()
	offsetFile := filepath.Join(t.TempDir(), "telegram.offset")
	a := riskyView()
	parkOn(fc, a)
	first := startBot(t, api, fc, offsetFile, nil)
	last := api.push(textMsg(owner, owner, "run it"))
	card := cardFor(t, api, a.ID)
	waitFor(t, "the offset to be saved", func() bool {
		raw, _ := os.ReadFile(offsetFile)
		return strings.TrimSpace(string(raw)) == fmt.Sprint(last+1)
	})
	first.stop()
	if fi, err := os.Stat(offsetFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("offset file: %v, %v", fi.Mode(), err)
	}

	second := startBot(t, api, fc, offsetFile, nil)
	api.push(press(owner, owner, card.MsgID, "card", "ap:"+a.ID))
	waitFor(t, "the resumed reply", func() bool { return len(api.sent("resumed after "+a.ID)) == 1 })
	if d := fc.decideCalls(); !slices.Equal(d, []string{a.ID + "|true|telegram"}) {
		t.Errorf("Decide calls = %q", d)
	}
	if n := fc.sendCount(); n != 1 {
		t.Errorf("the old message ran %d times; want 1 (the offset was not kept)", n)
	}
	second.stop()
}

func TestCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := riskyView()
	h.core.set(func(c *fakeCore) { c.pending = []core.ApprovalView{a} })
	h.core.set(func(c *fakeCore) {
		c.audit = []store.AuditEntry{{At: time.Now(), Kind: "tool_call", Tool: "run_shell", Summary: "printed " + hostile, OK: true}}
	})
	cases := []struct{ cmd, want string }{
		{"/start", "<code>42</code>"},
		{"/help@shelldon_bot", "/pending"},
		{"/tools", "write_file risky worker builtin live\nword_count free sandbox self quarantined v3 (2 strikes)"},
		{"/audit", "printed &lt;b&gt;x&lt;/b&gt; &amp; &lt;script&gt;"},
		{"/status", "<pre>all good &lt;ok&gt;</pre>"},
		{"/cancel", "Nothing is running"},
		{"/bogus", "do not know"},
	}
	for _, c := range cases {
		h.api.push(textMsg(owner, owner, c.cmd))
		waitFor(t, c.cmd, func() bool { return len(h.api.sent(c.want)) > 0 })
	}
	h.api.push(textMsg(owner, owner, "/pending"))
	cardFor(t, h.api, a.ID)
	if h.core.sendCount() != 0 {
		t.Errorf("a command reached the model: %q", h.core.sendCalls())
	}
	reg := h.api.callsOf("setMyCommands")
	if len(reg) != 1 {
		t.Fatalf("setMyCommands called %d times", len(reg))
	}
	var names []string
	for _, c := range reg[0].Params["commands"].([]any) {
		names = append(names, c.(map[string]any)["command"].(string))
	}
	if want := []string{"start", "help", "tools", "pending", "audit", "status", "cancel"}; !slices.Equal(names, want) {
		t.Errorf("registered %q", names)
	}
	// A command for another bot in a group is not ours.
	h.api.push(textMsg(owner, owner, "/help@other_bot"))
	settle()
	if n := len(h.api.sent("/pending")); n != 1 {
		t.Errorf("help sent %d times", n)
	}
}

func TestPressAndCancelDuringLongTurn(t *testing.T) {
	t.Parallel()
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
	waitFor(t, "the press to be decided during the turn", func() bool { return len(edits(h.api, "✅ Approved")) == 1 })
	h.api.push(textMsg(owner, owner, "/cancel"))
	waitFor(t, "the cancel", func() bool { return len(h.api.sent("Cancelled.")) == 1 })
	if len(h.api.sent("Cancelling the running turn")) != 1 {
		t.Error("/cancel did not say it cancels")
	}
}

func TestOrderWithinChatConcurrencyAcross(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var mu sync.Mutex
	var order []string
	busy := map[string]int{}
	group := int64(-100123)
	blockGroup := make(chan struct{})
	h.core.set(func(c *fakeCore) {
		c.reply = func(ctx context.Context, chat, text string) (core.Outcome, error) {
			mu.Lock()
			busy[chat]++
			if busy[chat] > 1 {
				t.Errorf("two turns at once in %s", chat)
			}
			order = append(order, text)
			mu.Unlock()
			if chat == chatName(group) {
				<-blockGroup
			} else {
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			busy[chat]--
			mu.Unlock()
			return core.Outcome{Reply: "done " + text}, nil
		}
	})
	h.api.push(textMsg(owner, group, "g"))
	for i := range 3 {
		h.api.push(textMsg(owner, owner, fmt.Sprint(i)))
	}
	// The private chat goes on while the group's turn is stuck.
	waitFor(t, "the private chat", func() bool { return len(h.api.sent("done 2")) == 1 })
	close(blockGroup)
	waitFor(t, "the group", func() bool { return len(h.api.sent("done g")) == 1 })
	mu.Lock()
	defer mu.Unlock()
	var private []string
	for _, s := range order {
		if s != "g" {
			private = append(private, s)
		}
	}
	if !slices.Equal(private, []string{"0", "1", "2"}) {
		t.Errorf("order = %q", private)
	}
}

func TestBadUpdateAndRetryAfter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.api.failNext("sendMessage", failure{code: 429, retryAfter: 1})
	h.api.pushRaw(`{"update_id": %d, "message": "not an object"}`)
	h.api.push(textMsg(owner, owner, "still there?"))
	waitFor(t, "the reply after a 429", func() bool { return len(h.api.sent("echo: still there?")) == 2 })
	if !strings.Contains(h.logs.String(), "does not decode") {
		t.Errorf("the bad update was not logged:\n%s", h.logs.String())
	}
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	api, fc := newFakeAPI(t), newFakeCore()
	const secret = "s3cret_-token"
	h := startBot(t, api, fc, "", func(o *Options) {
		o.Webhook = &WebhookOptions{URL: "https://example.invalid/telegram", SecretToken: secret}
	})
	waitFor(t, "setWebhook", func() bool { return len(api.callsOf("setWebhook")) == 1 })
	sw := api.callsOf("setWebhook")[0]
	if sw.str("url") != "https://example.invalid/telegram" || sw.str("secret_token") != secret {
		t.Errorf("setWebhook %+v", sw.Params)
	}
	if len(api.callsOf("getUpdates")) != 0 || len(api.callsOf("deleteWebhook")) != 0 {
		t.Error("webhook mode polled")
	}
	post := func(header string, id int64) int {
		body := fmt.Sprintf(`{"update_id":%d,"message":{"message_id":1,"date":1,"text":"via hook %d","from":{"id":42,"is_bot":false,"first_name":"Ann"},"chat":{"id":42,"type":"private"}}}`, id, id)
		r := httptest.NewRequest(http.MethodPost, "/telegram", strings.NewReader(body))
		if header != "" {
			r.Header.Set(secretHeader, header)
		}
		w := httptest.NewRecorder()
		h.bot.Handler().ServeHTTP(w, r)
		return w.Code
	}
	if code := post("", 1); code != http.StatusUnauthorized {
		t.Errorf("no secret: %d", code)
	}
	if code := post("wrong", 2); code != http.StatusUnauthorized {
		t.Errorf("wrong secret: %d", code)
	}
	if code := post(secret, 3); code != http.StatusOK {
		t.Errorf("right secret: %d", code)
	}
	post(secret, 3) // a retried delivery is handled once
	waitFor(t, "the reply", func() bool { return len(api.sent("echo: via hook 3")) == 1 })
	settle()
	if got := fc.sendCalls(); !slices.Equal(got, []string{"tg:42|via hook 3"}) {
		t.Errorf("Send calls = %q", got)
	}
}

func TestWebhookBeforeRun(t *testing.T) {
	t.Parallel()
	b, err := New(Options{Token: testToken, Core: newFakeCore(), Webhook: &WebhookOptions{URL: "https://x.invalid", SecretToken: "abc"}})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"update_id":1}`))
	r.Header.Set(secretHeader, "abc")
	w := httptest.NewRecorder()
	b.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d", w.Code)
	}
}

func TestTokenNeverLogged(t *testing.T) {
	t.Parallel()
	// An address nothing listens on: net/http's error names the URL, token and all.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	logs := &syncBuffer{}
	b, err := New(Options{Token: testToken, APIBase: dead, AllowedUsers: []int64{owner}, Core: newFakeCore(),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	b.minBackoff = 10 * time.Millisecond
	if _, err := b.Check(context.Background()); err == nil || strings.Contains(err.Error(), testToken) {
		t.Errorf("Check error %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := b.Run(ctx); err != nil {
		t.Errorf("Run: %v", err)
	}
	out := logs.String()
	if !strings.Contains(out, "getMe") || !strings.Contains(out, "connection refused") {
		t.Errorf("the failure was not logged (redacted):\n%s", out)
	}
	if strings.Contains(out, testToken) || strings.Contains(out, "TEST-secret") {
		t.Errorf("the token is in the logs:\n%s", out)
	}
}

func TestRefusedTokenEndsRun(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	b, err := New(Options{Token: "999:wrong-token", APIBase: api.srv.URL, Core: newFakeCore(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = b.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "refused the token") || strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("Run = %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	fc := newFakeCore()
	for name, o := range map[string]Options{
		"no core":     {Token: testToken},
		"no token":    {Core: fc},
		"bad token":   {Core: fc, Token: "123:abc/../x"},
		"bad base":    {Core: fc, Token: testToken, APIBase: "ftp://x"},
		"no secret":   {Core: fc, Token: testToken, Webhook: &WebhookOptions{URL: "https://x"}},
		"bad secret":  {Core: fc, Token: testToken, Webhook: &WebhookOptions{URL: "https://x", SecretToken: "a b"}},
		"no hook url": {Core: fc, Token: testToken, Webhook: &WebhookOptions{SecretToken: "abc"}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), testToken) {
			t.Errorf("%s: token in error", name)
		}
	}
}

// urlInError is a transport whose errors quote the request URL, token and all.
type urlInError struct{}

func (urlInError) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("cannot reach %s", r.URL)
}

func TestErrorsAreRedacted(t *testing.T) {
	t.Parallel()
	c := newClient("http://127.0.0.1:1", testToken, &http.Client{Transport: urlInError{}})
	err := c.call(context.Background(), "getMe", struct{}{}, nil, time.Second)
	if err == nil || strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), "/bot<token>/getMe") {
		t.Errorf("error = %v", err)
	}
}
