package main

import (
	"fmt"
	"github.com/shelldon/shelldon/internal/transport/telegram/telegramtest"
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

// TestTelegramMessagesSurviveRestart: three messages arrive while a slow
// turn runs; the daemon is stopped, with SIGTERM (the turn finishes within
// the grace and is answered) or SIGKILL (the turn dies with it). After a
// restart every message gets its turn, in order; the killed turn, which
// had done nothing yet, runs again, and its owner is told so once.
func TestTelegramMessagesSurviveRestart(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			bot := telegramtest.New(t, botToken)
			var model telegramtest.Events
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
				model.Notify()
				if text == "slow" {
					<-release
				}
				return brokertest.Reply{Text: "answer: " + text}
			})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			t.Cleanup(free) // before the provider closes
			h := home(t, "openai", srv.BaseURL(), fmt.Sprintf("telegram:\n  api_base: %s\n  allowed_users: [42]\n", bot.URL()))
			os.WriteFile(filepath.Join(h, ".env"), []byte("TEST_PROVIDER_KEY="+apiKey+"\nTELEGRAM_BOT_TOKEN="+botToken+"\n"), 0o600)
			d := startServe(t, h)

			bot.Message("slow")
			model.WaitFor(t, "the slow turn at the model", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(asked) == 1
			})
			var last int64
			for _, m := range []string{"m2", "m3", "m4"} {
				last = bot.Message(m)
			}
			bot.WaitFor(t, "the three messages confirmed", func() bool { return bot.Confirmed(last) })

			exited := make(chan struct{})
			go func() { d.cmd.Wait(); close(exited) }()
			d.cmd.Process.Signal(sig)
			if sig == syscall.SIGTERM {
				// The bot stops receiving (its long poll is abandoned), then
				// the turn finishes within the grace.
				bot.WaitFor(t, "the bot to stop receiving", func() bool { return bot.GaveUp() > 0 })
				free()
			}
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatal("the daemon did not exit")
			}
			if sig == syscall.SIGTERM {
				if n := bot.SentCount("answer: slow"); n != 1 {
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

			free() // a rerun of the killed turn is not held up
			startServe(t, h)
			bot.WaitFor(t, "the answers after the restart", func() bool { return bot.SentCount("answer: m4") == 1 })
			mu.Lock()
			got := slices.Clone(asked)
			mu.Unlock()
			want := []string{"slow", "m2", "m3", "m4"}
			if sig == syscall.SIGKILL {
				want = slices.Insert(want, 1, "slow")
			}
			if !slices.Equal(got, want) {
				t.Errorf("the model saw %q; want %q", got, want)
			}
			for _, m := range []string{"slow", "m2", "m3", "m4"} {
				if n := bot.SentCount("answer: " + m); n != 1 {
					t.Errorf("%s answered %d times", m, n)
				}
			}
			wantNote := 0
			if sig == syscall.SIGKILL {
				wantNote = 1
			}
			if n := bot.SentCount("restarted while working on your message"); n != wantNote {
				t.Errorf("%d notes about the rerun turn; want %d", n, wantNote)
			}
		})
	}
}
