package telegram

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

const hostile = "<b>x</b> & <script>"

func TestAllowedUserChats(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.core.set(func(c *fakeCore) {
			c.reply = func(ctx context.Context, _, text string) (core.Outcome, error) {
				// The turn lasts until the typing action has been shown.
				typing := func() bool { return len(h.api.callsOf("sendChatAction")) > 0 }
				if err := h.api.until(ctx, typing); err != nil {
					return core.Outcome{}, err
				}
				return core.Outcome{Reply: "echo: " + text}, nil
			}
		})
		h.api.push(textMsg(owner, owner, "hello there"))
		h.api.waitFor(t, "the reply", func() bool { return len(h.api.sent("echo: hello there")) == 1 })
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
	})
}

func TestStrangerGetsNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		// A stranger in the owner's own chat (a group) is still a stranger: the
		// sender counts, not the chat.
		h.api.push(textMsg(strangerID, strangerID, "secret plans"))
		h.api.push(textMsg(strangerID, owner, "/start"))
		h.api.push(textMsg(strangerID, strangerID, "again"))
		h.api.push(textMsg(owner, owner, "marker"))
		h.api.waitFor(t, "the owner's reply", func() bool { return len(h.api.sent("echo: marker")) == 1 })
		idle()
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
	})
}

func TestEmptyAllowListServesNobody(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := startBot(t, newFakeAPI(), newFakeCore(), "", func(o *Options) { o.AllowedUsers = nil })
		id := h.api.push(textMsg(owner, owner, "hello"))
		h.api.waitFor(t, "the update to be consumed", func() bool { return h.api.acked(id) })
		idle()
		if h.core.sendCount() != 0 || len(h.api.callsOf("sendMessage")) != 0 {
			t.Error("an empty allow list served someone")
		}
		if !strings.Contains(h.logs.String(), "allowed_users is empty") {
			t.Errorf("no clear log line about the empty list:\n%s", h.logs.String())
		}
	})
}

func TestUntrustedHTMLIsEscaped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.core.set(func(c *fakeCore) {
			c.reply = func(context.Context, string, string) (core.Outcome, error) {
				return core.Outcome{Reply: "tool said: " + hostile + "\n```\n" + hostile + "\n```"}, nil
			}
		})
		h.api.push(textMsg(owner, owner, "show"))
		h.api.waitFor(t, "the reply", func() bool { return len(h.api.sent("tool said")) == 1 })
		got := h.api.sent("tool said")[0].str("text")
		want := "tool said: &lt;b&gt;x&lt;/b&gt; &amp; &lt;script&gt;\n<pre>&lt;b&gt;x&lt;/b&gt; &amp; &lt;script&gt;</pre>"
		if got != want {
			t.Errorf("reply =\n%s\nwant\n%s", got, want)
		}
	})
}

func TestLongReplySplit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
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
		h.api.waitFor(t, "the last part", func() bool { return len(h.api.sent(html.EscapeString(lines[len(lines)-1]))) == 1 })
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
	})
}

func TestHugeReplyIsADocument(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		huge := strings.Repeat("0123456789 <&>\n", 50000/15)
		h.core.set(func(c *fakeCore) {
			c.reply = func(context.Context, string, string) (core.Outcome, error) { return core.Outcome{Reply: huge}, nil }
		})
		h.api.push(textMsg(owner, owner, "huge"))
		h.api.waitFor(t, "the document", func() bool { return len(h.api.callsOf("sendDocument")) == 1 })
		doc := h.api.callsOf("sendDocument")[0]
		if doc.FileName != "reply.txt" || doc.File != strings.TrimSpace(huge) || doc.chatID() != owner {
			t.Errorf("document %q (%d bytes) to %d", doc.FileName, len(doc.File), doc.chatID())
		}
		if doc.str("caption") == "" {
			t.Error("no short message with the document")
		}
		idle()
		if n := len(h.api.callsOf("sendMessage")); n != 0 {
			t.Errorf("%d messages besides the document", n)
		}
	})
}

func TestCommands(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
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
			h.api.waitFor(t, c.cmd, func() bool { return len(h.api.sent(c.want)) > 0 })
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
		if want := []string{"start", "help", "tools", "pending", "audit", "schedules", "status", "cancel"}; !slices.Equal(names, want) {
			t.Errorf("registered %q", names)
		}
		// A command for another bot in a group is not ours.
		h.api.push(textMsg(owner, owner, "/help@other_bot"))
		idle()
		if n := len(h.api.sent("/pending")); n != 1 {
			t.Errorf("help sent %d times", n)
		}
	})
}

