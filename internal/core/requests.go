package core

import (
	"context"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// answer serves a worker's request to the daemon (a skills operation, an
// approved config change, a proposed tool) and sends the reply. A request
// that fails is an error in the reply, for the tool to report; only a frame
// that does not decode is an error here.
func (c *Core) answer(ctx context.Context, job contracts.Job, conn *wire.Conn, f wire.Frame, configured *bool) error {
	var typ string
	var reply any
	switch f.Type {
	case wire.TypeSkill:
		var msg wire.SkillMsg
		if err := f.Decode(&msg); err != nil {
			return err
		}
		r := wire.SkillDoneMsg{Seq: msg.Seq}
		if c.opts.Skills == nil {
			r.Error = "skills are not available"
		} else if out, err := c.opts.Skills.Do(ctx, msg.Request); err != nil {
			r.Error = err.Error()
		} else {
			r.Result = out
		}
		typ, reply = wire.TypeSkillDone, r
	case wire.TypeConfigure:
		var msg wire.ConfigureMsg
		if err := f.Decode(&msg); err != nil {
			return err
		}
		r := wire.ConfiguredMsg{Seq: msg.Seq}
		diff, err := c.configure(ctx, job, msg.Changes, configured)
		if err != nil {
			r.Error = err.Error()
		}
		r.Diff = diff
		typ, reply = wire.TypeConfigured, r
	case wire.TypePropose:
		var msg wire.ProposeMsg
		if err := f.Decode(&msg); err != nil {
			return err
		}
		r := wire.ProposedMsg{Seq: msg.Seq}
		got, err := c.propose(ctx, job, msg.Proposal)
		if err != nil {
			r.Error = err.Error()
		}
		r.Proposed = got
		typ, reply = wire.TypeProposed, r
	}
	if err := conn.Send(typ, reply); err != nil {
		c.log.Debug("answer the worker", "type", typ, "err", err)
	}
	return nil
}
