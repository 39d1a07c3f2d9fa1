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
	// Continue runs the rest of the turn parked in chat, in a slot already
	// held, from x.Resume(): the decided call runs once (approved) or its
	// result is the note or "denied by owner", and the loop goes on to a
	// reply. The engine calls x.Start before the approved call runs (it
	// runs only if that succeeds), x.Record with the exchange before the
	// model is asked again, and closes the request with x.Close when the
	// turn ends without having recorded it. It returns the turn.
	Continue(ctx context.Context, chat string, x *Exchange) (Continued, error)
}

// Continued is what Turns.Continue reports.
type Continued struct {
	Turn int64
}

// Decide records the owner's decision on request id and carries it out.
// For a parked call, turns continues the turn: an approved call runs once,
// in a fresh worker, bound to the arguments the owner saw; a denied one
// tells the model "denied by owner"; the continued turn's reply reaches the
// owner through turns, and reply is empty. For a promotion the toolbox is
// told, and reply says what became of the tool. The decision is committed
// before anything runs, and carried out even if ctx is cancelled after.
func (d *Desk) Decide(ctx context.Context, id string, approve bool, by string, turns Turns) (reply string, err error) {
	kind := auditDenied
	if approve {
		kind = auditApproved
	}
	// The decision's audit row is written with it, in one transaction.
	var entry *store.AuditEntry
	if req, err := d.st.Approval(ctx, id); err == nil {
		e := d.audit.Entry(store.AuditEntry{Chat: req.Chat, Turn: req.Turn, Kind: kind, Tool: req.Tool,
			Args: req.Args, Summary: "request " + req.ID + " by " + by, OK: approve})
		entry = &e
	}
	a, err := d.st.DecideAudited(ctx, id, approve, by, d.now(), entry)
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

// continueParked claims a decided request for this handle (into running,
// holding its lease, with the outcome so far: "" for an approved call,
// "denied", or note for a call that will not run; exactly one caller wins)
// and has turns run the rest of its turn. The exchange (the parked messages
// and the decided call's result) is recorded and the request closed, in one
// transaction, before the model is asked again (Exchange.Record).
func (d *Desk) continueParked(ctx context.Context, a store.Approval, note string, turns Turns) error {
	r := &contracts.Resume{Messages: a.Pending.Messages, Call: a.Pending.Call, ArgsHash: a.ArgsHash,
		Binding: a.Pending.Binding, Note: note}
	outcome := note
	switch {
	case note != "":
	case a.State == store.ApprovalDenied, a.Outcome == store.ApprovalDenied:
		outcome = store.ApprovalDenied
	default:
		r.Approved = true
	}
	if err := d.claimLease(ctx, a.ID, a.State, outcome); err != nil {
		return err
	}
	x := &Exchange{d: d, a: a, r: r}
	res, err := turns.Continue(ctx, a.Chat, x)
	final, gerr := d.st.Approval(ctx, a.ID)
	if gerr == nil && final.State == store.ApprovalRunning {
		// Neither recorded nor closed with the turn (the store failed):
		// close it now, so it is not taken for interrupted work.
		c := x.Close(nil)
		if terr := d.st.CloseHeld(ctx, a.ID, c.Outcome, res.Turn); terr != nil {
			d.log.Error("close approval", "id", a.ID, "err", terr)
		} else {
			final.Outcome = c.Outcome
		}
	}
	if r.Approved {
		d.record(ctx, a.Chat, res.Turn, auditExecuted, a.Tool, a.Args, "request "+a.ID+": "+final.Outcome, final.Outcome == outcomeOK)
	}
	return err
}

// Outcomes of an approved call.
const (
	outcomeOK     = "executed ok"
	outcomeFailed = "executed, failed: "
	outcomeNotRun = "not run"
)

// Exchange is a decided request's exchange as the turn engine carries it
// out: the call resumed, its start recorded before it runs, and the
// exchange recorded with the request's closing.
type Exchange struct {
	d       *Desk
	a       store.Approval
	r       *contracts.Resume
	started bool
}

// Resume is what the worker resumes the parked turn from.
func (x *Exchange) Resume() *contracts.Resume { return x.r }

// Start records, before it runs, that the approved call starts: if its
// holder dies after this, the call may have run and is never retried.
func (x *Exchange) Start(ctx context.Context) error {
	if !x.r.Approved {
		return errors.New("only an approved call starts")
	}
	if err := x.d.st.MarkStarted(ctx, x.a.ID, x.d.now().UnixNano()); err != nil {
		return err
	}
	x.started = true
	return nil
}

// Started reports whether the approved call was recorded as starting.
func (x *Exchange) Started() bool { return x.started }

// Record commits msgs (the parked messages and the decided call's result)
// as the first messages of turn and closes the request, in one
// transaction.
func (x *Exchange) Record(ctx context.Context, turn int64, msgs []contracts.Message) error {
	return x.d.st.RecordExchange(ctx, turn, msgs, x.Close(msgs))
}

// Close is how the request closes given the turn's messages so far (nil
// when the turn ended before the call's result was known): the call's
// outcome, or the decision's.
func (x *Exchange) Close(msgs []contracts.Message) store.ApprovalClose {
	c := store.ApprovalClose{ID: x.a.ID, Outcome: x.r.Note}
	switch {
	case !x.r.Approved && c.Outcome == "":
		c.Outcome = store.ApprovalDenied
	case !x.r.Approved:
	case !x.started:
		c.Outcome = outcomeNotRun
	default:
		c.Outcome = MayHaveRun
		for _, m := range msgs {
			for _, tr := range m.ToolResults {
				if tr.CallID != x.r.Call.ID {
					continue
				}
				c.Outcome = outcomeOK
				if !tr.OK {
					c.Outcome = outcomeFailed + Bound(Escape(tr.Content), 300)
				}
			}
		}
	}
	return c
}

// Abandoned is the decided call's result for the history when the turn
// ended before it recorded the exchange (the worker died): what the model
// and the owner must be told of it.
func (x *Exchange) Abandoned() contracts.ToolResult {
	res := contracts.ToolResult{CallID: x.r.Call.ID, Name: x.r.Call.Name, Content: x.Close(nil).Outcome}
	switch {
	case !x.r.Approved && x.r.Note == "":
		res.Content = contracts.DeniedByOwner
	case x.r.Approved && !x.started:
		res.Content = "not run: shelldon stopped before the call started; it was not run"
	}
	return res
}

// claim moves request id from one state to the next: exactly one caller
// wins, and a loser is told ErrDecided; a storage failure is reported as
// that, never as "already decided".
func (d *Desk) claim(ctx context.Context, id, from, to, outcome string) error {
	return claimError(id, d.st.Transition(ctx, id, from, to, outcome, 0))
}

// claimError is a lost claim as ErrDecided, a storage failure as that.
func claimError(id string, err error) error {
	switch {
	case errors.Is(err, store.ErrState):
		return ErrDecided
	case err != nil:
		return fmt.Errorf("approvals: record the decision on %s: %w", id, err)
	}
	return nil
}

// claimLease claims a decided request (from approved or denied, or from
// running when its holder died) for this handle, into running with the
// outcome so far.
func (d *Desk) claimLease(ctx context.Context, id, from, outcome string) error {
	return claimError(id, d.st.Claim(ctx, id, from, store.ApprovalRunning, outcome))
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
	if err := d.claimLease(ctx, a.ID, store.ApprovalApproved, ""); err != nil {
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
