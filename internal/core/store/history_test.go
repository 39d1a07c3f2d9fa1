package store

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/shelldon/shelldon/internal/contracts"
)

func TestHistoryOversizedNewestTurn(t *testing.T) {
	t.Parallel()
	chatty := []contracts.Message{
		user("hello world"),
		assistant("let me look", call("c1", strings.Repeat("a", 50))),
		results(result("c1", strings.Repeat("b", 100))),
		assistant("final answer"),
	}
	for _, tc := range []struct {
		name   string
		turn   []contracts.Message
		budget int
		want   []contracts.Message
	}{
		{"user and last text", chatty, 30, []contracts.Message{user("hello world"), assistant("final answer")}},
		{"both cut", chatty, 10, []contracts.Message{user("hell…"), assistant("fina…")}},
		{"long reply cut", []contracts.Message{user("hi"), assistant(strings.Repeat("z", 40))}, 12,
			[]contracts.Message{user("hi"), assistant(strings.Repeat("z", 9) + "…")}},
		{"unicode cut on runes", []contracts.Message{user("héllo wörld ☃☃☃"), assistant("", call("c", "x")), results(result("c", strings.Repeat("é", 99))), assistant("ünïcödé")}, 12,
			[]contracts.Message{user("héllo…"), assistant("ünïcö…")}},
		{"text before the tool call, no final text", []contracts.Message{user("go"), assistant("thinking", call("c1", "{}")), results(result("c1", strings.Repeat("r", 99)))}, 40,
			[]contracts.Message{user("go"), assistant("thinking")}},
		{"no assistant text at all", []contracts.Message{user("do it now"), assistant("", call("c1", strings.Repeat("a", 99)))}, 3,
			[]contracts.Message{user("do…")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			addTurn(t, s, "c", StatusOK, user("old"), assistant("old"))
			addTurn(t, s, "c", StatusOK, tc.turn...)
			got, err := s.History(t.Context(), "c", tc.budget)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			n := 0
			for _, m := range got {
				n += chars(m)
				if len(m.ToolCalls) > 0 || len(m.ToolResults) > 0 {
					t.Errorf("trimmed history holds tool traffic: %+v", m)
				}
				if !utf8.ValidString(m.Text) {
					t.Errorf("cut produced invalid UTF-8: %q", m.Text)
				}
			}
			if n > tc.budget {
				t.Errorf("trimmed history is %d chars, budget %d", n, tc.budget)
			}
		})
	}
}

