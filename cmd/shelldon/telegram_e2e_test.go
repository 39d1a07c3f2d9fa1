package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

const botToken = "123456789:AAEhBOweik6ad9r_QXMENQjcrGbqCr4K-ew"

// fakeBotAPI is a Telegram Bot API server on loopback: it hands out the
// updates a test queues and records every call.
type fakeBotAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	calls   []botCall
	updates chan map[string]any
	nextID  int64
}

type botCall struct {
	Method string
	Body   map[string]any
}

func newFakeBotAPI(t *testing.T) *fakeBotAPI {
	f := &fakeBotAPI{updates: make(chan map[string]any, 16), nextID: 1}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := "/bot" + botToken + "/"
		if !strings.HasPrefix(r.URL.Path, prefix) {
			http.Error(w, `{"ok":false,"error_code":404,"description":"Not Found"}`, 404)
			return
		}
		method := strings.TrimPrefix(r.URL.Path, prefix)
		body := map[string]any{}
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			data, _ := io.ReadAll(r.Body)
			json.Unmarshal(data, &body)
		}
		f.mu.Lock()
		f.calls = append(f.calls, botCall{method, body})
		f.mu.Unlock()
		var result any = true
		switch method {
		case "getMe":
			result = map[string]any{"id": 1, "is_bot": true, "first_name": "shelldon", "username": "shelldon_test_bot"}
		case "getUpdates":
			var list []map[string]any
			select {
			case u := <-f.updates:
				list = append(list, u)
			case <-time.After(300 * time.Millisecond):
			case <-r.Context().Done():
			}
			result = list
			if list == nil {
				result = []any{}
			}
		case "sendMessage", "editMessageText", "sendDocument":
			f.mu.Lock()
			f.nextID++
			id := f.nextID
			f.mu.Unlock()
			result = map[string]any{"message_id": id, "date": 0, "chat": map[string]any{"id": body["chat_id"], "type": "private"}}
		}
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeBotAPI) message(updateID, user int64, text string) {
	f.updates <- map[string]any{"update_id": updateID, "message": map[string]any{
		"message_id": updateID, "date": 1, "text": text,
		"from": map[string]any{"id": user, "is_bot": false, "first_name": "u"},
		"chat": map[string]any{"id": user, "type": "private"}}}
}

func (f *fakeBotAPI) press(updateID, user int64, data string) {
	f.updates <- map[string]any{"update_id": updateID, "callback_query": map[string]any{
		"id": fmt.Sprint("cb", updateID), "data": data,
		"from":    map[string]any{"id": user, "is_bot": false, "first_name": "u"},
		"message": map[string]any{"message_id": 7, "date": 1, "chat": map[string]any{"id": user, "type": "private"}}}}
}

// waitFor waits until a recorded call satisfies ok, and returns it.
func (f *fakeBotAPI) waitFor(t *testing.T, what string, ok func(botCall) bool) botCall {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		for _, c := range f.calls {
			if ok(c) {
				f.mu.Unlock()
				return c
			}
		}
		f.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s; calls: %v", what, f.methods())
	return botCall{}
}

func (f *fakeBotAPI) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Method)
	}
	return out
}

func (f *fakeBotAPI) sentTo(chat int64) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if c.Method == "sendMessage" && fmt.Sprint(c.Body["chat_id"]) == fmt.Sprint(chat) {
			out = append(out, fmt.Sprint(c.Body["text"]))
		}
	}
	return out
}

// TestTelegramThroughServe: `shelldon serve` with a bot token chats with an
// allowed user, ignores a stranger, sends a card for a RISKY call, and after
// a restart the card's button still decides it.
func TestTelegramThroughServe(t *testing.T) {
	t.Parallel()
	bot := newFakeBotAPI(t)
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser {
			if last.Text == "write the note" {
				return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "w1", Name: "write_file", Arguments: `{"path":"tg.txt","content":"<b>from telegram</b>"}`}}}
			}
			return brokertest.Reply{Text: "hello <owner> & friends"}
		}
		return brokertest.Reply{Text: "RESULTS: " + last.ToolResults[0].Content}
	})
	h := home(t, "openai", srv.BaseURL(), fmt.Sprintf("telegram:\n  api_base: %s\n  allowed_users: [42]\n", bot.srv.URL))
	os.WriteFile(filepath.Join(h, ".env"), []byte("TEST_PROVIDER_KEY="+apiKey+"\nTELEGRAM_BOT_TOKEN="+botToken+"\n"), 0o600)
	d := startServe(t, h)
	bot.waitFor(t, "setMyCommands", func(c botCall) bool { return c.Method == "setMyCommands" })

	bot.message(1, 99, "hello from a stranger")
	bot.message(2, 42, "hello")
	got := bot.waitFor(t, "a reply to the owner", func(c botCall) bool {
		return c.Method == "sendMessage" && fmt.Sprint(c.Body["chat_id"]) == "42"
	})
	if text := fmt.Sprint(got.Body["text"]); !strings.Contains(text, "hello &lt;owner&gt; &amp; friends") {
		t.Errorf("reply not escaped: %q", text)
	}
	bot.waitFor(t, "typing", func(c botCall) bool { return c.Method == "sendChatAction" })
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the provider was called %d times; the stranger must cause no model call", n)
	}
	if msgs := bot.sentTo(99); len(msgs) != 0 {
		t.Errorf("the stranger got answers: %q", msgs)
	}

	bot.message(3, 42, "write the note")
	card := bot.waitFor(t, "a card", func(c botCall) bool {
		return c.Method == "sendMessage" && strings.Contains(fmt.Sprint(c.Body["reply_markup"]), "ap:")
	})
	id := regexp.MustCompile(`ap:([a-z0-9]+)`).FindStringSubmatch(fmt.Sprint(card.Body["reply_markup"]))[1]
	if !strings.Contains(fmt.Sprint(card.Body["text"]), "write_file") {
		t.Errorf("card text: %v", card.Body["text"])
	}

	// Restart the daemon: the card still works.
	d.stop(t)
	startServe(t, h)
	bot.press(4, 99, "ap:"+id) // a stranger's press decides nothing
	bot.waitFor(t, "the stranger's press answered", func(c botCall) bool {
		return c.Method == "answerCallbackQuery" && c.Body["callback_query_id"] == "cb4"
	})
	if state, _ := approvalState(t, openDB(t, h), id); state != "pending" {
		t.Fatalf("a stranger's press changed the request to %q", state)
	}
	bot.press(5, 42, "ap:"+id)
	bot.waitFor(t, "the card edited", func(c botCall) bool {
		return c.Method == "editMessageText" && strings.Contains(fmt.Sprint(c.Body["text"]), "Approved")
	})
	bot.waitFor(t, "the resumed reply", func(c botCall) bool {
		return c.Method == "sendMessage" && strings.Contains(fmt.Sprint(c.Body["text"]), "RESULTS: created tg.txt")
	})
	if data, _ := os.ReadFile(filepath.Join(h, "workspace", "tg.txt")); string(data) != "<b>from telegram</b>" {
		t.Errorf("tg.txt = %q", data)
	}
	if strings.Contains(d.log(), botToken) {
		t.Error("the bot token reached the log")
	}
}
