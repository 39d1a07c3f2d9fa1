package store

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

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
