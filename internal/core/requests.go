package core

import (
	"context"
	"encoding/json"
	"errors"

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
	return wire.Handlers{
		wire.MethodComplete: wire.Handle(func(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
			return c.complete(ctx, req, ev)
		}),
		wire.MethodPropose: wire.Handle(func(ctx context.Context, p contracts.Proposal) (contracts.Proposed, error) {
			return c.propose(ctx, job, p, filed)
		}),
		wire.MethodConfigure: wire.Handle(func(ctx context.Context, changes json.RawMessage) ([]string, error) {
			return c.configure(ctx, job, changes, &configured)
		}),
		wire.MethodSkill: wire.Handle(c.skill),
	}
}

// complete makes the model call a worker asked for, streaming its text to
// the transport.
func (c *Core) complete(ctx context.Context, req contracts.Request, ev Events) (contracts.Completion, error) {
	comp, err := c.opts.Model.Complete(ctx, req, ev.Text)
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

// skill serves a skills operation.
func (c *Core) skill(ctx context.Context, req contracts.SkillRequest) (string, error) {
	if c.opts.Skills == nil {
		return "", errors.New("skills are not available")
	}
	return c.opts.Skills.Do(ctx, req)
}
