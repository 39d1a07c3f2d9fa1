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
// Method*), for the turn of job; what the turn files goes to filed. A
// request that fails is an error in the reply, for the tool (or the loop)
// to report. Only the model call may be
// served alongside another call (runWorker serves the rest in order).
func (c *Core) calls(job contracts.Job, ev Events, filed *turnFiled) wire.Handlers {
	configured := false // an approved update_config applies once
	model := c.turnModel()
	return wire.Handlers{
		wire.MethodComplete: wire.Handle(func(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
			return c.complete(ctx, model, req, ev)
		}),
		wire.MethodPropose: wire.Handle(func(ctx context.Context, p contracts.Proposal) (contracts.Proposed, error) {
			return c.propose(ctx, job, p, filed)
		}),
		wire.MethodConfigure: wire.Handle(func(ctx context.Context, changes json.RawMessage) ([]string, error) {
			return c.configure(ctx, job, changes, &configured)
		}),
		wire.MethodSkill: wire.Handle(func(ctx context.Context, req contracts.SkillRequest) (string, error) {
			return c.skill(ctx, job, req, filed)
		}),
	}
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

// complete makes the model call a worker asked for, streaming its text to
// the transport.
func (c *Core) complete(ctx context.Context, model Completer, req contracts.Request, ev Events) (contracts.Completion, error) {
	comp, err := model.Complete(ctx, req, ev.Text)
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
	c.log.Warn("model call failed", "err", msg)
	return contracts.Completion{}, errors.New(msg)
}

// skill serves a skills operation. A create or an update is a draft: it is
// staged and filed for the owner, and is in no prompt until approved.
func (c *Core) skill(ctx context.Context, job contracts.Job, req contracts.SkillRequest, filed *turnFiled) (string, error) {
	if c.opts.Skills == nil {
		return "", errors.New("skills are not available")
	}
	if req.Op != "create" && req.Op != "update" {
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
