package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
)

func user(text string) contracts.Message {
	return contracts.Message{Role: contracts.RoleUser, Text: text}
}

func assistant(text string, calls ...contracts.ToolCall) contracts.Message {
	return contracts.Message{Role: contracts.RoleAssistant, Text: text, ToolCalls: calls}
}

func call(id, args string) contracts.ToolCall {
	return contracts.ToolCall{ID: id, Name: "read_file", Arguments: args}
}

func results(rs ...contracts.ToolResult) contracts.Message {
	return contracts.Message{Role: contracts.RoleTool, ToolResults: rs}
}

func result(id, content string) contracts.ToolResult {
	return contracts.ToolResult{CallID: id, Name: "read_file", OK: true, Content: content}
}

// addTurn stores one finished turn and returns its id.
func addTurn(t *testing.T, s *Store, chat, status string, msgs ...contracts.Message) int64 {
	t.Helper()
	ctx := t.Context()
	id, err := s.BeginTurn(ctx, chat, msgs[0].Text, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishTurn(ctx, id, TurnEnd{Status: status, At: t0.Add(time.Second), Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestFinishTurn(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	id, err := s.BeginTurn(ctx, "chat", "what time is it?", t0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Turn(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := TurnInfo{ID: id, Chat: "chat", Input: "what time is it?", Status: StatusRunning, StartedAt: t0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("running turn (-want +got):\n%s", diff)
	}

	end := TurnEnd{
		Status: StatusOK, Reply: "noon", Provider: "anthropic", Model: "m1", ToolCalls: 1,
		Usage: contracts.Usage{InputTokens: 100, OutputTokens: 20}, At: t0.Add(3 * time.Second),
		Messages: []contracts.Message{
			user("what time is it?"),
			assistant("", contracts.ToolCall{ID: "c1", Name: "get_time", Arguments: "{}"}),
			results(contracts.ToolResult{CallID: "c1", Name: "get_time", OK: true, Content: "12:00"}),
			assistant("noon"),
		},
	}
	if err := s.FinishTurn(ctx, id, end); err != nil {
		t.Fatal(err)
	}
	got, err = s.Turn(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want = TurnInfo{ID: id, Chat: "chat", Input: "what time is it?", Status: StatusOK, Reply: "noon",
		Usage: end.Usage, Provider: "anthropic", Model: "m1", ToolCalls: 1, Messages: 4,
		StartedAt: t0, EndedAt: end.At}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("finished turn (-want +got):\n%s", diff)
	}
	hist, err := s.History(ctx, "chat", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(end.Messages, hist); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}

	if err := s.FinishTurn(ctx, id, end); !errors.Is(err, ErrTurnFinished) {
		t.Errorf("second FinishTurn = %v, want ErrTurnFinished", err)
	}
	if err := s.FinishTurn(ctx, id+100, end); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishTurn(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.Turn(ctx, id+100); !errors.Is(err, ErrNotFound) {
		t.Errorf("Turn(unknown) = %v, want ErrNotFound", err)
	}
	if hist, _ := s.History(ctx, "chat", 1000); len(hist) != 4 {
		t.Errorf("history after the refused second finish: %d messages, want 4", len(hist))
	}
}

func TestFinishTurnRejects(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	id, err := s.BeginTurn(ctx, "c", "hi", t0)
	if err != nil {
		t.Fatal(err)
	}
	for name, end := range map[string]TurnEnd{
		"running status":     {Status: StatusRunning, At: t0},
		"unknown status":     {Status: "great", At: t0},
		"no time":            {Status: StatusOK},
		"starts with a tool": {Status: StatusOK, At: t0, Messages: []contracts.Message{results(result("x", "y"))}},
	} {
		if err := s.FinishTurn(ctx, id, end); err == nil {
			t.Errorf("%s: FinishTurn succeeded", name)
		}
	}
	if _, err := s.BeginTurn(ctx, "", "hi", t0); err == nil {
		t.Error("BeginTurn with no chat succeeded")
	}
	if _, err := s.BeginTurn(ctx, "c", "hi", time.Time{}); err == nil {
		t.Error("BeginTurn with no time succeeded")
	}
}

// A FinishTurn that fails part-way leaves neither the turn's new status nor
// any of its messages behind, and can be retried.
func TestFinishTurnAtomic(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		msgs []contracts.Message
	}{
		// The turn row is updated, then the second message breaks a CHECK.
		{"bad message after the update", context.Background(),
			[]contracts.Message{user("hi"), assistant("one"), {Role: "system", Text: "bogus"}}},
		{"cancelled context", cancelled, []contracts.Message{user("hi"), assistant("hello")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			id, err := s.BeginTurn(t.Context(), "c", "hi", t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.FinishTurn(tc.ctx, id, TurnEnd{Status: StatusOK, Reply: "x", At: t0, Messages: tc.msgs}); err == nil {
				t.Fatal("FinishTurn succeeded")
			}
			info, err := s.Turn(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if info.Status != StatusRunning || info.Reply != "" || !info.EndedAt.IsZero() {
				t.Errorf("turn after failed finish: %+v, want untouched", info)
			}
			var n int
			if err := s.db.QueryRow(`SELECT COUNT(*) FROM messages`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d messages left behind", n)
			}
			ok := TurnEnd{Status: StatusOK, At: t0, Messages: []contracts.Message{user("hi"), assistant("hello")}}
			if err := s.FinishTurn(t.Context(), id, ok); err != nil {
				t.Errorf("retry: %v", err)
			}
		})
	}
}

func TestHistory(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	// Sizes in chars: t1 20, t2 19, t3 5.
	t1 := []contracts.Message{user("1111111111"), assistant("r1r1r1r1r1")}
	t2 := []contracts.Message{user("22222"), assistant("", call("c1", "{}")), results(result("c1", "xxxxxxxx")), assistant("done")}
	t3 := []contracts.Message{user("333"), assistant("ok")}
	addTurn(t, s, "a", StatusOK, t1...)
	addTurn(t, s, "b", StatusOK, user("other chat"), assistant("B"))
	addTurn(t, s, "a", StatusOK, t2...)
	if _, err := s.BeginTurn(t.Context(), "a", "still running", t0); err != nil {
		t.Fatal(err)
	}
	addTurn(t, s, "a", StatusOK, t3...)
	addTurn(t, s, "b", StatusOK, user("other chat again"), assistant("B"))

	cat := func(turns ...[]contracts.Message) []contracts.Message {
		var out []contracts.Message
		for _, t := range turns {
			out = append(out, t...)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		chat   string
		budget int
		want   []contracts.Message
	}{
		{"newest turn exactly", "a", 5, t3},
		{"two turns exactly", "a", 24, cat(t2, t3)},
		{"one short of two turns", "a", 23, t3},
		{"all turns exactly", "a", 44, cat(t1, t2, t3)},
		{"ample budget, no other chat", "a", 1 << 20, cat(t1, t2, t3)},
		{"zero budget", "a", 0, nil},
		{"negative budget", "a", -1, nil},
		{"unknown chat", "nobody", 100, nil},
		{"newest turn over budget is cut", "a", 4, []contracts.Message{user("3…"), assistant("ok")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.History(t.Context(), tc.chat, tc.budget)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("History(%q, %d) (-want +got):\n%s", tc.chat, tc.budget, diff)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	for i, u := range []contracts.Usage{{InputTokens: 10, OutputTokens: 1}, {InputTokens: 20, OutputTokens: 2}, {InputTokens: 40, OutputTokens: 4}} {
		id, err := s.BeginTurn(ctx, "c", "hi", t0)
		if err != nil {
			t.Fatal(err)
		}
		end := TurnEnd{Status: StatusOK, Usage: u, At: t0.Add(time.Duration(i) * time.Hour)}
		if err := s.FinishTurn(ctx, id, end); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.BeginTurn(ctx, "c", "running", t0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		since time.Time
		want  contracts.Usage
	}{
		{time.Time{}.Add(time.Hour), contracts.Usage{InputTokens: 70, OutputTokens: 7}},
		{t0, contracts.Usage{InputTokens: 70, OutputTokens: 7}},
		{t0.Add(time.Minute), contracts.Usage{InputTokens: 60, OutputTokens: 6}},
		{t0.Add(2 * time.Hour).In(time.FixedZone("x", 3600)), contracts.Usage{InputTokens: 40, OutputTokens: 4}},
		{t0.Add(3 * time.Hour), contracts.Usage{}},
	} {
		got, err := s.Usage(ctx, tc.since)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Usage(%v) = %+v, want %+v", tc.since, got, tc.want)
		}
	}
}

func TestRecoverRunning(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db")
	crashed := openAt(t, path)
	var stale []int64
	for range 2 {
		id, err := crashed.BeginTurn(ctx, "c", "hi", t0)
		if err != nil {
			t.Fatal(err)
		}
		stale = append(stale, id)
	}
	done := addTurn(t, crashed, "c", StatusOK, user("hi"), assistant("hello"))
	// A turn another live process is running: our parent.
	live, err := crashed.BeginTurn(ctx, "c", "other process", t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.db.Exec(`UPDATE turns SET owner = 'other', pid = ? WHERE id = ?`, os.Getppid(), live); err != nil {
		t.Fatal(err)
	}
	if err := crashed.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path)
	mine, err := s.BeginTurn(ctx, "c", "mine", t0)
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	n, err := s.RecoverRunning(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(stale) {
		t.Errorf("RecoverRunning = %d, want %d", n, len(stale))
	}
	for _, id := range stale {
		info, err := s.Turn(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != StatusError || info.Error != Interrupted || !info.EndedAt.Equal(at) {
			t.Errorf("stale turn %d: %+v, want status error, error interrupted, ended at %v", id, info, at)
		}
		if err := s.FinishTurn(ctx, id, TurnEnd{Status: StatusOK, At: at}); !errors.Is(err, ErrTurnFinished) {
			t.Errorf("finishing a recovered turn = %v, want ErrTurnFinished", err)
		}
	}
	for id, want := range map[int64]string{done: StatusOK, live: StatusRunning, mine: StatusRunning} {
		if info, err := s.Turn(ctx, id); err != nil || info.Status != want {
			t.Errorf("turn %d: status %q, %v; want %q", id, info.Status, err, want)
		}
	}
	if n, err := s.RecoverRunning(ctx, at); err != nil || n != 0 {
		t.Errorf("second RecoverRunning = %d, %v; want 0", n, err)
	}
}
