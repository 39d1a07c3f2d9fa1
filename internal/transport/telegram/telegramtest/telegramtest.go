// Package telegramtest is a Telegram Bot API on 127.0.0.1 for tests of the
// daemon's Telegram transport across restarts: it keeps every update and
// serves getUpdates from the offset, as Telegram does (an update not
// confirmed comes again, a confirmed one never), and records every call.
// Events lets a test wait for a change instead of sleeping. Tests only.
package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Owner is the user id the messages come from (allowed_users: [42]).
const Owner = 42

// Events is a condition to wait on: every change closes and replaces the
// channel, so a waiter cannot miss one between its look and its wait.
type Events struct {
	mu sync.Mutex
	ch chan struct{}
}

// Notify wakes every waiter.
func (e *Events) Notify() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch != nil {
		close(e.ch)
	}
	e.ch = make(chan struct{})
}

// Wake returns a channel closed at the next change.
func (e *Events) Wake() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch == nil {
		e.ch = make(chan struct{})
	}
	return e.ch
}

// WaitFor waits for cond, looking again at each change, for at most 30 s.
func (e *Events) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	limit := time.After(30 * time.Second)
	for {
		ch := e.Wake()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-limit:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// BotAPI is the fake Bot API; its Events change at every call and update.
type BotAPI struct {
	Events
	srv       *httptest.Server
	token     string
	mu        sync.Mutex
	updates   []json.RawMessage // update i+1
	calls     []map[string]any  // "method" plus the body
	abandoned int               // getUpdates calls the bot left unanswered (it stopped)
}

// New starts a Bot API for the bot token, closed when the test ends.
func New(t testing.TB, token string) *BotAPI {
	b := &BotAPI{token: token}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

// URL is the telegram.api_base to configure.
func (b *BotAPI) URL() string { return b.srv.URL }

func (b *BotAPI) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+b.token+"/")
	if !ok {
		http.Error(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`, 401)
		return
	}
	body := map[string]any{}
	json.NewDecoder(r.Body).Decode(&body)
	body["method"] = method
	b.mu.Lock()
	b.calls = append(b.calls, body)
	b.mu.Unlock()
	b.Notify()
	var result any = true
	switch method {
	case "getMe":
		result = map[string]any{"id": 1, "is_bot": true, "first_name": "shelldon", "username": "shelldon_test_bot"}
	case "sendMessage", "editMessageText":
		result = map[string]any{"message_id": 1, "date": 1, "chat": map[string]any{"id": body["chat_id"], "type": "private"}}
	case "getUpdates":
		offset, _ := body["offset"].(float64)
		limit := time.After(time.Second)
		list := []json.RawMessage{}
	wait:
		for {
			ch := b.Wake()
			b.mu.Lock()
			for i := max(int(offset)-1, 0); i < len(b.updates); i++ {
				list = append(list, b.updates[i])
			}
			b.mu.Unlock()
			if len(list) > 0 {
				break
			}
			select {
			case <-ch:
			case <-limit:
				break wait
			case <-r.Context().Done():
				b.mu.Lock()
				b.abandoned++
				b.mu.Unlock()
				b.Notify()
				return
			}
		}
		result = list
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

// Message queues the owner's text and returns its update id.
func (b *BotAPI) Message(text string) int64 {
	b.mu.Lock()
	id := int64(len(b.updates) + 1)
	raw, _ := json.Marshal(map[string]any{"update_id": id, "message": map[string]any{
		"message_id": id, "date": 1, "text": text,
		"from": map[string]any{"id": Owner, "is_bot": false, "first_name": "o"},
		"chat": map[string]any{"id": Owner, "type": "private"}}})
	b.updates = append(b.updates, raw)
	b.mu.Unlock()
	b.Notify()
	return id
}

// Confirmed reports whether the bot has confirmed update id (asked for
// updates from past it).
func (b *BotAPI) Confirmed(id int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.calls {
		if off, _ := c["offset"].(float64); c["method"] == "getUpdates" && int64(off) > id {
			return true
		}
	}
	return false
}

// GaveUp counts the getUpdates calls the bot left unanswered (it stopped
// receiving).
func (b *BotAPI) GaveUp() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.abandoned
}

// Sent returns the texts of every message the bot sent, in order.
func (b *BotAPI) Sent() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, c := range b.calls {
		if c["method"] == "sendMessage" {
			out = append(out, fmt.Sprint(c["text"]))
		}
	}
	return out
}

// SentCount counts the messages sent whose text contains sub.
func (b *BotAPI) SentCount(sub string) int {
	n := 0
	for _, s := range b.Sent() {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// Press queues the owner's tap on a button of a message the bot sent, by
// the button's callback data, and returns its update id.
func (b *BotAPI) Press(data string) int64 {
	b.mu.Lock()
	id := int64(len(b.updates) + 1)
	raw, _ := json.Marshal(map[string]any{"update_id": id, "callback_query": map[string]any{
		"id": fmt.Sprintf("cb-%d", id), "data": data,
		"from":    map[string]any{"id": Owner, "is_bot": false, "first_name": "o"},
		"message": map[string]any{"message_id": 1, "date": 1, "text": "card", "chat": map[string]any{"id": Owner, "type": "private"}}}})
	b.updates = append(b.updates, raw)
	b.mu.Unlock()
	b.Notify()
	return id
}

// Buttons returns the callback data of every inline button the bot sent,
// in order.
func (b *BotAPI) Buttons() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, c := range b.calls {
		markup, _ := c["reply_markup"].(map[string]any)
		rows, _ := markup["inline_keyboard"].([]any)
		for _, row := range rows {
			buttons, _ := row.([]any)
			for _, btn := range buttons {
				if m, ok := btn.(map[string]any); ok {
					if d, ok := m["callback_data"].(string); ok {
						out = append(out, d)
					}
				}
			}
		}
	}
	return out
}
