package core

import (
	"context"

	"github.com/shelldon/shelldon/internal/core/approvals"
)

// The requests that wait for the owner are the desk's
// (internal/core/approvals): core parks a turn's RISKY call and files a
// proposed tool there, hands the desk the turn engine to carry out a
// decision (engine, below), and keeps the names transports use.

// ApprovalView is a request as transports show it.
type ApprovalView = approvals.View

// Kinds of request: a parked RISKY call, and the kinds of proposal (a
// self-coded tool version, a skill the agent drafted).
const (
	KindToolCall  = approvals.KindToolCall
	KindPromotion = approvals.KindPromotion
	KindSkill     = approvals.KindSkill
)

// Errors of Decide, for transports to map (404, 409).
var (
	ErrUnknownApproval = approvals.ErrUnknown
	ErrAlreadyDecided  = approvals.ErrDecided
	ErrApprovalExpired = approvals.ErrExpired
	ErrStaleApproval   = approvals.ErrStale // wraps why a decided request cannot be carried out
)

// MayHaveRun is the model's result for an approved call that started and
// whose end nobody saw.
const MayHaveRun = approvals.MayHaveRun

// Decide records the owner's decision on request id and carries it out (see
// approvals.Desk.Decide): an approved call runs once, bound to the
// arguments the owner saw, and the parked turn goes on to a reply, which
// may park again; ev shows that turn as it happens. When every worker slot
// is busy the decision waits its turn.
func (c *Core) Decide(ctx context.Context, id string, approve bool, by string, ev Events) (Outcome, error) {
	e := &engine{c: c, ev: ev}
	reply, err := c.desk.Decide(ctx, id, approve, by, e)
	if e.ran {
		return e.out, err
	}
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Reply: reply, Approvals: []ApprovalView{}}, nil
}

// ProposeSkill files a skill draft for the owner outside a turn: the
// review, after an upgrade, of the skills the agent wrote before its
// drafts needed approval.
func (c *Core) ProposeSkill(ctx context.Context, chat string, turn int64, d SkillDraft) (ApprovalView, error) {
	return c.desk.ProposeSkill(ctx, chat, turn, d)
}

// RecoverApprovals finishes what a crash left between a decision and its
// end (see approvals.Desk.Recover) and returns how many requests it handled.
func (c *Core) RecoverApprovals(ctx context.Context) (int, error) {
	return c.desk.Recover(ctx, &engine{c: c, recovery: true})
}

// OnRecovered sets f to receive the outcome of each turn RecoverApprovals
// continued: a decision whose decider stopped before its turn finished,
// carried on by recovery, which no transport is waiting for; f delivers it
// to the chat's channel. nil (the default) leaves it in the history only.
func (c *Core) OnRecovered(f func(chat string, out Outcome)) {
	c.recovered.Store(&f)
}

// engine is the turn engine as the desk sees it, for one decision (or one
// recovery): the continued turn is shown through ev, and its outcome kept
// for Decide to return.
type engine struct {
	c        *Core
	ev       Events
	recovery bool // continuing what a stopped decider left (OnRecovered)
	ran      bool
	out      Outcome
}

var _ approvals.Turns = (*engine)(nil)

func (e *engine) Acquire(ctx context.Context) (func(), error) {
	if err := e.c.acquire(ctx); err != nil {
		return nil, err
	}
	return e.c.release, nil
}

func (e *engine) Continue(ctx context.Context, chat string, x *approvals.Exchange) (approvals.Continued, error) {
	ev := e.ev
	ev.exchange = x
	r := x.Resume()
	text := ""
	if len(r.Messages) > 0 {
		text = r.Messages[0].Text
	}
	out, err := e.c.runTurn(ctx, chat, "", text, r, ev)
	e.ran, e.out = true, out
	if f := e.c.recovered.Load(); e.recovery && f != nil && *f != nil && out.Turn != 0 {
		(*f)(chat, out)
	}
	return approvals.Continued{Turn: out.Turn}, err
}
