package telegram

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// restartBot is a bot whose offset file and queue live in dir.
func restartBot(t *testing.T, api *fakeAPI, fc *fakeCore, dir string) *harness {
	return startBot(t, api, fc, filepath.Join(dir, "telegram_offset"), func(o *Options) {
		o.QueueDir = filepath.Join(dir, "telegram_queue")
	})
}

// slowFirst makes the turn of "slow" wait for release (or its context);
// every other message is echoed.
func slowFirst(fc *fakeCore, release <-chan struct{}) {
	fc.set(func(c *fakeCore) {
		c.reply = func(ctx context.Context, _, text string) (core.Outcome, error) {
			if text == "slow" {
				select {
				case <-release:
				case <-ctx.Done():
					return core.Outcome{}, ctx.Err()
				}
			}
			return core.Outcome{Reply: "echo: " + text}, nil
		}
	})
}

const rerunNote = "restarted while working on your message"

// TestQueuedMessagesSurviveRestart: three messages wait behind a slow
// turn when the bot stops; after a restart each gets its turn once, in
// order. The slow turn itself, when the stop let it finish, is not run
// again; when the stop cut it short (a crash, or a grace that ran out),
// it is taken up again (the core decides whether it runs again: here it
// had done nothing, so it does) and its owner is told so, once.
func TestQueuedMessagesSurviveRestart(t *testing.T) {
	t.Parallel()
	for _, stop := range []string{"shutdown", "grace ends", "crash"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				api, fc := newFakeAPI(), newFakeCore()
				release := make(chan struct{})
				slowFirst(fc, release)
				h := restartBot(t, api, fc, dir)
				api.push(textMsg(owner, owner, "slow"))
				api.waitFor(t, "the slow turn", func() bool { return fc.sendCount() == 1 })
				var last int64
				for _, m := range []string{"m2", "m3", "m4"} {
					last = api.push(textMsg(owner, owner, m))
				}
				api.waitFor(t, "the updates confirmed", func() bool { return api.acked(last) })

				switch stop {
				case "shutdown":
					done := make(chan error, 1)
					go func() { done <- h.bot.Shutdown(context.Background()) }()
					idle()
					select {
					case err := <-done:
						t.Fatalf("Shutdown returned under a running turn: %v", err)
					default:
					}
					if n := len(api.callsOf("getUpdates")); n == 0 {
						t.Fatal("no getUpdates")
					}
					polls := len(api.callsOf("getUpdates"))
					close(release) // the turn finishes within the grace
					if err := <-done; err != nil {
						t.Errorf("Shutdown: %v", err)
					}
					if len(api.sent("echo: slow")) != 1 {
						t.Error("the turn that finished during the shutdown was not delivered")
					}
					if got := fc.sendCalls(); len(got) != 1 || len(api.callsOf("getUpdates")) != polls {
						t.Errorf("a stopping bot started work or received: Send calls %q", got)
					}
				case "grace ends":
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					start := time.Now()
					if err := h.bot.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Shutdown = %v; want the grace's deadline", err)
					}
					if d := time.Since(start); d != 10*time.Second {
						t.Errorf("Shutdown took %v; want the grace, 10s", d)
					}
				case "crash":
					h.stop() // Run's context ends: the turn is cancelled mid-way
				}
				h.stop()
				if stop != "shutdown" {
					close(release) // the rerun is not held up
				}

				restartBot(t, api, fc, dir)
				api.waitFor(t, "the queued messages' replies", func() bool { return len(api.sent("echo: m4")) == 1 })
				idle()
				want := []string{"tg:42|slow", "tg:42|m2", "tg:42|m3", "tg:42|m4"}
				if stop != "shutdown" {
					want = slices.Insert(want, 1, "tg:42|slow")
				}
				if got := fc.sendCalls(); !slices.Equal(got, want) {
					t.Errorf("Send calls = %q; want %q", got, want)
				}
				var replies []string
				for _, c := range api.callsOf("sendMessage") {
					replies = append(replies, c.str("text"))
				}
				wantNote := 0
				if stop != "shutdown" {
					wantNote = 1
				}
				if n := len(api.sent(rerunNote)); n != wantNote {
					t.Errorf("%d notes about the rerun turn; want %d: %q", n, wantNote, replies)
				}
				if n := len(api.sent("echo: slow")); n != 1 {
					t.Errorf("%d replies to the slow message; want 1: %q", n, replies)
				}
				for _, m := range []string{"m2", "m3", "m4"} {
					if n := len(api.sent("echo: " + m)); n != 1 {
						t.Errorf("%d replies to %s: %q", n, m, replies)
					}
				}
				if i, j := slices.IndexFunc(replies, func(s string) bool { return s == "echo: m2" }), slices.IndexFunc(replies, func(s string) bool { return s == "echo: m4" }); i > j {
					t.Errorf("replies out of order: %q", replies)
				}
				if stop != "shutdown" && !strings.Contains(api.sent(rerunNote)[0].str("text"), "“slow”") {
					t.Errorf("the note does not quote the message: %q", api.sent(rerunNote)[0].str("text"))
				}
				if left, _ := os.ReadDir(filepath.Join(dir, "telegram_queue")); len(left) != 0 {
					t.Errorf("the queue is not empty after the work is done: %v", left)
				}
			})
		})
	}
}

