package approvals

import (
	"context"
	"errors"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
)

// MayHaveRun is the model's result, and the request's outcome, for an
// approved call that started and whose end nobody saw (a crash, a killed
// worker): it may have run, and it is not retried. Never "not run".
const MayHaveRun = "started; may have run: shelldon stopped while this call was running; it may or may not have completed, and it was not retried"

// Expire closes every request past its expiry: the owner is told (in the
// log, the audit trail and the chat's history), and the model's
// conversation is completed with a result saying the request expired. A
// proposed tool's staged copy is discarded. It returns how many expired.
func (d *Desk) Expire(ctx context.Context) (int, error) {
	expired, err := d.st.ExpirePending(ctx, d.now())
	if err != nil {
		return 0, err
	}
	for _, a := range expired {
		d.record(ctx, a.Chat, a.Turn, auditExpired, a.Tool, a.Args, "request "+a.ID+" expired undecided", false)
		if a.Kind != KindToolCall {
			if p, ok := d.promoters[a.Kind]; ok {
				p.Discard(ctx, a)
			}
			continue
		}
		d.log.Warn("approval request expired", "id", a.ID, "tool", a.Tool, "chat", a.Chat)
		if err := d.closeExpired(ctx, a); err != nil {
			d.log.Error("record expired approval", "id", a.ID, "err", err)
		}
	}
	return len(expired), nil
}

// closeExpired commits a turn that closes the expired call's conversation,
// so the next turn's context is well formed.
func (d *Desk) closeExpired(ctx context.Context, a store.Approval) error {
	msgs := append([]contracts.Message(nil), a.Pending.Messages...)
	res := contracts.ToolResult{CallID: a.Pending.Call.ID, Name: a.Pending.Call.Name, Content: "not run: the owner did not decide before the request expired"}
	if n := len(msgs); n > 0 && msgs[n-1].Role == contracts.RoleTool {
		msgs[n-1].ToolResults = append(append([]contracts.ToolResult(nil), msgs[n-1].ToolResults...), res)
	} else {
		msgs = append(msgs, contracts.Message{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{res}})
	}
	note := fmt.Sprintf("The approval request %s (%s) expired before you decided; nothing was run.", a.ID, a.Tool)
	msgs = append(msgs, contracts.Note(fmt.Sprintf("the owner did not decide on request %s (%s) before it expired; nothing was run.", a.ID, a.Tool)))
	turn, err := d.st.BeginTurn(ctx, a.Chat, msgs[0].Text, d.now())
	if err != nil {
		return err
	}
	return d.st.FinishTurn(ctx, turn, store.TurnEnd{Status: contracts.StopError, Error: "approval expired", Reply: note, Messages: msgs, At: d.now()})
}

// Recover finishes what a dead holder left between a decision and its end,
// after expiring what is due. A request whose lease holder is alive (this
// daemon, or an 'approvals approve' running beside it) is not touched. A
// decided request whose turn never resumed is resumed through turns (an
// approved call runs then, once); so is an approved call that was claimed
// but never started; one that started is not retried, and the model and
// the owner are told it may have run; an interrupted promotion is
// finished. It is safe to call at any time (the daemon calls it every few
// seconds), and returns how many requests it handled.
func (d *Desk) Recover(ctx context.Context, turns Turns) (int, error) {
	if _, err := d.Expire(ctx); err != nil {
		return 0, err
	}
	list, err := d.st.Approvals(ctx, store.ApprovalApproved, store.ApprovalDenied, store.ApprovalRunning)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range list {
		if d.st.LeaseHeld(a) {
			continue
		}
		n++
		if a.Kind != KindToolCall {
			d.recoverPromotion(ctx, a)
			continue
		}
		note := ""
		// A running call whose start was recorded may have run; so may one
		// from before leases (no holder recorded), which is never retried.
		// A running denial, or an approved call that never started, is
		// carried out again.
		if a.State == store.ApprovalRunning && a.Outcome != store.ApprovalDenied && (a.Started || a.LeaseOwner == "" || a.Outcome == MayHaveRun) {
			note = MayHaveRun
			d.record(ctx, a.Chat, a.Turn, auditExecuted, a.Tool, a.Args, "request "+a.ID+": started, then its holder stopped; it may have run", false)
		}
		release, err := turns.Acquire(ctx)
		if err != nil {
			return 0, err
		}
		err = d.continueParked(ctx, a, note, turns)
		release()
		if err != nil && !errors.Is(err, ErrDecided) {
			d.log.Error("resume a decided approval", "id", a.ID, "err", err)
		}
	}
	return n, nil
}

// recoverPromotion finishes a promotion decision a crash interrupted.
func (d *Desk) recoverPromotion(ctx context.Context, a store.Approval) {
	switch a.State {
	case store.ApprovalApproved, store.ApprovalDenied:
		if _, err := d.promote(ctx, a); err != nil {
			d.log.Error("resume a promotion", "id", a.ID, "err", err)
		}
	case store.ApprovalRunning:
		// The rename either happened or not: what is live says which.
		outcome := "not carried out: interrupted"
		if p, ok := d.promoters[a.Kind]; ok {
			outcome = p.Promoted(a)
		}
		if err := d.st.Transition(ctx, a.ID, store.ApprovalRunning, store.ApprovalDone, outcome, 0); err != nil {
			d.log.Error("close an interrupted promotion", "id", a.ID, "err", err)
		}
	}
}
