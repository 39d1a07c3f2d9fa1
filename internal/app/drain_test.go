package app

import (
	"context"
	"fmt"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/testbin"
	"github.com/shelldon/shelldon/internal/transport/telegram/telegramtest"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
)

const drainBotToken = "123456:drain-test-token_abcdefghij"

// logSink is the daemon's log, waited on line by line.
type logSink struct {
	telegramtest.Events
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	l.Notify()
	return len(p), nil
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestDaemonDrainsATelegramTurn: the daemon's context ends (serve's, on
// SIGTERM) under a running Telegram turn with a message queued behind it.
// Within the grace the turn finishes, its reply is delivered and its
// history committed before Run returns; when the grace ends first, the
// turn is cancelled and committed as such before Run returns. Either way
// the queued message is not started and stays in the bot's queue, and
// the store is closed after Run, with nothing running.
func TestDaemonDrainsATelegramTurn(t *testing.T) {
	for _, finish := range []bool{true, false} {
		t.Run(map[bool]string{true: "finishes", false: "grace ends"}[finish], func(t *testing.T) {
			api := telegramtest.New(t, drainBotToken)
			var model telegramtest.Events
			release := make(chan struct{})
			var once sync.Once
			var mu sync.Mutex
			var asked []string
			provider := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
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
			t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the provider closes
			home, environ := testHome(t)
			cfg := fmt.Sprintf("provider:\n  kind: openai\n  base_url: %s\n  model: m\n  api_key_env: TEST_KEY\ntelegram:\n  api_base: %s\n  allowed_users: [42]\n",
				provider.BaseURL(), api.URL())
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			environ = append(environ, "TELEGRAM_BOT_TOKEN="+drainBotToken)
			logs := &logSink{}
			// The workers run as a binary built without the race detector.
			bin := testbin.Shelldon(t)
			executable = func() (string, error) { return bin, nil }
			t.Cleanup(func() { executable = core.Executable })
			ctx := context.Background()
			a, err := OpenFor(ctx, ForDaemon, home, environ, logs, 0)
			if err != nil {
				t.Fatal(err)
			}
			d, err := NewDaemon(a, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			d.Grace = 30 * time.Second // the turn finishes well within it
			if !finish {
				d.Grace = time.Second
			}
			runCtx, stop := context.WithCancel(ctx)
			defer stop()
			done := make(chan error, 1)
			go func() { done <- d.Run(runCtx) }()

			api.Message("slow")
			model.WaitFor(t, "the slow turn at the model", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(asked) == 1
			})
			queued := api.Message("queued behind")
			api.WaitFor(t, "the queued message confirmed", func() bool { return api.Confirmed(queued) })

			started := time.Now()
			stop() // what SIGTERM does to serve's context
			logs.WaitFor(t, "the daemon shutting down", func() bool { return strings.Contains(logs.String(), "shutting down") })
			select {
			case err := <-done:
				t.Fatalf("Run returned under a running turn: %v", err)
			default:
			}
			if finish {
				once.Do(func() { close(release) })
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(d.Grace + cancelWait + 5*time.Second):
				t.Fatal("Run did not return after the grace")
			}
			if took := time.Since(started); took > d.Grace+cancelWait {
				t.Errorf("the drain took %v; the grace is %v", took, d.Grace)
			}

			// Run has returned: the turn's end is committed.
			turn, err := a.Store.Turn(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			want := store.StatusOK
			if !finish {
				want = store.StatusCancelled
			}
			if turn.Status != want || turn.Input != "slow" {
				t.Errorf("turn 1: status %q input %q; want %q", turn.Status, turn.Input, want)
			}
			if _, err := a.Store.Turn(ctx, 2); err == nil {
				t.Error("the queued message was started during the drain")
			}
			replied := strings.Contains(strings.Join(api.Sent(), "\n"), "answer: slow")
			if replied != finish {
				t.Errorf("reply delivered = %v; want %v (sent %q)", replied, finish, api.Sent())
			}
			queue, _ := os.ReadDir(filepath.Join(home, "telegram_queue"))
			var names []string
			for _, e := range queue {
				names = append(names, e.Name())
			}
			// The queued message waits; a cut-short turn stays marked
			// started, for its owner to be told at the next start.
			wantQueue := fmt.Sprintf("%020d.json", queued)
			if !finish {
				wantQueue = fmt.Sprintf("%020d.run %020d.json", queued-1, queued)
			}
			if got := strings.Join(names, " "); got != wantQueue {
				t.Errorf("queue holds %q; want %q", got, wantQueue)
			}
			if err := d.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := a.Close(); err != nil {
				t.Errorf("closing the store: %v", err)
			}
			if strings.Contains(logs.String(), drainBotToken) {
				t.Error("the bot token reached the log")
			}
		})
	}
}

// TestStoppingDaemonRefusesRequests: a request that reaches a stopping
// daemon on an open connection is refused with 503, not started.
func TestStoppingDaemonRefusesRequests(t *testing.T) {
	t.Parallel()
	f := newFlight()
	ran := false
	h := admit(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }), f, context.Background())
	<-f.close()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/chat", nil))
	if rec.Code != http.StatusServiceUnavailable || ran || rec.Header().Get("Connection") != "close" {
		t.Errorf("status %d, ran %v, headers %v", rec.Code, ran, rec.Header())
	}
}
