package approvals

import (
	"context"
	"errors"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
)

// Turns is the turn engine as the desk needs it, to carry out a decision on
// a parked call.
type Turns interface {
	// Acquire waits for a worker slot and returns its release: a decision
	// waits its turn rather than being refused.
	Acquire(ctx context.Context) (release func(), err error)
	// Continue runs the rest of the turn parked in chat from r, in a slot
	// already held: the decided call runs once (r.Approved) or its result
	// is r.Note or "denied by owner", and the loop goes on to a reply. It
	// returns the turn it committed and the decided call's end event if
	// the call ran.
	Continue(ctx context.Context, chat string, r *contracts.Resume) (Continued, error)
}

// Continued is what Turns.Continue reports.
type Continued struct {
	Turn int64
	Call *contracts.ToolEvent // the decided call's end event; nil if it did not run
}

// Decide records the owner's decision on request id and carries it out.
// For a parked call, turns continues the turn: an approved call runs once,
// in a fresh worker, bound to the arguments the owner saw; a denied one
// tells the model "denied by owner"; the continued turn's reply reaches the
// owner through turns, and reply is empty. For a promotion the toolbox is
// told, and reply says what became of the tool. The decision is committed
// before anything runs, and carried out even if ctx is cancelled after.
func (d *Desk) Decide(ctx context.Context, id string, approve bool, by string, turns Turns) (reply string, err error) {
	a, err := d.st.Decide(ctx, id, approve, by, d.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", ErrUnknown
	case errors.Is(err, store.ErrExpired):
		return "", ErrExpired
	case errors.Is(err, store.ErrDecided):
		return "", ErrDecided
	case err != nil:
		return "", fmt.Errorf("approvals: decide %s: %w", id, err)
	}
	kind := auditDenied
	if approve {
		kind = auditApproved
	}
	d.record(ctx, a.Chat, a.Turn, kind, a.Tool, a.Args, "request "+a.ID+" by "+by, approve)
	ctx = context.WithoutCancel(ctx)
	if a.Kind != KindToolCall {
		return d.promote(ctx, a)
	}
	release, err := turns.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return "", d.continueParked(ctx, a, "", turns)
}

// continueParked claims a decided request (approved -> running, or denied
// -> done; exactly one caller wins) and has turns run the rest of its
// turn. note, when set, is the model's result for a call that did not run.
func (d *Desk) continueParked(ctx context.Context, a store.Approval, note string, turns Turns) error {
	r := &contracts.Resume{Messages: a.Pending.Messages, Call: a.Pending.Call, ArgsHash: a.ArgsHash,
		Binding: a.Pending.Binding, Note: note}
	if a.State == store.ApprovalApproved && note == "" {
		if err := d.claim(ctx, a.ID, store.ApprovalApproved, store.ApprovalRunning, ""); err != nil {
			return err
		}
		r.Approved = true
	} else if err := d.claim(ctx, a.ID, a.State, store.ApprovalDone, outcomeOf(a.State, note)); err != nil {
		return err
	}
	res, err := turns.Continue(ctx, a.Chat, r)
	if r.Approved {
		outcome, ok := "not run", false
		switch c := res.Call; {
		case c != nil && c.OK:
			outcome, ok = "executed ok", true
		case c != nil:
			outcome = "executed, failed: " + c.Summary
		}
		if terr := d.st.Transition(ctx, a.ID, store.ApprovalRunning, store.ApprovalDone, outcome, res.Turn); terr != nil {
			d.log.Error("close approval", "id", a.ID, "err", terr)
		}
		d.record(ctx, a.Chat, res.Turn, auditExecuted, a.Tool, a.Args, "request "+a.ID+": "+outcome, ok)
	}
	return err
}

// claim moves request id from one state to the next: exactly one caller
// wins, and a loser is told ErrDecided; a storage failure is reported as
// that, never as "already decided".
func (d *Desk) claim(ctx context.Context, id, from, to, outcome string) error {
	err := d.st.Transition(ctx, id, from, to, outcome, 0)
	switch {
	case errors.Is(err, store.ErrState):
		return ErrDecided
	case err != nil:
		return fmt.Errorf("approvals: record the decision on %s: %w", id, err)
	}
	return nil
}

func outcomeOf(state, note string) string {
	if note != "" {
		return note
	}
	return state
}

// promote claims the owner's decision on a proposal and has its kind's
// Promoter carry it out: approved, the draft goes live if its content is
// still the one shown (hash); denied, it is discarded.
func (d *Desk) promote(ctx context.Context, a store.Approval) (string, error) {
	p, ok := d.promoters[a.Kind]
	if a.State == store.ApprovalDenied {
		if err := d.claim(ctx, a.ID, store.ApprovalDenied, store.ApprovalDone, "discarded"); err != nil {
			return "", err
		}
		if ok {
			p.Deny(ctx, a)
		}
		return fmt.Sprintf("The %s %s was discarded.", noun(a.Kind), a.Tool), nil
	}
	if err := d.claim(ctx, a.ID, store.ApprovalApproved, store.ApprovalRunning, ""); err != nil {
		return "", err
	}
	reply, outcome, err := "", "", fmt.Errorf("no %s can be made live here", noun(a.Kind))
	if ok {
		reply, outcome, err = p.Promote(ctx, a)
	}
	if err != nil && outcome == "" {
		outcome = "not carried out: " + err.Error()
	}
	if terr := d.st.Transition(ctx, a.ID, store.ApprovalRunning, store.ApprovalDone, outcome, 0); terr != nil {
		d.log.Error("close promotion", "id", a.ID, "err", terr)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrStale, err)
	}
	return reply, nil
}

// noun names what a kind of proposal proposes.
func noun(kind string) string {
	if kind == KindSkill {
		return "skill draft"
	}
	return "tool"
}
