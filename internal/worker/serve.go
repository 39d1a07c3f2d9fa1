package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// Builder makes the tool registry of a turn. The returned func releases what
// the tools hold (an open workspace, say). d reaches the daemon for the
// tools that need it (propose_tool).
type Builder func(job contracts.Job, d Daemon) (*Registry, func(), error)

// Daemon is what a tool may ask of the daemon.
type Daemon interface {
	// Propose hands over a tool whose gate passed, to be staged and put
	// before the owner.
	Propose(ctx context.Context, p contracts.Proposal) (contracts.Proposed, error)
	// Configure applies the config change the owner approved.
	Configure(ctx context.Context, changes json.RawMessage) ([]string, error)
	// Skill lists, loads, creates or updates a skill.
	Skill(ctx context.Context, req contracts.SkillRequest) (string, error)
	// Memory remembers a fact or recalls facts (memory.go).
	Memory(ctx context.Context, req contracts.MemoryRequest) (string, error)
}

// ToolFinder is what find_tools asks of the daemon: the live self-coded
// tools most relevant to query that the turn does not offer yet. The
// daemon's client in a worker process is one.
type ToolFinder interface {
	FindTools(ctx context.Context, query string) ([]contracts.SelfTool, error)
}

// Serve runs one turn in the worker process: it reads the Job from conn,
// builds the tools, runs the loop with the daemon as the model, reports each
// tool execution as an event and sends the Result. A cancel frame, or the
// daemon closing the pipe, ends the turn early.
func Serve(ctx context.Context, conn *wire.Conn, build Builder, redact func(string) string, logger *slog.Logger) error {
	first, err := conn.Recv()
	prof := newProfile(time.Now())
	if err != nil {
		return fmt.Errorf("worker: read job: %w", err)
	}
	if first.Type != wire.TypeJob {
		return fmt.Errorf("worker: first frame is %q, want %q", first.Type, wire.TypeJob)
	}
	var job contracts.Job
	if err := first.Decode(&job); err != nil {
		return err
	}
	prof.mark(StepJobDecoded)
	rm := newRemote(conn)
	reg, release, err := build(job, rm)
	if err != nil {
		conn.SendError(wire.TypeResult, fmt.Sprintf("worker: build tools: %v", err))
		return fmt.Errorf("worker: build tools: %w", err)
	}
	defer release()
	prof.mark(StepToolsBuilt)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go rm.readLoop(cancel, logger)

	loop := &Loop{
		profile:  prof,
		Model:    rm,
		Tools:    reg,
		Redact:   redact,
		Logger:   logger,
		Starting: rm.Starting,
		Record:   rm.Record,
		OnEvent: func(ev contracts.ToolEvent) {
			if err := conn.Send(wire.TypeEvent, ev); err != nil {
				logger.Warn("worker: send event", "err", err)
			}
		},
	}
	job.System = SystemPrompt(time.Now(), job.System, job.SkillCatalog, job.Memory)
	prof.mark(StepPromptBuilt)
	res := loop.Run(ctx, job)
	res.Profile, res.ProfileAt = prof.done(StepResultReady), prof.start.UnixMicro()
	err = conn.Send(wire.TypeResult, res)
	if errors.Is(err, wire.ErrTooLarge) {
		// The turn's messages do not fit in a frame: the owner learns
		// why, rather than that the worker exited without a result.
		logger.Warn("worker: the turn's result is larger than a frame may be", "err", err)
		err = conn.Send(wire.TypeResult, oversized(res, err))
	}
	if err != nil {
		return fmt.Errorf("worker: send result: %w", err)
	}
	return nil
}

// oversized is what is left of a result too large to send: the turn's
// first message (the owner's, if it is small) closed by shelldon's note,
// and a reply that names the cause, with the start of the reply the turn
// had.
func oversized(res contracts.Result, cause error) contracts.Result {
	reply := fmt.Sprintf("The turn was stopped: its messages are too large for the worker to hand back (%v).", cause)
	if res.Reply != "" {
		reply += "\n\nThe reply began: " + capText(res.Reply, 4<<10)
	}
	out := contracts.Result{Reply: reply, ToolCalls: res.ToolCalls, Usage: res.Usage, Stopped: contracts.StopError,
		Provider: res.Provider, Model: res.Model, Profile: res.Profile}
	if len(res.Messages) > 0 && res.Messages[0].Role == contracts.RoleUser && len(res.Messages[0].Text) <= MaxResultBytes &&
		len(res.Messages[0].ToolResults) == 0 {
		out.Messages = append(out.Messages, res.Messages[0])
	}
	out.Messages = append(out.Messages, contracts.StoppedNote(contracts.StopError))
	return out
}

