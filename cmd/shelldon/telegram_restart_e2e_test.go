package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// notifier wakes its waiters at every change: each change closes and
// replaces the channel, so a waiter cannot miss one between its look and
// its wait.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *notifier) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
	}
	n.ch = make(chan struct{})
}

func (n *notifier) wake() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// waitFor waits for cond, looking again at each change, for at most 30 s.
func (n *notifier) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	limit := time.After(30 * time.Second)
	for {
		ch := n.wake()
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

// offsetBotAPI is a Bot API on 127.0.0.1 that keeps every update and serves
// getUpdates from the offset, as Telegram does: an update not confirmed
// comes again, a confirmed one never.
type offsetBotAPI struct {
	notifier
	srv       *httptest.Server
	mu        sync.Mutex
	updates   []json.RawMessage // update i+1
	calls     []map[string]any  // "method" plus the body
	abandoned int               // getUpdates calls the bot left unanswered (it stopped)
}

func newOffsetBotAPI(t *testing.T) *offsetBotAPI {
	b := &offsetBotAPI{}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *offsetBotAPI) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+botToken+"/")
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
	b.notify()
	var result any = true
	switch method {
	case "getMe":
		result = map[string]any{"id": 1, "is_bot": true, "first_name": "shelldon", "username": "shelldon_test_bot"}
	case "sendMessage", "editMessageText":
		result = map[string]any{"message_id": 1, "date": 1, "chat": map[string]any{"id": body["chat_id"], "type": "private"}}
	case "getUpdates":
		offset, _ := body["offset"].(float64)
		limit := time.After(2 * time.Second)
		list := []json.RawMessage{}
	wait:
		for {
			ch := b.wake()
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
				b.notify()
				return
			}
		}
		result = list
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

// message queues the owner's (user 42) text; it returns the update id.
func (b *offsetBotAPI) message(text string) int64 {
	b.mu.Lock()
	id := int64(len(b.updates) + 1)
	raw, _ := json.Marshal(map[string]any{"update_id": id, "message": map[string]any{
		"message_id": id, "date": 1, "text": text,
		"from": map[string]any{"id": 42, "is_bot": false, "first_name": "o"},
		"chat": map[string]any{"id": 42, "type": "private"}}})
	b.updates = append(b.updates, raw)
	b.mu.Unlock()
	b.notify()
	return id
}

func (b *offsetBotAPI) confirmed(id int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.calls {
		if off, _ := c["offset"].(float64); c["method"] == "getUpdates" && int64(off) > id {
			return true
		}
	}
	return false
}

func (b *offsetBotAPI) gaveUp() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.abandoned
}

// sent counts the messages sent whose text contains sub.
func (b *offsetBotAPI) sent(sub string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.calls {
		if c["method"] == "sendMessage" && strings.Contains(fmt.Sprint(c["text"]), sub) {
			n++
		}
	}
	return n
}

// TestTelegramMessagesSurviveRestart: three messages arrive while a slow
// turn runs; the daemon is stopped, with SIGTERM (the turn finishes within
// the grace and is answered) or SIGKILL (the turn dies with it). After a
// restart every message gets its turn exactly once, in order; the killed
// turn is not run again, its owner is told once.
func TestTelegramMessagesSurviveRestart(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			bot := newOffsetBotAPI(t)
			var model notifier
			var mu sync.Mutex
			var asked []string
			release := make(chan struct{})
			srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
				msgs := r.Request.Messages
				if len(msgs) == 0 || msgs[len(msgs)-1].Role != contracts.RoleUser {
					return brokertest.Reply{Text: "?"}
				}
				text := msgs[len(msgs)-1].Text
				mu.Lock()
				asked = append(asked, text)
				mu.Unlock()
				model.notify()
				if text == "slow" {
					<-release
				}
				return brokertest.Reply{Text: "answer: " + text}
			})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			t.Cleanup(free) // before the provider closes
			h := home(t, "openai", srv.BaseURL(), fmt.Sprintf("telegram:\n  api_base: %s\n  allowed_users: [42]\n", bot.srv.URL))
			os.WriteFile(filepath.Join(h, ".env"), []byte("TEST_PROVIDER_KEY="+apiKey+"\nTELEGRAM_BOT_TOKEN="+botToken+"\n"), 0o600)
			d := startServe(t, h)

			bot.message("slow")
			model.waitFor(t, "the slow turn at the model", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(asked) == 1
			})
			var last int64
			for _, m := range []string{"m2", "m3", "m4"} {
				last = bot.message(m)
			}
			bot.waitFor(t, "the three messages confirmed", func() bool { return bot.confirmed(last) })

			exited := make(chan struct{})
			go func() { d.cmd.Wait(); close(exited) }()
			d.cmd.Process.Signal(sig)
			if sig == syscall.SIGTERM {
				// The bot stops receiving (its long poll is abandoned), then
				// the turn finishes within the grace.
				bot.waitFor(t, "the bot to stop receiving", func() bool { return bot.gaveUp() > 0 })
				free()
			}
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatal("the daemon did not exit")
			}
			if sig == syscall.SIGTERM {
				if n := bot.sent("answer: slow"); n != 1 {
					t.Errorf("the turn that finished during the drain was answered %d times; want 1", n)
				}
				if !strings.Contains(d.log(), "stopped") {
					t.Errorf("no drain in the log:\n%s", d.log())
				}
			}
			mu.Lock()
			before := slices.Clone(asked)
			mu.Unlock()
			if !slices.Equal(before, []string{"slow"}) {
				t.Errorf("before the restart the model saw %q; the queued messages must wait", before)
			}

			startServe(t, h)
			bot.waitFor(t, "the answers after the restart", func() bool { return bot.sent("answer: m4") == 1 })
			mu.Lock()
			got := slices.Clone(asked)
			mu.Unlock()
			if want := []string{"slow", "m2", "m3", "m4"}; !slices.Equal(got, want) {
				t.Errorf("the model saw %q; want each message once, in order: %q", got, want)
			}
			for _, m := range []string{"m2", "m3", "m4"} {
				if n := bot.sent("answer: " + m); n != 1 {
					t.Errorf("%s answered %d times", m, n)
				}
			}
			wantNote := 0
			if sig == syscall.SIGKILL {
				wantNote = 1
			}
			if n := bot.sent("restarted while working on your message"); n != wantNote {
				t.Errorf("%d notes about the interrupted turn; want %d", n, wantNote)
			}
		})
	}
}