func TestHistoryRepairsOrphans(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	twoResults := []contracts.Message{user("q"), assistant("", call("c1", "{}"), call("c2", "{}")),
		results(result("c1", "one")), results(result("c2", "two")), assistant("ok")}
	noIDs := []contracts.Message{user("q"), assistant("", call("", "{}")), results(result("", "r")), assistant("ok")}
	for i, tc := range []struct {
		name string
		turn []contracts.Message
		want []contracts.Message
	}{
		{"cancelled with one call unanswered",
			[]contracts.Message{user("q"), assistant("", call("c1", "{}"), call("c2", "{}")), results(result("c1", "one"))},
			[]contracts.Message{user("q"), assistant("", call("c1", "{}")), results(result("c1", "one"))}},
		{"the only call unanswered",
			[]contracts.Message{user("q"), assistant("", call("c1", "{}"))},
			[]contracts.Message{user("q")}},
		{"unanswered call keeps its text",
			[]contracts.Message{user("q"), assistant("let me see", call("c1", "{}")), results(result("c9", "stray"))},
			[]contracts.Message{user("q"), assistant("let me see")}},
		{"result with no call",
			[]contracts.Message{user("q"), results(result("x", "stray")), assistant("hi")},
			[]contracts.Message{user("q"), assistant("hi")}},
		{"results in two tool messages stay as stored", twoResults, twoResults},
		{"calls without ids pair up", noIDs, noIDs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			chat := fmt.Sprint("chat", i)
			addTurn(t, s, chat, StatusCancelled, tc.turn...)
			got, err := s.History(t.Context(), chat, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestHistoryCacheExact: History, which keeps the turns it picked decoded
// for the next call (historyCache), returns what a handle holding nothing
// reads from the database, whatever happens between calls: new turns in
// many chats (more than it keeps), from this handle and from another (a
// second process), a turn begun early that gets its messages after later
// turns, and budgets that change.
func TestHistoryCacheExact(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shelldon.db")
	s, other := openAt(t, path), openAt(t, path)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(15, 16))
	text := func() string { return strings.Repeat("word ", 1+rng.IntN(400)) }
	msgs := func() []contracts.Message {
		out := []contracts.Message{user(text())}
		if rng.IntN(3) == 0 {
			id := fmt.Sprintf("c%d", rng.IntN(1000))
			out = append(out, assistant("", call(id, `{"path":"a"}`)), results(result(id, text())))
		}
		return append(out, assistant(text()))
	}
	chats := []string{"a", "b", "c", "d", "e", "f"}
	type open struct {
		chat string
		id   int64
	}
	var running []open
	fresh := func(chat string, budget int) []contracts.Message {
		other.history.forget()
		h, err := other.History(ctx, chat, budget)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	hits := 0
	for step := range 400 {
		chat := chats[rng.IntN(len(chats))]
		switch op := rng.IntN(12); {
		case op < 4:
			w := s
			if op == 0 {
				w = other
			}
			addTurn(t, w, chat, "ok", msgs()...)
		case op == 4 || op == 10:
			id, err := s.BeginTurn(ctx, chat, "later", t0)
			if err != nil {
				t.Fatal(err)
			}
			running = append(running, open{chat, id})
		case op == 6:
			// A resumed turn: the decided exchange is recorded first, its
			// own messages come when it finishes (op 5), and between the
			// two the turn is in the history and held.
			a := Approval{ID: NewApprovalID(), Chat: chat, Tool: "run_shell", ArgsHash: "h", CreatedAt: t0,
				ExpiresAt: t0.Add(time.Hour), Pending: contracts.Pending{Messages: msgs()}}
			if err := s.CreateApproval(ctx, a); err != nil {
				t.Fatal(err)
			}
			if _, err := s.DecideAudited(ctx, a.ID, true, "owner", t0, &AuditEntry{At: t0, Chat: chat, Kind: "approval_approved"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Claim(ctx, a.ID, ApprovalApproved, ApprovalRunning, ""); err != nil {
				t.Fatal(err)
			}
			id, err := s.BeginTurn(ctx, chat, "resumed", t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.RecordExchange(ctx, id, a.Pending.Messages, ApprovalClose{ID: a.ID, Outcome: "executed ok"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.History(ctx, chat, 24000); err != nil {
				t.Fatal(err)
			}
			running = append(running, open{chat, id})
		case op == 5 && len(running) > 0:
			i := rng.IntN(len(running))
			r := running[i]
			running = slices.Delete(running, i, i+1)
			if err := s.FinishTurn(ctx, r.id, TurnEnd{Status: "ok", At: t0, Messages: msgs()}); err != nil {
				t.Fatal(err)
			}
		default:
			budget := []int{300, 5000, 24000}[rng.IntN(3)]
			before := heldTurns(s, chat)
			got, err := s.History(ctx, chat, budget)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fresh(chat, budget), got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("step %d, chat %s, budget %d: History differs from the database (-db +got):\n%s", step, chat, budget, diff)
			}
			if before > 0 {
				hits++
			}
		}
		if n := len(s.history.chats); n > historyChats {
			t.Fatalf("step %d: holds %d chats", step, n)
		}
	}
	if hits < 50 {
		t.Errorf("only %d History calls found turns held: the test does not exercise the cache", hits)
	}
}

// heldTurns is how many turns s holds decoded for chat.
func heldTurns(s *Store, chat string) int {
	s.history.mu.Lock()
	defer s.history.mu.Unlock()
	return len(s.history.chats[chat])
}