// daemonClient asks the daemon for completions, proposals, skills and config
// changes: each is a call of the frame pipe's wire.Client (see wire's
// Method* for the bodies).
type daemonClient struct {
	calls *wire.Client
}

var (
	_ Model      = (*daemonClient)(nil)
	_ Daemon     = (*daemonClient)(nil)
	_ ToolFinder = (*daemonClient)(nil)
)

func newRemote(conn *wire.Conn) *daemonClient {
	return &daemonClient{calls: wire.NewClient(conn)}
}

// Propose sends a proposal and waits for the daemon's answer.
func (m *daemonClient) Propose(ctx context.Context, p contracts.Proposal) (contracts.Proposed, error) {
	var got contracts.Proposed
	if err := m.calls.Call(ctx, wire.MethodPropose, p, &got); err != nil {
		return contracts.Proposed{}, err
	}
	return got, nil
}

// Configure asks the daemon to apply the config change the owner approved
// (update_config) and returns what changed.
func (m *daemonClient) Configure(ctx context.Context, changes json.RawMessage) ([]string, error) {
	var diff []string
	if err := m.calls.Call(ctx, wire.MethodConfigure, changes, &diff); err != nil {
		return nil, err
	}
	return diff, nil
}

// Skill asks the daemon for a skills operation.
func (m *daemonClient) Skill(ctx context.Context, req contracts.SkillRequest) (string, error) {
	var out string
	if err := m.calls.Call(ctx, wire.MethodSkill, req, &out); err != nil {
		return "", err
	}
	return out, nil
}

// FindTools asks the daemon for the live self-coded tools most relevant
// to query that the turn does not offer yet (find_tools).
func (m *daemonClient) FindTools(ctx context.Context, query string) ([]contracts.SelfTool, error) {
	var found []contracts.SelfTool
	if err := m.calls.Call(ctx, wire.MethodFindTools, contracts.FindTools{Query: query}, &found); err != nil {
		return nil, err
	}
	return found, nil
}

// Starting tells the daemon that the owner's approved call callID is about
// to run, and waits until it has recorded that.
func (m *daemonClient) Starting(ctx context.Context, callID string) error {
	return m.acknowledged(ctx, wire.MethodStart, callID, "the start")
}

// Record hands the daemon a resumed turn's exchange to record, and waits
// until it has.
func (m *daemonClient) Record(ctx context.Context, msgs []contracts.Message) error {
	return m.acknowledged(ctx, wire.MethodRecord, msgs, "the exchange")
}

// acknowledged makes a call whose answer is true once the daemon has
// recorded what, durably.
func (m *daemonClient) acknowledged(ctx context.Context, method string, body any, what string) error {
	var ok bool
	if err := m.calls.Call(ctx, method, body, &ok); err != nil {
		return err
	}
	if !ok {
		return errors.New("the daemon did not record " + what)
	}
	return nil
}

// Complete asks the daemon for a model call.
func (m *daemonClient) Complete(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
	var comp contracts.Completion
	if err := m.calls.Call(ctx, wire.MethodComplete, req, &comp); err != nil {
		return contracts.Completion{}, err
	}
	return comp, nil
}

// readLoop routes the daemon's frames: replies to the call waiting for them
// (one a call gave up on is dropped), a cancel (or the pipe closing) to the
// turn's context.
func (m *daemonClient) readLoop(cancel context.CancelFunc, logger *slog.Logger) {
	err := m.calls.Read(func(f wire.Frame) error {
		if f.Type == wire.TypeCancel {
			cancel()
		} else {
			logger.Debug("worker: a frame from the daemon dropped", "type", f.Type)
		}
		return nil
	})
	if !errors.Is(err, io.EOF) {
		logger.Warn("worker: read from daemon", "err", err)
	}
	cancel()
}
