package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shelldon/shelldon/internal/core/store"
)

// begin begins the turn of a message: always a new one for a message
// without a key, and for a keyed one what store.BeginKeyedTurn decides.
// turn 0 means none runs: out is then the outcome of the message's
// earlier turn (see SendOnce). For a turn that runs, out carries only
// Again.
func (c *Core) begin(ctx context.Context, chat, key, text string, at time.Time, origin store.Origin) (turn int64, out Outcome, err error) {
	st := c.opts.Store
	if key == "" {
		turn, err := st.BeginTurnAs(ctx, chat, text, at, origin)
		if errors.Is(err, ErrBudgetSpent) {
			return 0, Outcome{}, err
		}
		if err != nil {
			return 0, Outcome{}, fmt.Errorf("core: begin turn: %w", err)
		}
		return turn, Outcome{}, nil
	}
	k, err := st.BeginKeyedTurnAs(ctx, chat, key, text, at, MaxAttempts, origin)
	switch {
	case errors.Is(err, ErrBudgetSpent):
		return 0, Outcome{}, err
	case errors.Is(err, store.ErrKeyBusy):
		return 0, Outcome{}, fmt.Errorf("core: %w", ErrRunning)
	case err != nil:
		return 0, Outcome{}, fmt.Errorf("core: begin turn: %w", err)
	case k.Rerun():
		c.log.Warn("running a message again: a restart cut its turn short before it did anything",
			"chat", chat, "cut_short", k.Previous.ID, "turn", k.Turn, "attempt", k.Attempts+1)
		return k.Turn, Outcome{Again: Rerun}, nil
	case k.Turn != 0:
		return k.Turn, Outcome{}, nil
	}
	p := k.Previous
	out = Outcome{Turn: p.ID, Reply: p.Reply, ToolCalls: p.ToolCalls, Usage: p.Usage, Approvals: []ApprovalView{}, Again: Replayed}
	if p.Status != store.StatusOK {
		out.Stopped = p.Status
	}
	if pending, err := c.desk.Pending(ctx); err == nil {
		for _, v := range pending {
			if v.Turn == p.ID {
				out.Approvals = append(out.Approvals, v)
			}
		}
	} else {
		c.log.Error("list the requests a turn filed", "turn", p.ID, "err", err)
	}
	if p.Status == store.StatusError && p.Error == store.Interrupted {
		if k.Filed > 0 {
			out.Again = CutShort
			out.Reply = "shelldon restarted during the turn of this message, after the turn had filed requests for you, so it did not finish. " +
				"What it filed stands; send the message again to go on."
		} else {
			out.Again = GaveUp
			out.Reply = fmt.Sprintf("shelldon restarted during the turn of this message %d times, so it is not run again. "+
				"Send it again if you want it run.", k.Attempts)
		}
		c.log.Warn("a message's turn was cut short by a restart and is not run again", "chat", chat, "turn", p.ID, "why", out.Again)
	}
	return 0, out, nil
}
