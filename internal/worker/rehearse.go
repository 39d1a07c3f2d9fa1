package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// Rehearse does the work of a turn that does not depend on its job, with
// made-up data, while a worker started ahead of need (agent.warm_worker)
// waits for its job. A worker is a fresh process for each turn, so the
// turn would otherwise pay for every first time: the binary's code paged
// in, encoding/json's per-type encoders and decoders built, the time zone
// loaded, a schema derived by reflection. A rehearsal builds the tools
// against dir (none is called), renders a system prompt, and encodes and
// decodes a job, a model request with the tools' specs, an answer with a
// tool call, the call's arguments and event, and a result, all to and from
// memory.
//
// It holds no turn data and no credential: everything it touches is made
// up here, its Daemon refuses every request and nothing is written to the
// pipe. arrived reports whether the job is there: it is asked before each
// step, and the rehearsal stops as soon as it says yes, so a job that came
// during it waits for one step at most, and a worker whose job is there
// when it starts (a worker started for the turn at hand) does none.
func Rehearse(build Builder, redact func(string) string, dir string, arrived func() bool) {
	r := &rehearsal{build: build, redact: redact, dir: dir, out: wire.NewConn(bytes.NewReader(nil), io.Discard, 0)}
	defer r.release()
	for _, step := range []func() error{r.decodeJob, r.buildTools, r.encodeRequest, r.decodeAnswer, r.checkCall, r.encodeResult} {
		if arrived() {
			return
		}
		if err := step(); err != nil {
			return // a rehearsal that fails leaves the turn to do it for real
		}
	}
}

type rehearsal struct {
	build   Builder
	redact  func(string) string
	dir     string
	out     *wire.Conn // where the rehearsal's frames go: nowhere
	job     contracts.Job
	reg     *Registry
	done    func()
	comp    contracts.Completion
	results []contracts.ToolResult
}

// roundTrip encodes v as a frame of typ, as the daemon would send it, and
// decodes it into into as the worker reads it.
func roundTrip(typ string, v, into any) error {
	var buf bytes.Buffer
	if err := wire.NewConn(bytes.NewReader(nil), &buf, 0).Send(typ, v); err != nil {
		return err
	}
	f, err := wire.ReadFrame(&buf, wire.MaxFrame)
	if err != nil {
		return err
	}
	return f.Decode(into)
}

// decodeJob decodes a made-up job.
func (r *rehearsal) decodeJob() error {
	made := contracts.Job{Chat: "rehearsal", Turn: 1, Input: "What is the time?", Workspace: r.dir,
		Deadline: time.Now().Add(time.Minute), Limits: contracts.Limits{MaxToolCalls: 6, Budget: time.Minute},
		System: "Be brief.", SkillCatalog: "- a_skill: \"a made-up skill\"",
		Memory:     []contracts.Fact{{ID: 1, Text: "a made-up fact", At: time.Now()}},
		HistoryLen: 2}
	return roundTrip(wire.TypeJob, made, &r.job)
}

// buildTools builds the tools and renders the system prompt.
func (r *rehearsal) buildTools() error {
	reg, done, err := r.build(r.job, refusing{})
	if err != nil {
		return err
	}
	r.reg, r.done = reg, done
	r.job.System = SystemPrompt(time.Now(), r.job.System, r.job.SkillCatalog, r.job.Memory)
	return nil
}

// encodeRequest encodes a model request with the tools' specs.
func (r *rehearsal) encodeRequest() error {
	msgs := []contracts.Message{{Role: contracts.RoleUser, Text: r.job.Input}}
	return r.out.SendCall(1, wire.MethodComplete, contracts.Request{System: r.job.System, History: r.job.HistoryLen,
		Messages: msgs, Tools: r.reg.Specs()})
}

// decodeAnswer decodes a model's answer that calls the first tool.
func (r *rehearsal) decodeAnswer() error {
	tools := r.reg.Tools()
	if len(tools) == 0 {
		return errors.New("no tools")
	}
	call := contracts.ToolCall{ID: "call_1", Name: tools[0].Name, Arguments: `{}`}
	comp := contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant, Text: "Let me look.",
		ToolCalls: []contracts.ToolCall{call}}, Usage: contracts.Usage{InputTokens: 1000, OutputTokens: 10},
		Provider: "rehearsal", Model: "rehearsal"}
	return roundTrip(wire.TypeReply, comp, &r.comp)
}

// checkCall checks the call's arguments against the tool's schema
// (deriving it) and encodes its event; the tool does not run.
func (r *rehearsal) checkCall() error {
	for _, call := range r.comp.Message.ToolCalls {
		tool, ok := r.reg.Get(call.Name)
		if !ok {
			return errors.New("no tool " + call.Name)
		}
		_, err := PrepareArguments(tool, call.Arguments)
		args := call.Arguments
		if r.redact != nil {
			args = r.redact(args)
		}
		ev := contracts.ToolEvent{Phase: contracts.PhaseEnd, CallID: call.ID, Tool: call.Name, Arguments: args,
			OK: err == nil, Summary: capText("a made-up result", summaryBytes), Duration: time.Millisecond}
		if err := r.out.Send(wire.TypeEvent, ev); err != nil {
			return err
		}
		r.results = append(r.results, contracts.ToolResult{CallID: call.ID, Name: call.Name, Content: "a made-up result", OK: true})
	}
	return nil
}

// encodeResult encodes a turn's result.
func (r *rehearsal) encodeResult() error {
	p := newProfile(time.Now())
	p.mark(StepJobDecoded)
	msgs := []contracts.Message{{Role: contracts.RoleUser, Text: r.job.Input}, r.comp.Message,
		{Role: contracts.RoleTool, ToolResults: r.results}, {Role: contracts.RoleAssistant, Text: "It is noon."}}
	return r.out.Send(wire.TypeResult, contracts.Result{Reply: "It is noon.", Messages: msgs, ToolCalls: 1,
		Usage: r.comp.Usage, Provider: r.comp.Provider, Model: r.comp.Model, Profile: p.done(StepResultReady)})
}

func (r *rehearsal) release() {
	if r.done != nil {
		r.done()
	}
}

// refusing is the rehearsal's Daemon: no tool is called, and none may
// reach the daemon.
type refusing struct{}

var errRehearsal = errors.New("a rehearsal does not reach the daemon")

func (refusing) Propose(context.Context, contracts.Proposal) (contracts.Proposed, error) {
	return contracts.Proposed{}, errRehearsal
}

func (refusing) Configure(context.Context, json.RawMessage) ([]string, error) {
	return nil, errRehearsal
}

func (refusing) Skill(context.Context, contracts.SkillRequest) (string, error) {
	return "", errRehearsal
}

func (refusing) Memory(context.Context, contracts.MemoryRequest) (string, error) {
	return "", errRehearsal
}
