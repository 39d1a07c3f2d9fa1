package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// calls is the table of what a turn's worker may ask of the daemon (wire's
// Method*), for the turn of job, whose worker may name specs (the tool
// specs job lists); what the turn files goes to filed. A
// request that fails is an error in the reply, for the tool (or the loop)
// to report. Only the model call may be
// served alongside another call (runWorker serves the rest in order).
func (c *Core) calls(job contracts.Job, specs *specSet, ev Events, filed *turnFiled) wire.Handlers {
	configured := false // an approved update_config applies once
	started := false    // the approved call starts once
	fetched := false    // an approved git fetch or pull reaches its remote once
	pushed := false     // an approved git push reaches its remote once
	model := c.turnModel()
	return wire.Handlers{
		wire.MethodComplete: wire.Handle(func(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
			req, err := withHistory(job, req)
			if err != nil {
				return contracts.Completion{}, err
			}
			if req.Tools, err = c.specs.resolve(specs, req.Tools); err != nil {
				return contracts.Completion{}, err
			}
			comp, err := c.complete(ctx, model, req, ev)
			budgetRead(ctx)
			c.meter(ctx, job, ev, comp)
			profileOf(ctx).mark("usage recorded")
			return comp, err
		}),
		wire.MethodPropose: wire.Handle(func(ctx context.Context, p contracts.Proposal) (contracts.Proposed, error) {
			return c.propose(ctx, job, p, filed)
		}),
		wire.MethodConfigure: wire.Handle(func(ctx context.Context, changes json.RawMessage) ([]string, error) {
			return c.configure(ctx, job, changes, &configured)
		}),
		wire.MethodGitFetch: wire.Handle(func(ctx context.Context, req contracts.GitFetch) (contracts.GitFetched, error) {
			return c.gitFetch(ctx, job, req, &fetched)
		}),
		wire.MethodGitPush: wire.Handle(func(ctx context.Context, req contracts.GitPush) (contracts.GitPushed, error) {
			return c.gitPush(ctx, job, req, &pushed)
		}),
		wire.MethodStart: wire.Handle(func(ctx context.Context, callID string) (bool, error) {
			return true, c.starting(ctx, job, callID, ev, &started)
		}),
		wire.MethodRecord: wire.Handle(func(ctx context.Context, msgs []contracts.Message) (bool, error) {
			return true, c.record(ctx, job, msgs, ev, filed)
		}),
		wire.MethodSkill: wire.Handle(func(ctx context.Context, req contracts.SkillRequest) (string, error) {
			return c.skill(ctx, job, req, filed)
		}),
		wire.MethodMemory: wire.Handle(func(ctx context.Context, req contracts.MemoryRequest) (string, error) {
			return c.memory(ctx, job, req)
		}),
		wire.MethodSchedule: c.scheduleHandler(job, ev),
		wire.MethodFindTools: wire.Handle(func(_ context.Context, req contracts.FindTools) ([]contracts.SelfTool, error) {
			return c.findTools(job, req, filed)
		}),
	}
}

// budgetReadKey carries, in a turn's context, a channel closed once the
// budgets' warning for the turn has read what was spent (Core.send).
type budgetReadKey struct{}

// budgetRead waits until the turn's budget warning, if it has one, has
// read the ledger: the turn's own model calls are metered after it, so
// the warning counts only what was spent before the turn.
func budgetRead(ctx context.Context) {
	if read, ok := ctx.Value(budgetReadKey{}).(chan struct{}); ok {
		<-read
	}
}

// withHistory is req with the job's history it names put back before its
// messages (contracts.Request.History).
func withHistory(job contracts.Job, req contracts.Request) (contracts.Request, error) {
	if req.History == 0 {
		return req, nil
	}
	if req.History < 0 || req.History > len(job.History) {
		return req, fmt.Errorf("the request names %d messages of a history of %d", req.History, len(job.History))
	}
	req.Messages = append(job.History[:req.History:req.History], req.Messages...)
	req.History = 0
	return req, nil
}

// Pinner is a Completer whose models can change while shelldon runs (a
// config change): Pin returns the one in force now. A turn pins its model
// when it starts, so a change an approved call makes mid-turn applies from
// the next turn, as the owner's card says.
type Pinner interface {
	Pin() Completer
}

// turnModel is the model of a turn that starts now.
func (c *Core) turnModel() Completer {
	if p, ok := c.opts.Model.(Pinner); ok {
		return p.Pin()
	}
	return c.opts.Model
}

