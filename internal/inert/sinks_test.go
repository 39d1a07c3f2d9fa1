package inert_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/app"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/transport/cli"
	"github.com/shelldon/shelldon/internal/transport/telegram"
)

// evil holds one of each kind of character that acts on a screen or hides
// text: escape sequences (clear screen, window title, cursor up), carriage
// return, backspace, the C1 CSI as a character and as a raw byte, bidi
// overrides and isolates, zero-width characters, a BOM, an invisible
// filler, a tag character and invalid UTF-8.
const evil = "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[1A\r\b\u009b31m\x9b\u202e\u2066\u2069\u200b\u200d\ufeff\u3164\U000E0041\xff\xfe"

// shown is how the start of evil reads once escaped, in every sink.
const shown = `\x1b[2J\x1b[H`

// long is a very long hostile value.
var long = strings.Repeat("x"+evil, 2000)

// longArgs are a call's arguments holding it, and a multi-line value.
var longArgs, _ = json.Marshal(map[string]string{"command": long, "note": "a" + evil + "\nsecond line"})

// TestEverySinkIsInert walks the sinks a person reads: the terminal chat,
// the commands (approvals list/show, audit, tools list/show, skills
// list/show, errors), Telegram and the log. Each is fed values full of
// escape sequences, bidi and zero-width characters, invalid bytes and
// very long values; what reaches the person must hold none of them raw,
// and must show them escaped.
func TestEverySinkIsInert(t *testing.T) {
	t.Parallel()
	h := hostileHome(t)
	outputs := map[string]string{}
	for _, args := range [][]string{
		{"approvals", "list"},
		{"approvals", "show", "evilrequest"},
		{"approvals", "show", "evilrequest", "--full"},
		{"approvals", "show", "no" + evil},
		{"audit"},
		{"tools", "list"},
		{"tools", "show", "shout"},
		{"tools", "show", "no" + evil},
		{"skills", "list"},
		{"skills", "show", "evil-draft"},
		{"skills", "show", "owned"},
		{"skills", "show", "daily-note"},
		{"skills", "show", "no" + evil},
		{"memory", "list"},
		{"memory", "show", "1"},
		{"memory", "show", "no" + evil},
		{"schedules", "list"},
		{"schedules", "show", "1"},
		{"schedules", "inbox"},
	} {
		var out, errw bytes.Buffer
		app.Main(append([]string{"--home", h}, args...), strings.NewReader(""), &out, &errw, environ(h))
		outputs[strings.Join(args, " ")] = out.String() + errw.String()
	}
	outputs["terminal chat"] = terminalChat(t)
	outputs["telegram"] = telegramChat(t)
	outputs["log"] = logLines(t, h)

	// Tool names, and skills in use, cannot be hostile (each is checked
	// when made or read: the library refuses the owned skill above and
	// says why); these show no hostile value to escape.
	noHostileName := map[string]bool{"tools list": true, "skills list": true, "skills show owned": true}
	// Where a long value is cut rather than shown whole.
	bounded := map[string]bool{"approvals list": true, "approvals show evilrequest": true, "audit": true, "terminal chat": true, "memory list": true, "schedules list": true}
	for sink, out := range outputs {
		if bad := inert.Raw(out, false); bad != "" {
			t.Errorf("%s: raw %s reaches the person:\n%q", sink, bad, out)
		}
		if !noHostileName[sink] && !strings.Contains(out, shown) {
			t.Errorf("%s does not show the hostile value escaped:\n%s", sink, out)
		}
		if bounded[sink] && len(out) > 32<<10 {
			t.Errorf("%s: %d bytes; a long value should be cut", sink, len(out))
		}
	}
	// Every byte is readable where the owner asks for it.
	var decoded map[string]string
	must(t, json.Unmarshal(longArgs, &decoded))
	if full := outputs["approvals show evilrequest --full"]; !strings.Contains(full, "  command: "+inert.Line(decoded["command"])+"\n") {
		t.Error("approvals show --full does not show the long argument whole")
	}
	// A draft waiting for approval is listed and shown as such.
	for _, re := range []string{`(?m)^evil-draft +- +- +waiting `, `(?m)^daily-note +bundled +- +waiting `} {
		if !regexp.MustCompile(re).MatchString(outputs["skills list"]) {
			t.Errorf("skills list does not match %s:\n%s", re, outputs["skills list"])
		}
	}
	if show := outputs["skills show daily-note"]; !regexp.MustCompile(`(?s)daily-note \(bundled, version 0, in use\).*Draft waiting for your approval \(a change of it; NOT in use`).MatchString(show) {
		t.Errorf("skills show of a skill with a waiting change:\n%s", show)
	}
	if show := outputs["skills show evil-draft"]; !strings.Contains(show, "Draft waiting for your approval (a new skill; NOT in use") || strings.Contains(show, "in use)") {
		t.Errorf("skills show of a new draft:\n%s", show)
	}
	if show := outputs["approvals show evilrequest"]; !strings.Contains(show, "approvals show evilrequest --full shows every byte") {
		t.Errorf("approvals show does not say how to see the part not shown:\n%.2000s", show)
	}
}

