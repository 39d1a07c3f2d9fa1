package core

import (
	"context"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// ProposeImport files, outside a turn, the promotion of a tool version that
// came in a bundle from another machine (`shelldon tools import`): p is the
// bundle's current version as the gate that ran here reported it (its
// description, parameters and capabilities are the gate's reading of the
// code, not the bundle's word), imp where it came from. The version is
// staged and waits for the owner's approval exactly as a model's proposal
// does; the card says it was imported. chat is the conversation the request
// is filed under.
func (c *Core) ProposeImport(ctx context.Context, chat string, p contracts.Proposal, imp selfcode.Import) (ApprovalView, error) {
	s, err := c.tools.StageImport(p, imp)
	if err != nil {
		return ApprovalView{}, err
	}
	m := s.Manifest
	v, err := c.desk.Propose(ctx, chat, 0, m, s.Args, p)
	if err != nil {
		c.tools.Discard(m.Name)
		return ApprovalView{}, err
	}
	c.audit(ctx, chat, 0, toolbox.AuditProposed, m.Name, s.Args,
		fmt.Sprintf("v%d %s imported from a bundle (its v%d there), gate passed; request %s", m.Version, m.Hash[:12], imp.SourceVersion, v.ID), true, 0)
	return v, nil
}