func TestOrderWithinChatConcurrencyAcross(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
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
					// The bubble's clock moves only when every other
					// goroutine is blocked: a second turn wrongly started
					// in this chat runs, and is caught, before this ends.
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
		h.api.waitFor(t, "the private chat", func() bool { return len(h.api.sent("done 2")) == 1 })
		close(blockGroup)
		h.api.waitFor(t, "the group", func() bool { return len(h.api.sent("done g")) == 1 })
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
	})
}

func TestBadUpdateAndRetryAfter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.api.failNext("sendMessage", failure{code: 429, retryAfter: 1})
		h.api.pushBad(`{"update_id": %d, "message": "not an object"}`)
		h.api.push(textMsg(owner, owner, "still there?"))
		h.api.waitFor(t, "the reply after a 429", func() bool { return len(h.api.sent("echo: still there?")) == 2 })
		if !strings.Contains(h.logs.String(), "does not decode") {
			t.Errorf("the bad update was not logged:\n%s", h.logs.String())
		}
	})
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		api, fc := newFakeAPI(), newFakeCore()
		const secret = "s3cret_-token"
		h := startBot(t, api, fc, "", func(o *Options) {
			o.Webhook = &WebhookOptions{URL: "https://example.invalid/telegram", SecretToken: secret}
		})
		api.waitFor(t, "setWebhook", func() bool { return len(api.callsOf("setWebhook")) == 1 })
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
		api.waitFor(t, "the reply", func() bool { return len(api.sent("echo: via hook 3")) == 1 })
		idle()
		if got := fc.sendCalls(); !slices.Equal(got, []string{"tg:42|via hook 3"}) {
			t.Errorf("Send calls = %q", got)
		}
	})
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
	if _, err := b.Check(context.Background()); err == nil || strings.Contains(err.Error(), testToken) {
		t.Errorf("Check error %v", err)
	}
	// Run retries getMe until cancelled; the first failure is logged at once.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	logs.waitFor(t, "the failure to be logged", func() bool {
		out := logs.String()
		return strings.Contains(out, "getMe") && strings.Contains(out, "connection refused")
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if out := logs.String(); strings.Contains(out, testToken) || strings.Contains(out, "TEST-secret") {
		t.Errorf("the token is in the logs:\n%s", out)
	}
}

func TestRefusedTokenEndsRun(t *testing.T) {
	t.Parallel()
	// Over a real connection: the one test of the client on the wire.
	srv := httptest.NewServer(newFakeAPI())
	t.Cleanup(srv.Close)
	b, err := New(Options{Token: "999:wrong-token", APIBase: srv.URL, Core: newFakeCore(),
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

// TestNewWebhookURL: Telegram posts updates only to https, on ports 443,
// 80, 88 and 8443; New refuses any other webhook URL, naming the fix,
// rather than have setWebhook fail at every retry. A self-hosted Bot API
// server (api_base elsewhere) may post to http: allowed, with a warning.
func TestNewWebhookURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, base, url string
		refused, warned string // "" for none: a word the error (the log) must hold
	}{
		{"https", "", "https://bot.example.org/telegram/webhook", "", ""},
		{"https on 8443", "", "https://bot.example.org:8443/telegram/webhook", "", ""},
		{"http", "", "http://bot.example.org/telegram/webhook", "https", ""},
		{"http to Telegram named", "https://api.telegram.org/", "http://bot.example.org/telegram/webhook", "https", ""},
		{"another port", "", "https://bot.example.org:8080/telegram/webhook", "8443", ""},
		{"not a URL", "", "bot.example.org/telegram/webhook", "https", ""},
		{"another scheme", "", "ftp://bot.example.org/", "https", ""},
		{"http to a self-hosted server", "http://127.0.0.1:8081", "http://127.0.0.1:8080/telegram/webhook", "", "unencrypted"},
		{"https to a self-hosted server", "http://127.0.0.1:8081", "https://bot.example.org:9443/telegram/webhook", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			_, err := New(Options{Token: testToken, Core: newFakeCore(), APIBase: c.base,
				Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
				Webhook: &WebhookOptions{URL: c.url, SecretToken: "abc"}})
			switch {
			case c.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.refused != "" && err == nil:
				t.Errorf("accepted; want an error about %s", c.refused)
			case c.refused != "" && (!strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), "webhook_url")):
				t.Errorf("error %q does not name webhook_url and %s", err, c.refused)
			}
			if got := logs.String(); c.warned == "" && got != "" || !strings.Contains(got, c.warned) {
				t.Errorf("logged %q; want a warning about %q", got, c.warned)
			}
		})
	}
}