func environ(h string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h, "SHELLDON_HOME=" + h, "TZ=UTC"}
}

// hostileHome is a home whose store, tools and skills hold hostile values.
func hostileHome(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	cfg := "provider:\n  kind: openai\n  base_url: http://127.0.0.1:9\n  model: m\n  api_key_env: TEST_PROVIDER_KEY\n"
	must(t, os.WriteFile(filepath.Join(h, "config.yaml"), []byte(cfg), 0o600))
	must(t, os.WriteFile(filepath.Join(h, ".env"), []byte("TEST_PROVIDER_KEY=sk-test-0123456789abcdef\n"), 0o600))

	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(h, "shelldon.db"))
	must(t, err)
	defer st.Close()
	now := time.Now()
	args := longArgs
	for _, a := range []store.Approval{
		{ID: "evilrequest", Kind: store.KindToolCall, Chat: "c" + evil, Tool: "run" + evil, Args: string(args),
			Summary: "Tool: x" + evil + "\n  command: " + evil, Pending: contracts.Pending{Call: contracts.ToolCall{Name: "run_shell"}}},
		{ID: store.NewApprovalID(), Kind: store.KindSkill, Chat: "c", Tool: "evil-draft", Args: `{"name":"evil-draft"}`,
			Summary: "New skill: evil-draft\n" + evil},
	} {
		a.State, a.ArgsHash, a.CreatedAt, a.ExpiresAt = store.ApprovalPending, "hash", now, now.Add(time.Hour)
		must(t, st.CreateApproval(ctx, a))
	}
	_, err = st.AppendAudit(ctx, store.AuditEntry{At: now, Chat: "c" + evil, Kind: "tool_call", Tool: "made-up" + evil, Args: long, Summary: "unknown tool " + evil})
	must(t, err)
	_, _, err = st.Remember(ctx, "c"+evil, 1, long, now, 0) // a fact as hostile as the store would keep (core refuses it)
	must(t, err)
	// A schedule and what its run said, as hostile as the store would keep
	// (the schedule tool refuses such a prompt).
	sc, err := st.CreateSchedule(ctx, store.Schedule{When: "every 30m", Timezone: "UTC", Prompt: long, Chat: "c" + evil, CreatedAt: now,
		ApprovedBy: "by" + evil, NextDue: now.Add(time.Hour)})
	must(t, err)
	must(t, st.FinishScheduledRun(ctx, store.ScheduledRun{Schedule: sc.ID, Due: sc.NextDue, At: now, Outcome: "ok " + evil,
		Next: now.Add(90 * time.Minute), Inbox: &store.InboxItem{Turn: 1, Text: "said " + evil}}))

	dir, err := selfcode.Open(filepath.Join(h, "tools"), nil)
	must(t, err)
	m, err := dir.Stage("shout", selfcode.Starlark, "def run(text):\n    return text # "+evil+"\n", "# test "+evil+"\n",
		selfcode.Meta{Description: "shouts " + evil, ParamsSchema: json.RawMessage(`{"type":"object"}`)}, "gate passed "+evil+"\nline two")
	must(t, err)
	_, err = dir.Promote("shout", m.Hash, "owner")
	must(t, err)

	owned := filepath.Join(h, "skills", "owned")
	must(t, os.MkdirAll(owned, 0o700))
	must(t, os.WriteFile(filepath.Join(owned, "SKILL.md"), []byte("---\nname: owned\ndescription: d "+evil+"\n---\nBody "+evil+"\n"), 0o600))
	change := filepath.Join(h, "skills", ".staged", "daily-note")
	must(t, os.MkdirAll(change, 0o700))
	must(t, os.WriteFile(filepath.Join(change, "SKILL.md"), []byte("---\nname: daily-note\ndescription: d\n---\nChanged "+evil+"\n"), 0o600))
	draft := filepath.Join(h, "skills", ".staged", "evil-draft")
	must(t, os.MkdirAll(draft, 0o700))
	must(t, os.WriteFile(filepath.Join(draft, "SKILL.md"), []byte("---\nname: evil-draft\ndescription: d\n---\nStep "+evil+"\n"), 0o600))
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// hostileCore is a core whose every answer is hostile: a turn with a
// made-up tool, streamed text, a reply and a parked request.
type hostileCore struct{}

