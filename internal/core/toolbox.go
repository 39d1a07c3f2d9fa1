package core

import (
	"context"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/approvals"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/core/toolbox"
)

// The self-coded tools are the toolbox's (internal/core/toolbox): core has
// it stage a turn's proposal and files the promotion on the desk
// (internal/core/approvals), which carries the owner's decision back to
// the toolbox; core keeps the facade transports and app use.

// ToolView is a tool as the owner's commands, GET /api/tools and
// Telegram's /tools show it.
type ToolView = toolbox.View

// The sources of a ToolView.
const (
	SourceBuiltin = toolbox.SourceBuiltin
	SourceSelf    = toolbox.SourceSelf
)

// turnFiled is what a turn filed while its worker ran: requests for the
// owner (promotions) and notes from shelldon for the turn's reply. runWorker
// owns one per turn and returns it with the turn's result; only the
// goroutine that serves the worker's calls and events in order touches it.
type turnFiled struct {
	approvals []ApprovalView
	notes     []string
	recorded  []contracts.Message  // a decided request's exchange, recorded (Exchange.Record)
	found     []contracts.SelfTool // the self-coded tools find_tools added to the turn (findtools.go)
}

func (f *turnFiled) note(text string) {
	if text != "" {
		f.notes = append(f.notes, text)
	}
}

// propose has the toolbox stage a tool whose gate passed and files the
// request that asks the owner to promote it.
func (c *Core) propose(ctx context.Context, job contracts.Job, p contracts.Proposal, filed *turnFiled) (contracts.Proposed, error) {
	s, err := c.tools.Stage(p)
	if err != nil {
		return contracts.Proposed{}, err
	}
	m := s.Manifest
	v, err := c.desk.Propose(ctx, job.Chat, job.Turn, m, s.Args, p)
	if err != nil {
		return contracts.Proposed{}, err
	}
	c.audit(ctx, job.Chat, job.Turn, toolbox.AuditProposed, m.Name, s.Args, fmt.Sprintf("v%d %s, gate passed; request %s", m.Version, m.Hash[:12], v.ID), true, 0)
	filed.approvals = append(filed.approvals, v)
	return contracts.Proposed{ApprovalID: v.ID, Version: m.Version, Hash: m.Hash}, nil
}

// RecoverTools finishes or undoes the changes of a self-coded tool's live
// version a crash interrupted; the daemon calls it once at start, before
// RecoverApprovals.
func (c *Core) RecoverTools(ctx context.Context) error { return c.tools.Recover(ctx) }

// ToolAction is an owner command on a self-coded tool.
func (c *Core) ToolAction(ctx context.Context, action, name, by string) (string, error) {
	return c.tools.Action(ctx, action, name, by)
}

// toolPromoter is the toolbox as the desk's Promoter of self-coded tools.
type toolPromoter struct{ t *toolbox.Toolbox }

var _ approvals.Promoter = toolPromoter{}

func (p toolPromoter) Promote(ctx context.Context, a store.Approval) (string, string, error) {
	if !p.t.Enabled() {
		return "", "not promoted: " + toolbox.ErrDisabled.Error(), toolbox.ErrDisabled
	}
	m, outcome, err := p.t.Promote(ctx, a)
	if err != nil {
		return "", outcome, err
	}
	return fmt.Sprintf("The tool %s (version %d) is live: it is one of shelldon's tools from the next turn.", m.Name, m.Version), outcome, nil
}

func (p toolPromoter) Deny(ctx context.Context, a store.Approval)  { p.t.Deny(ctx, a) }
func (p toolPromoter) Discard(_ context.Context, a store.Approval) { p.t.Discard(a.Tool) }
func (p toolPromoter) Promoted(a store.Approval) string            { return p.t.Promoted(a) }