// starting records, before it runs, that the owner's approved call of a
// resumed turn starts (the desk's write-ahead mark): only that call, only
// once.
func (c *Core) starting(ctx context.Context, job contracts.Job, callID string, ev Events, done *bool) error {
	r := job.Resume
	if r == nil || !r.Approved || r.Call.ID != callID || *done || ev.exchange == nil {
		return errors.New("only the call the owner approved starts, once")
	}
	*done = true
	return ev.exchange.Start(ctx)
}

// record commits a resumed turn's decided exchange (the parked messages
// and the decided call's result) and closes its request, before the model
// is asked again: once per turn.
func (c *Core) record(ctx context.Context, job contracts.Job, msgs []contracts.Message, ev Events, filed *turnFiled) error {
	if job.Resume == nil || ev.exchange == nil || filed.recorded != nil {
		return errors.New("only a resumed turn records its exchange, once")
	}
	if len(msgs) < len(job.Resume.Messages) {
		return errors.New("the exchange does not hold the parked messages")
	}
	if err := ev.exchange.Record(context.WithoutCancel(ctx), job.Turn, msgs); err != nil {
		return err
	}
	filed.recorded = msgs
	return nil
}

// exchangeOf is the parked messages with the decided call's result added
// to their last tool message, or in one of its own.
func exchangeOf(parked []contracts.Message, res contracts.ToolResult) []contracts.Message {
	msgs := append([]contracts.Message(nil), parked...)
	if n := len(msgs); n > 0 && msgs[n-1].Role == contracts.RoleTool {
		msgs[n-1].ToolResults = append(append([]contracts.ToolResult(nil), msgs[n-1].ToolResults...), res)
		return msgs
	}
	return append(msgs, contracts.Message{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{res}})
}

// complete makes the model call a worker asked for, streaming its text to
// the transport.
func (c *Core) complete(ctx context.Context, model Completer, req contracts.Request, ev Events) (contracts.Completion, error) {
	profileOf(ctx).mark("model request received")
	comp, err := model.Complete(ctx, req, ev.Text)
	profileOf(ctx).mark("model answered")
	if err == nil {
		return comp, nil
	}
	if ctx.Err() != nil {
		// The turn was cancelled or ran out of time: the worker learns that
		// from the cancel frame or its own deadline, not from a model error
		// that could reach it first and read as a broken provider.
		return contracts.Completion{}, wire.ErrNoReply
	}
	// The broker's errors carry no secret; redact anyway, on the way to the worker.
	msg := c.opts.Redact(err.Error())
	var over overCap
	if errors.As(err, &over) && over.ReplyOverCap() {
		// The reply is what went wrong, not the provider: say which cap,
		// in the words the owner reads in the turn's reply.
		msg = c.opts.Redact(over.Error()) + "; the turn was stopped"
		c.log.Warn("model reply over a cap; the turn stops", "err", msg)
		return contracts.Completion{}, errors.New(msg)
	}
	c.log.Warn("model call failed", "err", msg)
	return contracts.Completion{}, errors.New(msg)
}

// overCap is a model error for a reply that went over one of the broker's
// caps (its provider.Error says which, "the model's reply exceeded 1 MiB
// of text"). Core asks through this interface: it never imports the broker.
type overCap interface {
	error
	ReplyOverCap() bool
}

// skill serves a skills operation. A create or an update is a draft: it is
// staged and filed for the owner, and is in no prompt until approved.
func (c *Core) skill(ctx context.Context, job contracts.Job, req contracts.SkillRequest, filed *turnFiled) (string, error) {
	if c.opts.Skills == nil {
		return "", errors.New("skills are not available")
	}
	if req.Op != contracts.SkillCreate && req.Op != contracts.SkillUpdate {
		// list_skills, use_skill, read_skill_file: they read the skills in
		// use, never a draft.
		return c.opts.Skills.Do(ctx, req)
	}
	d, err := c.opts.Skills.Stage(ctx, req)
	if err != nil {
		return "", err
	}
	v, err := c.desk.ProposeSkill(ctx, job.Chat, job.Turn, d)
	if err != nil {
		return "", err
	}
	c.audit(ctx, job.Chat, job.Turn, auditSkillDrafted, d.Name, v.Arguments, "request "+v.ID, true, 0)
	filed.approvals = append(filed.approvals, v)
	return fmt.Sprintf("The skill %s is drafted and waits for the owner's approval (request %s). Until the owner approves it, it is in no prompt and use_skill cannot load it; tell the owner it is waiting.", d.Name, v.ID), nil
}

// auditSkillDrafted is the audit kind of a skill draft filed for the owner.
const auditSkillDrafted = "skill_drafted"
