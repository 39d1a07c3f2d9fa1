package worker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// modelCall is a Model made of a function.
type modelCall func(ctx context.Context, req contracts.Request) (contracts.Completion, error)

func (m modelCall) Complete(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
	return m(ctx, req)
}

// TestStoppedTurnPutsNoWordsInTheModelsMouth: a turn stopped before the
// model answered (cancelled, out of time, an error) keeps in its messages
// what happened (the owner's message, the model's call with its own words,
// the result) and ends with a note labelled as shelldon's, never with an
// assistant message the model did not write; the owner is still told why
// in the reply.
func TestStoppedTurnPutsNoWordsInTheModelsMouth(t *testing.T) {
	t.Parallel()
	first := contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant, Text: "thinking",
		ToolCalls: []contracts.ToolCall{call("1", "echo", `{"text":"ran"}`)}}}
	tests := []struct {
		name      string
		second    func(ctx context.Context, cancel func()) (contracts.Completion, error)
		stopped   string
		reply     string
		note      string
		synctest  bool
		budgetFor time.Duration
	}{
		{"cancelled", func(ctx context.Context, cancel func()) (contracts.Completion, error) {
			cancel() // the owner presses Ctrl-C while the model thinks
			<-ctx.Done()
			return contracts.Completion{}, ctx.Err()
		}, contracts.StopCancelled, "Turn cancelled.", "[shelldon: the owner cancelled this request before it was answered.]", false, 0},
		{"out of time", func(ctx context.Context, _ func()) (contracts.Completion, error) {
			<-ctx.Done()
			return contracts.Completion{}, ctx.Err()
		}, contracts.StopDeadline, "I ran out of time", "[shelldon: this request ran out of time before it was answered.]", true, 25 * time.Second},
		{"model error", func(context.Context, func()) (contracts.Completion, error) {
			return contracts.Completion{}, errors.New("all providers failed")
		}, contracts.StopError, "all providers failed", "[shelldon: this request stopped on an error before it was answered.]", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				calls := 0
				model := modelCall(func(mctx context.Context, _ contracts.Request) (contracts.Completion, error) {
					if calls++; calls == 1 {
						return first, nil
					}
					return tt.second(mctx, cancel)
				})
				l := &Loop{Model: model, Tools: testRegistry(t)}
				res := l.Run(ctx, contracts.Job{Input: "do it", Limits: contracts.Limits{Budget: tt.budgetFor}})
				if res.Stopped != tt.stopped || !strings.Contains(res.Reply, tt.reply) {
					t.Fatalf("stopped %q, reply %q; want %q and a reply saying %q", res.Stopped, res.Reply, tt.stopped, tt.reply)
				}
				want := []contracts.Message{
					{Role: contracts.RoleUser, Text: "do it"},
					{Role: contracts.RoleAssistant, Text: "thinking", ToolCalls: []contracts.ToolCall{call("1", "echo", `{"text":"ran"}`)}},
					{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{{CallID: "1", Name: "echo", OK: true, Content: "echo:ran"}}},
					{Role: contracts.RoleUser, Text: tt.note},
				}
				if diff := cmp.Diff(want, res.Messages); diff != "" {
					t.Errorf("the turn's messages (-want +got):\n%s", diff)
				}
				wellFormed(t, res.Messages)
			}
			if tt.synctest {
				synctest.Test(t, run)
			} else {
				run(t)
			}
		})
	}
}

// TestToolFailureSaysErrorOnce: a failed call reaches the model as one
// "error: <message>", also when the tool's own message starts with
// "error:", and so does a RISKY call its own check refuses.
func TestToolFailureSaysErrorOnce(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{"disk on fire", "error: disk on fire", "Error:  ERROR: disk on fire"} {
		t.Run(msg, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry()
			failing, err := NewTool("failing", "fails", contracts.TierFree, func(context.Context, struct{}) (string, error) {
				return "", errors.New(msg)
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := reg.Add(failing); err != nil {
				t.Fatal(err)
			}
			m := &scripted{steps: []step{{calls: []contracts.ToolCall{call("1", "failing", `{}`)}}, {text: "ok"}}}
			var events []contracts.ToolEvent
			l := &Loop{Model: m, Tools: reg, OnEvent: func(ev contracts.ToolEvent) { events = append(events, ev) }}
			res := l.Run(context.Background(), contracts.Job{Input: "hi"})
			rs := results(res)
			if len(rs) != 1 || rs[0].OK || rs[0].Content != "error: disk on fire" {
				t.Errorf("results %+v, want one failure saying %q", rs, "error: disk on fire")
			}
			if len(events) != 2 || events[1].Summary != "error: disk on fire" {
				t.Errorf("events %+v", events)
			}
		})
	}
	t.Run("a refused RISKY call", func(t *testing.T) {
		t.Parallel()
		var ran []string
		reg := riskyRegistry(t, &ran)
		danger, _ := reg.Get("danger")
		danger.Check = func(context.Context, json.RawMessage) error { return errors.New("error: that target is never allowed") }
		m := &scripted{steps: []step{{calls: []contracts.ToolCall{call("1", "danger", `{"target":"x"}`)}}, {text: "ok"}}}
		res := (&Loop{Model: m, Tools: reg}).Run(context.Background(), contracts.Job{Input: "hi"})
		if rs := results(res); len(rs) != 1 || rs[0].Content != "error: that target is never allowed" {
			t.Errorf("results %+v", rs)
		}
	})
}

// TestModelReasonArrivesNearTheDeadline: the daemon's answer to a model
// call that comes just before the turn's deadline (the broker stopped
// waiting on a silent provider a margin before it, and says which) is
// still read, so the owner learns which provider sent nothing and from
// where, not only that the turn ran out of time.
func TestModelReasonArrivesNearTheDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const reason = "broker: every provider failed: local (1 attempt): sent no answer within 24.9s (127.0.0.1:9, waiting for the response headers)"
		m := &scripted{steps: []step{{delay: 24900 * time.Millisecond, err: &wire.RemoteError{Method: wire.MethodComplete, Message: reason}}}}
		start := time.Now()
		res, _ := runLoop(t, m, contracts.Limits{Budget: 25 * time.Second, Reserve: 2 * time.Second})
		if !strings.Contains(res.Reply, reason) {
			t.Errorf("reply %q does not give the daemon's reason", res.Reply)
		}
		if res.Stopped != contracts.StopError {
			t.Errorf("stopped %q", res.Stopped)
		}
		if took := time.Since(start); took > 25*time.Second {
			t.Errorf("the turn took %v, past its budget", took)
		}
	})
}
