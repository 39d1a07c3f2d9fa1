package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// scripted is a fake model: each Complete returns the next step's reply,
// after the step's delay. It records every request.
type scripted struct {
	mu    sync.Mutex
	steps []step
	reqs  []contracts.Request
}

type step struct {
	text  string
	calls []contracts.ToolCall
	delay time.Duration
	err   error
}

func (s *scripted) Complete(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	var st step
	if len(s.steps) > 0 {
		st, s.steps = s.steps[0], s.steps[1:]
	} else {
		st = step{text: "done"}
	}
	s.mu.Unlock()
	if st.delay > 0 {
		select {
		case <-time.After(st.delay):
		case <-ctx.Done():
			return contracts.Completion{}, ctx.Err()
		}
	}
	if st.err != nil {
		return contracts.Completion{}, st.err
	}
	return contracts.Completion{
		Message: contracts.Message{Role: contracts.RoleAssistant, Text: st.text, ToolCalls: st.calls},
		Usage:   contracts.Usage{InputTokens: 10, OutputTokens: 2},
	}, nil
}

func call(id, name, args string) contracts.ToolCall {
	return contracts.ToolCall{ID: id, Name: name, Arguments: args}
}

type echoIn struct {
	Text string `json:"text"`
}

func testRegistry(t *testing.T) *Registry {
	t.Helper()
	reg := NewRegistry()
	echo, err := NewTool("echo", "echo text", contracts.TierFree, func(_ context.Context, in echoIn) (string, error) {
		return "echo:" + in.Text, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	panicky, _ := NewTool("panicky", "panics", contracts.TierFree, func(context.Context, struct{}) (string, error) {
		var m map[string]int
		m["x"] = 1 // nil map write: a real runtime panic
		return "", nil
	})
	slow, _ := NewTool("slow", "ignores its context", contracts.TierFree, func(context.Context, struct{}) (string, error) {
		time.Sleep(time.Hour)
		return "late", nil
	})
	failing, _ := NewTool("failing", "fails", contracts.TierFree, func(context.Context, struct{}) (string, error) {
		return "", errors.New("disk on fire")
	})
	for _, tl := range []*Tool{echo, panicky, slow, failing} {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func runLoop(t *testing.T, model Model, limits contracts.Limits) (contracts.Result, []contracts.ToolEvent) {
	t.Helper()
	var events []contracts.ToolEvent
	l := &Loop{Model: model, Tools: testRegistry(t), OnEvent: func(ev contracts.ToolEvent) { events = append(events, ev) }}
	res := l.Run(context.Background(), contracts.Job{Chat: "c", Input: "hi", Limits: limits})
	return res, events
}

// results returns every tool result of the turn, in order.
func results(res contracts.Result) []contracts.ToolResult {
	var out []contracts.ToolResult
	for _, m := range res.Messages {
		out = append(out, m.ToolResults...)
	}
	return out
}

// wellFormed checks that every tool call of the turn got exactly one result,
// right after it, so no provider rejects the next request.
func wellFormed(t *testing.T, msgs []contracts.Message) {
	t.Helper()
	for i, m := range msgs {
		if len(m.ToolCalls) == 0 {
			continue
		}
		if i+1 >= len(msgs) || msgs[i+1].Role != contracts.RoleTool {
			t.Fatalf("message %d has tool calls but no tool results after it", i)
		}
		got := msgs[i+1].ToolResults
		if len(got) != len(m.ToolCalls) {
			t.Fatalf("message %d: %d calls, %d results", i, len(m.ToolCalls), len(got))
		}
		for j := range got {
			if got[j].CallID != m.ToolCalls[j].ID {
				t.Fatalf("result %d answers %q, want %q", j, got[j].CallID, m.ToolCalls[j].ID)
			}
		}
	}
}

func TestLoopPlainAnswer(t *testing.T) {
	t.Parallel()
	m := &scripted{steps: []step{{text: "hello there"}}}
	res, _ := runLoop(t, m, contracts.Limits{})
	if res.Reply != "hello there" || res.Stopped != "" || res.ToolCalls != 0 {
		t.Fatalf("result = %+v", res)
	}
	if len(res.Messages) != 2 || res.Messages[0].Text != "hi" {
		t.Fatalf("messages = %+v", res.Messages)
	}
	if len(m.reqs[0].Tools) != 4 {
		t.Errorf("tools offered = %d, want 4", len(m.reqs[0].Tools))
	}
	if res.Usage.InputTokens != 10 {
		t.Errorf("usage = %+v", res.Usage)
	}
}

func TestLoopFailuresBecomeResults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		call contracts.ToolCall
		ok   bool
		want string
	}{
		{"good call", call("1", "echo", `{"text":"a"}`), true, "echo:a"},
		{"unknown tool", call("1", "rm_rf", `{}`), false, `unknown tool "rm_rf"`},
		{"arguments not JSON", call("1", "echo", `{"text":`), false, "not valid JSON"},
		{"arguments an array", call("1", "echo", `["a"]`), false, "must be a JSON object, not an array"},
		{"wrong type", call("1", "echo", `{"text":5}`), false, "invalid arguments"},
		{"undeclared property filtered", call("1", "echo", `{"text":"a","path":"/etc/passwd"}`), true, "echo:a"},
		{"empty arguments", call("1", "echo", ``), false, `missing properties: ["text"]`},
		{"tool error", call("1", "failing", `{}`), false, "disk on fire"},
		{"tool panics", call("1", "panicky", `{}`), false, "failed internally (panic"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &scripted{steps: []step{{calls: []contracts.ToolCall{tc.call}}, {text: "ok"}}}
			res, events := runLoop(t, m, contracts.Limits{})
			if res.Reply != "ok" {
				t.Fatalf("reply = %q, the turn did not survive", res.Reply)
			}
			rs := results(res)
			if len(rs) != 1 || rs[0].OK != tc.ok || !strings.Contains(rs[0].Content, tc.want) {
				t.Fatalf("result = %+v, want ok=%v containing %q", rs, tc.ok, tc.want)
			}
			wellFormed(t, res.Messages)
			if len(events) != 2 || events[1].OK != tc.ok {
				t.Errorf("events = %+v", events)
			}
			// The model saw the failure in its next request.
			last := m.reqs[1].Messages[len(m.reqs[1].Messages)-1]
			if last.Role != contracts.RoleTool || last.ToolResults[0].OK != tc.ok {
				t.Errorf("second request ends with %+v", last)
			}
		})
	}
}

func TestLoopToolCeiling(t *testing.T) {
	t.Parallel()
	// The model asks for 4 calls per reply, forever; the ceiling is 6.
	four := func(round int) step {
		var calls []contracts.ToolCall
		for i := range 4 {
			calls = append(calls, call(fmt.Sprintf("r%dc%d", round, i), "echo", `{"text":"x"}`))
		}
		return step{calls: calls}
	}
	m := &scripted{steps: []step{four(0), four(1), {text: "final answer"}}}
	res, events := runLoop(t, m, contracts.Limits{MaxToolCalls: 6})
	if res.ToolCalls != 6 {
		t.Fatalf("executed %d tool calls, want 6", res.ToolCalls)
	}
	if res.Reply != "final answer" {
		t.Fatalf("reply = %q", res.Reply)
	}
	wellFormed(t, res.Messages)
	rs := results(res)
	if len(rs) != 8 {
		t.Fatalf("%d results, want 8 (every call answered)", len(rs))
	}
	for _, r := range rs[6:] {
		if r.OK || !strings.Contains(r.Content, "limit of 6 tool calls") {
			t.Errorf("call past the ceiling: %+v", r)
		}
	}
	if n := len(events); n != 12 {
		t.Errorf("%d events, want 12 (start and end of 6 calls)", n)
	}
	// After the ceiling, the model is asked for an answer without tools.
	lastReq := m.reqs[len(m.reqs)-1]
	if len(lastReq.Tools) != 0 || !strings.Contains(lastReq.System, "used all 6 tool calls") {
		t.Errorf("last request offered %d tools, system %q", len(lastReq.Tools), lastReq.System)
	}
	if len(m.reqs) != 3 {
		t.Errorf("%d model calls, want 3", len(m.reqs))
	}
}

func TestLoopDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Each model call takes 10 s of (fake) time; the budget is 25 s.
		m := &scripted{steps: []step{
			{calls: []contracts.ToolCall{call("1", "echo", `{"text":"first"}`)}, delay: 10 * time.Second},
			{text: "thinking", calls: []contracts.ToolCall{call("2", "echo", `{"text":"second"}`)}, delay: 10 * time.Second},
			{text: "never", delay: 10 * time.Second},
		}}
		start := time.Now()
		res, _ := runLoop(t, m, contracts.Limits{Budget: 25 * time.Second, Reserve: 2 * time.Second})
		if res.Stopped != contracts.StopDeadline {
			t.Fatalf("stopped = %q, reply %q", res.Stopped, res.Reply)
		}
		if took := time.Since(start); took > 25*time.Second {
			t.Errorf("turn took %v, past its 25s budget", took)
		}
		for _, want := range []string{"ran out of time", "thinking", "echo:second"} {
			if !strings.Contains(res.Reply, want) {
				t.Errorf("reply %q lacks %q", res.Reply, want)
			}
		}
		wellFormed(t, res.Messages)
	})
}

func TestLoopSlowToolAbandonedAtDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{steps: []step{{calls: []contracts.ToolCall{call("1", "slow", `{}`)}}}}
		start := time.Now()
		res, _ := runLoop(t, m, contracts.Limits{Budget: 10 * time.Second})
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("turn took %v, past its budget", took)
		}
		rs := results(res)
		if len(rs) != 1 || rs[0].OK || !strings.Contains(rs[0].Content, "did not finish") {
			t.Fatalf("results = %+v", rs)
		}
		if res.Reply != "done" {
			t.Errorf("reply = %q; the model should answer in the reserve", res.Reply)
		}
		time.Sleep(2 * time.Hour) // let the abandoned tool return, so the bubble can end
	})
}

func TestLoopModelErrorAndEmptyReply(t *testing.T) {
	t.Parallel()
	t.Run("model unreachable", func(t *testing.T) {
		m := &scripted{steps: []step{{err: errors.New("all providers failed")}}}
		res, _ := runLoop(t, m, contracts.Limits{})
		if res.Stopped != contracts.StopError || !strings.Contains(res.Reply, "all providers failed") {
			t.Fatalf("result = %+v", res)
		}
	})
	t.Run("one empty reply is retried", func(t *testing.T) {
		m := &scripted{steps: []step{{}, {text: "there"}}}
		res, _ := runLoop(t, m, contracts.Limits{})
		if res.Reply != "there" {
			t.Fatalf("reply = %q", res.Reply)
		}
	})
	t.Run("two empty replies end the turn", func(t *testing.T) {
		m := &scripted{steps: []step{{}, {text: "  "}}}
		res, _ := runLoop(t, m, contracts.Limits{})
		if res.Stopped != contracts.StopError || !strings.Contains(res.Reply, "empty reply") {
			t.Fatalf("result = %+v", res)
		}
	})
	t.Run("missing call ids are filled in", func(t *testing.T) {
		m := &scripted{steps: []step{{calls: []contracts.ToolCall{call("", "echo", `{"text":"a"}`), call("", "echo", `{"text":"b"}`)}}}}
		res, _ := runLoop(t, m, contracts.Limits{})
		wellFormed(t, res.Messages)
		rs := results(res)
		if rs[0].CallID == "" || rs[0].CallID == rs[1].CallID {
			t.Fatalf("ids = %q, %q", rs[0].CallID, rs[1].CallID)
		}
	})
}

func TestLoopCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	m := &scripted{steps: []step{{delay: time.Hour}}}
	l := &Loop{Model: m, Tools: testRegistry(t)}
	done := make(chan contracts.Result)
	go func() { done <- l.Run(ctx, contracts.Job{Input: "hi"}) }()
	cancel()
	res := <-done
	if res.Stopped != contracts.StopCancelled {
		t.Fatalf("stopped = %q", res.Stopped)
	}
}

func TestPrepareArgumentsRoundTrip(t *testing.T) {
	t.Parallel()
	reg := testRegistry(t)
	tool, _ := reg.Get("echo")
	got, err := PrepareArguments(tool, ` {"text":"ü\u202e","extra":{"deep":1}} `)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	json.Unmarshal(got, &v)
	if len(v) != 1 || v["text"] != "ü\u202e" {
		t.Fatalf("prepared = %s", got)
	}
}

func FuzzPrepareArguments(f *testing.F) {
	for _, s := range []string{`{}`, `{"text":"x"}`, `[`, `null`, `{"text":{"a":[1,2]}}`, "\x00"} {
		f.Add(s)
	}
	reg := NewRegistry()
	tool, _ := NewTool("echo", "", contracts.TierFree, func(_ context.Context, in echoIn) (string, error) { return in.Text, nil })
	if err := reg.Add(tool); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := PrepareArguments(tool, raw)
		if err != nil {
			return
		}
		var v map[string]any
		if json.Unmarshal(out, &v) != nil {
			t.Fatalf("prepared arguments are not a JSON object: %s", out)
		}
		for k := range v {
			if k != "text" {
				t.Fatalf("undeclared property %q survived", k)
			}
		}
	})
}

// TestLoopNamesHeldSpecs: the specs the daemon holds (Job.Specs) go in the
// model request by digest, the others whole; the history the daemon holds
// is named by its length (Job.HistoryLen), and the request carries only
// this turn's messages.
func TestLoopNamesHeldSpecs(t *testing.T) {
	t.Parallel()
	reg := testRegistry(t)
	specs := reg.Specs()
	held := contracts.SpecDigest(specs[1])
	m := &scripted{steps: []step{{text: "ok"}}}
	l := &Loop{Model: m, Tools: reg}
	l.Run(context.Background(), contracts.Job{Input: "hi", HistoryLen: 7, Specs: []string{held, "another-digest"}})
	req := m.reqs[0]
	if req.History != 7 || len(req.Messages) != 1 || req.Messages[0].Text != "hi" {
		t.Errorf("request names %d messages of history and carries %+v", req.History, req.Messages)
	}
	for i, got := range req.Tools {
		want := specs[i]
		if i == 1 {
			want = contracts.ToolSpec{Name: specs[1].Name, Digest: held}
		}
		if got.Name != want.Name || got.Description != want.Description || string(got.Parameters) != string(want.Parameters) || got.Digest != want.Digest {
			t.Errorf("tool %d: %+v, want %+v", i, got, want)
		}
	}
}
