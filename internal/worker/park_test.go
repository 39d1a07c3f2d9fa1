package worker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

type dangerIn struct {
	Target string `json:"target"`
}

// riskyRegistry adds a RISKY tool that records each run.
func riskyRegistry(t *testing.T, ran *[]string) *Registry {
	t.Helper()
	reg := testRegistry(t)
	danger, err := NewTool("danger", "changes the world", contracts.TierRisky, func(_ context.Context, in dangerIn) (string, error) {
		*ran = append(*ran, in.Target)
		return "did " + in.Target, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	danger.Check = func(_ context.Context, raw json.RawMessage) error {
		var in dangerIn
		json.Unmarshal(raw, &in)
		if in.Target == "forbidden" {
			return errors.New("that target is never allowed")
		}
		return nil
	}
	if err := reg.Add(danger); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestRiskyCallParksTheTurn(t *testing.T) {
	t.Parallel()
	var ran []string
	m := &scripted{steps: []step{{text: "Let me do that.", calls: []contracts.ToolCall{
		call("a", "echo", `{"text":"before"}`),
		call("b", "danger", `{"target":"the world","extra":"dropped"}`),
		call("c", "echo", `{"text":"after"}`),
		call("d", "danger", `{"target":"twice"}`),
	}}}}
	l := &Loop{Model: m, Tools: riskyRegistry(t, &ran)}
	res := l.Run(context.Background(), contracts.Job{Input: "do it"})
	if res.Stopped != contracts.StopApproval || res.Pending == nil {
		t.Fatalf("result = %+v", res)
	}
	if len(ran) != 0 {
		t.Fatalf("a RISKY tool ran without approval: %v", ran)
	}
	p := res.Pending
	if p.Call.ID != "b" || p.Call.Arguments != `{"target":"the world"}` || p.ModelText != "Let me do that." {
		t.Errorf("pending call = %+v", p)
	}
	// The FREE call before it ran; the calls after it are gone from the message.
	last := p.Messages[len(p.Messages)-1]
	if last.Role != contracts.RoleTool || len(last.ToolResults) != 1 || last.ToolResults[0].Content != "echo:before" {
		t.Errorf("last parked message = %+v", last)
	}
	asst := p.Messages[len(p.Messages)-2]
	if len(asst.ToolCalls) != 2 || asst.ToolCalls[1].ID != "b" {
		t.Errorf("assistant calls kept = %+v", asst.ToolCalls)
	}

	hash, _ := contracts.ArgsHash(p.Call.Name, p.Call.Arguments, p.Binding)
	resume := func(approved bool, hash string) (contracts.Result, *scripted) {
		m2 := &scripted{steps: []step{{text: "finished"}}}
		l2 := &Loop{Model: m2, Tools: riskyRegistry(t, &ran)}
		r := l2.Run(context.Background(), contracts.Job{Resume: &contracts.Resume{Messages: p.Messages, Call: p.Call, Approved: approved, ArgsHash: hash}})
		return r, m2
	}

	t.Run("approved", func(t *testing.T) {
		ran = nil
		r, m2 := resume(true, hash)
		if r.Reply != "finished" || len(ran) != 1 || ran[0] != "the world" {
			t.Fatalf("reply %q, ran %v", r.Reply, ran)
		}
		wellFormed(t, r.Messages)
		sent := m2.reqs[0].Messages
		results := sent[len(sent)-1].ToolResults
		if len(results) != 2 || results[1].Content != "did the world" || !results[1].OK {
			t.Errorf("the model got %+v", results)
		}
	})
	t.Run("denied", func(t *testing.T) {
		ran = nil
		r, m2 := resume(false, hash)
		if len(ran) != 0 || r.Reply != "finished" {
			t.Fatalf("ran %v, reply %q", ran, r.Reply)
		}
		sent := m2.reqs[0].Messages
		res := sent[len(sent)-1].ToolResults[1]
		if res.OK || res.Content != contracts.DeniedByOwner {
			t.Errorf("denied result = %+v", res)
		}
	})
	t.Run("hash mismatch", func(t *testing.T) {
		ran = nil
		r, _ := resume(true, strings.Repeat("0", 64))
		if len(ran) != 0 {
			t.Fatalf("a call ran against another call's approval: %v", ran)
		}
		wellFormed(t, r.Messages)
	})
	t.Run("arguments changed after approval", func(t *testing.T) {
		ran = nil
		changed := p.Call
		changed.Arguments = `{"target":"something else"}`
		m2 := &scripted{}
		l2 := &Loop{Model: m2, Tools: riskyRegistry(t, &ran)}
		l2.Run(context.Background(), contracts.Job{Resume: &contracts.Resume{Messages: p.Messages, Call: changed, Approved: true, ArgsHash: hash}})
		if len(ran) != 0 {
			t.Fatalf("a changed call ran: %v", ran)
		}
	})
}

func TestRiskyCallRefusedBeforeAsking(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ args, guard string }{
		"not JSON":       {`{"target":`, "the argument check (the tool's schema)"},
		"wrong type":     {`{"target":5}`, "the argument check (the tool's schema)"},
		"tool's check":   {`{"target":"forbidden"}`, "the danger guard"},
		"missing target": {`{}`, "the argument check (the tool's schema)"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var ran []string
			var events []contracts.ToolEvent
			m := &scripted{steps: []step{{calls: []contracts.ToolCall{call("x", "danger", tc.args)}}, {text: "ok"}}}
			reg := riskyRegistry(t, &ran)
			if d, ok := reg.Get("danger"); ok {
				d.Guard = "the danger guard"
			}
			l := &Loop{Model: m, Tools: reg, OnEvent: func(ev contracts.ToolEvent) { events = append(events, ev) }}
			res := l.Run(context.Background(), contracts.Job{Input: "go"})
			if res.Pending != nil || res.Reply != "ok" || len(ran) != 0 {
				t.Fatalf("result %+v ran %v", res, ran)
			}
			if rs := results(res); len(rs) != 1 || rs[0].OK {
				t.Errorf("results = %+v", rs)
			}
			// The refusal is an end event naming the guard and the reason,
			// for the audit trail and the transports.
			if len(events) != 1 || events[0].Phase != contracts.PhaseEnd || events[0].Guard != tc.guard ||
				events[0].OK || events[0].Tool != "danger" || !strings.HasPrefix(events[0].Summary, "refused by "+tc.guard+": ") {
				t.Errorf("events = %+v", events)
			}
		})
	}
}