// TestPressSurvivesRestart: a press whose decision was under way when the
// bot stopped is decided again at the next start; the decision is taken
// once (the second Decide is refused) and the card says so.
func TestPressSurvivesRestart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		api, fc := newFakeAPI(), newFakeCore()
		a := riskyView()
		blocked := true
		fc.set(func(c *fakeCore) {
			c.pending = append(c.pending, a)
			c.decide = func(ctx context.Context, _ string, _ bool) {
				c.mu.Lock()
				block := blocked
				c.mu.Unlock()
				if block {
					<-ctx.Done() // the resumed turn runs until the bot stops
				}
			}
		})
		h := restartBot(t, api, fc, dir)
		id := api.push(press(owner, owner, 7, "card", "ap:"+a.ID))
		api.waitFor(t, "the decision", func() bool { return len(fc.decideCalls()) == 1 })
		if !api.acked(id) {
			api.waitFor(t, "the press confirmed", func() bool { return api.acked(id) })
		}
		h.stop()
		fc.set(func(*fakeCore) { blocked = false })

		restartBot(t, api, fc, dir)
		api.waitFor(t, "the second decision", func() bool { return len(fc.decideCalls()) == 2 })
		idle()
		if n := fc.executions(a.ID); n != 1 {
			t.Errorf("the request was carried out %d times; want 1", n)
		}
		if len(edits(api, "Already decided")) != 1 {
			t.Error("the card does not say the request was already decided")
		}
		if left, _ := os.ReadDir(filepath.Join(dir, "telegram_queue")); len(left) != 0 {
			t.Errorf("the queue is not empty: %v", left)
		}
	})
}

// TestUnstoredUpdateIsNotConfirmed: an update that cannot be stored is not
// confirmed to Telegram; once the queue can be written again it is fetched
// again and run, once.
func TestUnstoredUpdateIsNotConfirmed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		api, fc := newFakeAPI(), newFakeCore()
		h := restartBot(t, api, fc, dir)
		api.waitFor(t, "polling", func() bool { return len(api.callsOf("getUpdates")) > 0 })
		qdir := filepath.Join(dir, "telegram_queue")
		if err := os.Remove(qdir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(qdir, nil, 0o600); err != nil { // not a directory: nothing can be stored
			t.Fatal(err)
		}
		id := api.push(textMsg(owner, owner, "hello"))
		h.logs.waitFor(t, "the failure logged", func() bool { return strings.Contains(h.logs.String(), "queue update") })
		idle()
		if api.acked(id) || fc.sendCount() != 0 {
			t.Fatal("an update that was not stored was confirmed or run")
		}
		os.Remove(qdir)
		if err := os.Mkdir(qdir, 0o700); err != nil {
			t.Fatal(err)
		}
		api.waitFor(t, "the reply", func() bool { return len(api.sent("echo: hello")) == 1 })
		idle()
		if got := fc.sendCalls(); !slices.Equal(got, []string{"tg:42|hello"}) {
			t.Errorf("Send calls = %q", got)
		}
	})
}

// TestJournalLoad: the journal reads back in update order, with its
// state, and clears what a crash left half-written or unreadable.
func TestJournalLoad(t *testing.T) {
	t.Parallel()
	j := journal{dir: t.TempDir()}
	if err := j.open(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{30, 4, 200} {
		if err := j.add(update{UpdateID: id, Message: &message{Text: "t", Chat: chat{ID: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.start(30); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(j.dir, tmpPrefix+"x"), []byte("{"), 0o600)
	os.WriteFile(j.path(7, queuedExt), []byte("not json"), 0o600)
	os.WriteFile(j.path(8, queuedExt), []byte(`{"update_id":9}`), 0o600)
	var bad []string
	list, err := j.load(func(name string, _ error) { bad = append(bad, name) })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list {
		s := strconv.FormatInt(e.u.UpdateID, 10)
		if e.started {
			s += " started"
		}
		got = append(got, s)
	}
	if want := []string{"4", "30 started", "200"}; !slices.Equal(got, want) {
		t.Errorf("load = %q; want %q", got, want)
	}
	if len(bad) != 2 {
		t.Errorf("unreadable files reported: %q", bad)
	}
	left, _ := os.ReadDir(j.dir)
	if len(left) != 3 {
		t.Errorf("files left: %v", left)
	}
	if !j.has(30) || !j.has(4) || j.has(7) {
		t.Error("has does not match the files")
	}
	if err := j.done(30); err != nil || j.has(30) {
		t.Errorf("done: %v", err)
	}
}