func (hostileCore) Send(_ context.Context, _, _ string, ev core.Events) (core.Outcome, error) {
	if ev.Tool != nil {
		ev.Tool(contracts.ToolEvent{Phase: contracts.PhaseStart, Tool: evil, Arguments: long})
		ev.Tool(contracts.ToolEvent{Phase: contracts.PhaseEnd, Tool: evil, Summary: "unknown tool " + evil})
	}
	if ev.Text != nil {
		ev.Text("streamed " + evil)
	}
	return core.Outcome{Turn: 1, Reply: "reply " + evil + "\n```\n" + evil + "\n```", Approvals: []core.ApprovalView{hostileRequest()}}, nil
}

func (h hostileCore) SendOnce(ctx context.Context, chat, _, text string, ev core.Events) (core.Outcome, error) {
	return h.Send(ctx, chat, text, ev)
}

func hostileRequest() core.ApprovalView {
	args, _ := json.Marshal(map[string]string{"command": long})
	return core.ApprovalView{ID: "id" + evil, Kind: "tool_call", Chat: "tg:1", Tool: "run" + evil, Arguments: string(args),
		Summary: "Tool: " + evil + "\n  command: " + evil, State: "pending", ExpiresAt: time.Now().Add(time.Hour)}
}

func (hostileCore) Decide(context.Context, string, bool, string, core.Events) (core.Outcome, error) {
	return core.Outcome{}, fmt.Errorf("%w: %s", core.ErrStaleApproval, evil)
}

func (hostileCore) Approvals(context.Context) ([]core.ApprovalView, error) {
	return []core.ApprovalView{hostileRequest()}, nil
}

func (hostileCore) Tools(context.Context) ([]core.ToolView, error) {
	return []core.ToolView{{Name: evil, Tier: "free", Runs: "sandbox", Source: "self", State: "live"}}, nil
}

func (hostileCore) Audit(context.Context, core.AuditQuery) ([]core.AuditEntry, error) {
	return []core.AuditEntry{{At: time.Now(), Kind: "tool_call", Tool: evil, Summary: evil}}, nil
}

