package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/transport/telegram/telegramtest"
)

// scheduleModel is a provider that proposes a schedule when asked to
// remind, reports the tool's result after the owner's decision, and
// answers a scheduled run; it counts the scheduled runs it answered.
type scheduleModel struct {
	mu   sync.Mutex
	runs []string // the messages of the scheduled runs
	ev   telegramtest.Events
}

const remindPrompt = "Remind the owner to water the plants."

func (m *scheduleModel) reply(r brokertest.Recorded) brokertest.Reply {
	last := r.Request.Messages[len(r.Request.Messages)-1]
	switch {
	case last.Role == contracts.RoleUser && strings.HasPrefix(last.Text, "remind me"):
		return brokertest.Reply{Text: "I will ask you to approve it.", ToolCalls: []contracts.ToolCall{{ID: "s1", Name: contracts.ToolSchedule,
			Arguments: `{"when":"every 5m","prompt":"` + remindPrompt + `"}`}}}
	case last.Role == contracts.RoleUser && strings.HasPrefix(last.Text, "[shelldon: this is a scheduled run"):
		m.mu.Lock()
		m.runs = append(m.runs, last.Text)
		m.mu.Unlock()
		m.ev.Notify()
		return brokertest.Reply{Text: "Time to water the <plants>!"}
	case len(last.ToolResults) > 0:
		return brokertest.Reply{Text: "RESULTS: " + last.ToolResults[0].Content}
	}
	return brokertest.Reply{Text: "?"}
}

func (m *scheduleModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.runs)
}

// waitUntil polls cond for up to 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestScheduleThroughServe: the model proposes a schedule; the card shows
// the daemon's next three runs in the configured zone; the owner approves
// it from the command line; `schedules list` shows it; the daemon runs it
// at once (an interval's first run), and, with no Telegram, its reply
// waits in the inbox (GET /api/inbox, and `shelldon chat` shows it once).
// A restart runs nothing twice; pause goes through the daemon.
func TestScheduleThroughServe(t *testing.T) {
	t.Parallel()
	m := &scheduleModel{}
	srv := brokertest.NewServer(t, "openai", m.reply)
	// The commands reach the daemon: its address is server.listen, its
	// token in .env.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	h := home(t, "openai", srv.BaseURL(), fmt.Sprintf("schedules:\n  timezone: Europe/Berlin\nserver:\n  listen: %s\n", addr))
	os.WriteFile(filepath.Join(h, ".env"), []byte("TEST_PROVIDER_KEY="+apiKey+"\nSHELLDON_API_TOKEN="+testAPIToken+"\n"), 0o600)
	d := startServeAt(t, h, addr)

	status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "e2e", "text": "remind me to water the plants every 5 minutes"})
	appr, _ := out["approvals"].([]any)
	if status != 200 || len(appr) != 1 {
		t.Fatalf("chat: %d %v", status, out)
	}
	card := appr[0].(map[string]any)
	id := fmt.Sprint(card["id"])
	summary := fmt.Sprint(card["summary"])
	runs := regexp.MustCompile(`Next runs if you approve now: (\w{3} \d+ \w{3} \d{4} \d\d:\d\d CES?T); (\w{3} \d+ \w{3} \d{4} \d\d:\d\d CES?T); (\w{3} \d+ \w{3} \d{4} \d\d:\d\d CES?T)`).FindStringSubmatch(summary)
	for _, want := range []string{"Tool: schedule", "every 5m", remindPrompt, "Time zone: Europe/Berlin (schedules.timezone)",
		"every 5m of elapsed time, the first run right after you approve it"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the card lacks %q:\n%s", want, summary)
		}
	}
	if runs == nil {
		t.Fatalf("the card has no three next runs:\n%s", summary)
	}
	if status, list := d.do(t, "GET", "/api/schedules", d.token, nil); status != 200 || fmt.Sprint(list["schedules"]) != "[]" {
		t.Fatalf("a schedule before the decision: %d %v", status, list)
	}

	stdout, stderr, code := run(t, h, "", "approvals", "approve", id)
	if code != 0 || !strings.Contains(stdout, "Schedule 1 is set: every 5m (Europe/Berlin)") {
		t.Fatalf("approve: %d\n%s\n%s", code, stdout, stderr)
	}
	waitUntil(t, "the first run", func() bool { return m.count() == 1 })
	m.mu.Lock()
	first := m.runs[0]
	m.mu.Unlock()
	if !strings.HasPrefix(first, `[shelldon: this is a scheduled run of schedule 1 ("every 5m", Europe/Berlin), due at `) ||
		!strings.HasSuffix(first, "\n\n"+remindPrompt) {
		t.Errorf("the run's message = %q", first)
	}
	var inbox []any
	waitUntil(t, "the inbox", func() bool {
		_, got := d.do(t, "GET", "/api/inbox", d.token, nil)
		inbox, _ = got["inbox"].([]any)
		return len(inbox) == 1
	})
	item := inbox[0].(map[string]any)
	if text := fmt.Sprint(item["text"]); !strings.HasPrefix(text, "⏰ Schedule 1 (every 5m), due ") || !strings.HasSuffix(text, "Time to water the <plants>!") {
		t.Errorf("inbox item = %q", text)
	}

	stdout, _, code = run(t, h, "", "schedules", "list")
	if code != 0 || !regexp.MustCompile(`(?m)^1\s+active\s+every 5m\s+Europe/Berlin\s+\w{3} `).MatchString(stdout) ||
		!strings.Contains(stdout, "ok, turn") {
		t.Errorf("schedules list: %d\n%s", code, stdout)
	}
	stdout, _, _ = run(t, h, "", "schedules", "show", "1")
	if !strings.Contains(stdout, "  | "+remindPrompt) || !strings.Contains(stdout, "Approved by: http") || !strings.Contains(stdout, "Next runs: ") {
		t.Errorf("schedules show:\n%s", stdout)
	}

	// The terminal shows the inbox once.
	stdout, _, _ = run(t, h, "", "chat")
	if !strings.Contains(stdout, "While you were away, scheduled runs said (1):") || !strings.Contains(stdout, "  | Time to water the <plants>!") {
		t.Errorf("chat's start:\n%s", stdout)
	}
	if stdout, _, _ = run(t, h, "", "chat"); strings.Contains(stdout, "While you were away") {
		t.Errorf("the inbox shown twice:\n%s", stdout)
	}
	if _, got := d.do(t, "GET", "/api/inbox", d.token, nil); fmt.Sprint(got["inbox"]) != "[]" {
		t.Errorf("unread after the chat showed it: %v", got)
	}

	// A restart runs nothing twice: the next run is 5 minutes away.
	d.stop(t)
	d = startServeAt(t, h, addr)
	waitUntil(t, "the scheduler to look at the schedules", func() bool { return strings.Contains(d.log(), "scheduler started") })
	if !strings.Contains(d.log(), `msg="scheduler started" active=1 due_now=0`) {
		t.Errorf("the restarted daemon's scheduler: %s", d.log())
	}
	if n := m.count(); n != 1 {
		t.Errorf("%d runs after the restart, want still 1", n)
	}
	stdout, _, code = run(t, h, "", "schedules", "pause", "1")
	if code != 0 || !strings.Contains(stdout, "Schedule 1 is paused.") {
		t.Errorf("pause: %d %s", code, stdout)
	}
	_, got := d.do(t, "GET", "/api/schedules/1", d.token, nil)
	if sc, _ := got["schedule"].(map[string]any); sc["state"] != "paused" || sc["next_run"] != nil {
		t.Errorf("after pause: %v", got)
	}
	if _, _, code := run(t, h, "", "schedules", "resume", "7"); code != 1 {
		t.Errorf("resume of an unknown schedule: exit %d", code)
	}
}