func terminalChat(t *testing.T) string {
	var out bytes.Buffer
	term := &cli.Terminal{Chat: hostileCore{}, Decider: hostileCore{}, In: strings.NewReader("hi\ny\n"), Out: &out, Err: &out,
		Interrupts: make(chan os.Signal)}
	must(t, term.Run(context.Background()))
	return out.String()
}

// telegramChat runs the bot against a Bot API on loopback that records
// what it is sent, for /pending, /tools, /audit, a chat message and a
// button press.
func telegramChat(t *testing.T) string {
	const token = "123456:ABCdefGHIjklMNOpqrSTUvwxYZ0123456789"
	var mu sync.Mutex
	var sent strings.Builder
	updates := make(chan map[string]any, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := strings.TrimPrefix(r.URL.Path, "/bot"+token+"/")
		var result any = true
		body := map[string]any{}
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			if err := r.ParseMultipartForm(32 << 20); err == nil {
				mu.Lock()
				for _, v := range r.MultipartForm.Value {
					sent.WriteString(v[0] + "\n")
				}
				for _, fhs := range r.MultipartForm.File {
					f, _ := fhs[0].Open()
					raw, _ := io.ReadAll(f)
					f.Close()
					sent.Write(raw)
				}
				mu.Unlock()
			}
		} else {
			json.NewDecoder(r.Body).Decode(&body)
		}
		switch method {
		case "getMe":
			result = map[string]any{"id": 1, "is_bot": true, "first_name": "shelldon", "username": "shelldon_bot"}
		case "getUpdates":
			var list []map[string]any
			select {
			case u := <-updates:
				list = append(list, u)
			case <-time.After(50 * time.Millisecond):
			case <-r.Context().Done():
			}
			result = list
			if list == nil {
				result = []any{}
			}
		case "sendMessage", "editMessageText", "sendDocument":
			mu.Lock()
			if s, ok := body["text"].(string); ok {
				sent.WriteString(s + "\n")
			}
			mu.Unlock()
			result = map[string]any{"message_id": 7, "date": time.Now().Unix(), "chat": map[string]any{"id": 1, "type": "private"}}
		}
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
	}))
	defer srv.Close()
	bot, err := telegram.New(telegram.Options{Token: token, APIBase: srv.URL, AllowedUsers: []int64{1}, Core: hostileCore{},
		Audit: hostileCore{}, Logger: slog.New(slog.DiscardHandler), PollTimeout: time.Second})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	from := map[string]any{"id": 1, "is_bot": false, "first_name": "o" + evil}
	for i, text := range []string{"/pending", "/tools", "/audit", "/start", "hi"} {
		updates <- map[string]any{"update_id": i + 1, "message": map[string]any{"message_id": i + 1, "date": 1, "text": text,
			"from": from, "chat": map[string]any{"id": 1, "type": "private"}}}
	}
	updates <- map[string]any{"update_id": 9, "callback_query": map[string]any{"id": "q", "data": "ap:x", "from": from,
		"message": map[string]any{"message_id": 7, "date": 1, "text": "card", "chat": map[string]any{"id": 1, "type": "private"}}}}
	// Wait until every update was served: the last reply (the press's
	// reason) arrives after the others.
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		s := sent.String()
		mu.Unlock()
		if strings.Count(s, "not carried out") >= 1 && strings.Contains(s, "reply ") && strings.Count(s, "Approval needed") >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("bot: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return sent.String()
}

// logLines logs hostile messages and values through the app's logger.
func logLines(t *testing.T, h string) string {
	var buf bytes.Buffer
	a, err := app.OpenFor(context.Background(), app.ForReading, h, environ(h), &buf, slog.LevelDebug)
	must(t, err)
	defer a.Close()
	a.Log.Error("unknown tool "+evil, "tool", evil, "err", errors.New(evil), slog.Group("g", "v", evil+"\u3164\u034f"))
	a.Log.Info("filler\u3164only", "v", "cgj\u034fonly")
	return buf.String()
}