// TestScheduleThroughTelegram: asked for in Telegram and approved with
// the card's button, the schedule's first run reaches the owner's chat,
// headed by the daemon's words; /schedules lists it; nothing waits in the
// inbox.
func TestScheduleThroughTelegram(t *testing.T) {
	t.Parallel()
	bot := telegramtest.New(t, botToken)
	m := &scheduleModel{}
	srv := brokertest.NewServer(t, "openai", m.reply)
	h := home(t, "openai", srv.BaseURL(), fmt.Sprintf("telegram:\n  api_base: %s\n  allowed_users: [%d]\n", bot.URL(), telegramtest.Owner))
	os.WriteFile(filepath.Join(h, ".env"), []byte("TEST_PROVIDER_KEY="+apiKey+"\nTELEGRAM_BOT_TOKEN="+botToken+"\n"), 0o600)
	d := startServe(t, h)

	bot.Message("remind me to water the plants every 5 minutes")
	var approve string
	bot.WaitFor(t, "the card", func() bool {
		for _, b := range bot.Buttons() {
			if strings.HasPrefix(b, "ap:") {
				approve = b
				return true
			}
		}
		return false
	})
	if bot.SentCount("Next runs if you approve now:") == 0 || bot.SentCount("your Telegram chat") == 0 {
		t.Errorf("the card lacks the next runs or where results go: %q", bot.Sent())
	}
	bot.Press(approve)
	bot.WaitFor(t, "the run in the chat", func() bool { return bot.SentCount("Time to water the &lt;plants&gt;!") == 1 })
	if bot.SentCount("⏰ Schedule 1 (every 5m), due ") != 1 {
		t.Errorf("no head before the run's reply: %q", bot.Sent())
	}
	bot.Message("/schedules")
	bot.WaitFor(t, "/schedules", func() bool { return bot.SentCount("Schedules:") == 1 })
	if bot.SentCount("1 every 5m (Local), next: ") != 1 {
		t.Errorf("/schedules: %q", bot.Sent())
	}
	if _, got := d.do(t, "GET", "/api/inbox?all=1", d.token, nil); fmt.Sprint(got["inbox"]) != "[]" {
		t.Errorf("the inbox holds what Telegram took: %v", got)
	}
	if _, got := d.do(t, "GET", "/api/schedules", d.token, nil); !strings.Contains(fmt.Sprint(got), "chat:tg:42") {
		t.Errorf("schedules: %v", got)
	}
}
