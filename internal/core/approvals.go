package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
)

// ApprovalView is a request as transports show it. Summary is the daemon's
// rendering of the normalized call; nothing in it is worded by the model
// except the part labeled as the model's.
type ApprovalView struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Chat      string    `json:"chat"`
	Tool      string    `json:"tool"`
	Summary   string    `json:"summary"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

func view(a store.Approval) ApprovalView {
	return ApprovalView{ID: a.ID, Kind: a.Kind, Chat: a.Chat, Tool: a.Tool, Summary: a.Summary, State: a.State,
		CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC()}
}

// Errors of Decide, for transports to map (404, 409).
var (
	ErrUnknownApproval = errors.New("no such approval request")
	ErrAlreadyDecided  = errors.New("this request was already decided")
	ErrApprovalExpired = errors.New("this request has expired")
)

// Audit kinds of the approval trail.
const (
	auditRequested = "approval_requested"
	auditApproved  = "approval_approved"
	auditDenied    = "approval_denied"
	auditExpired   = "approval_expired"
	auditExecuted  = "approval_executed"
)

// park stores the call a turn stopped at, under a new unguessable id, with
// the daemon's rendering of it.
func (c *Core) park(ctx context.Context, chat string, turn int64, p contracts.Pending) (ApprovalView, error) {
	hash, err := contracts.ArgsHash(p.Call.Name, p.Call.Arguments, p.Binding)
	if err != nil {
		return ApprovalView{}, fmt.Errorf("core: park %s: %w", p.Call.Name, err)
	}
	now := c.now()
	a := store.Approval{
		ID: store.NewApprovalID(), Kind: store.KindToolCall, Chat: chat, Turn: turn,
		Tool: p.Call.Name, Args: p.Call.Arguments, ArgsHash: hash,
		Summary: c.render(ctx, p), Pending: p, CreatedAt: now, ExpiresAt: now.Add(c.tuning().ApprovalTTL),
		State: store.ApprovalPending,
	}
	if err := c.opts.Store.CreateApproval(context.WithoutCancel(ctx), a); err != nil {
		return ApprovalView{}, fmt.Errorf("core: park %s: %w", p.Call.Name, err)
	}
	c.audit(ctx, chat, turn, auditRequested, a.Tool, a.Args, "request "+a.ID, true, 0)
	return view(a), nil
}

// render is the owner's view of a parked call, built by the daemon from the
// normalized call: the tool, each argument escaped and bounded, the
// daemon's own facts about it, and the model's words labeled as such.
func (c *Core) render(ctx context.Context, p contracts.Pending) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool: %s\n", p.Call.Name)
	b.WriteString(RenderArgs(p.Call.Arguments))
	if c.opts.Describe != nil {
		for _, line := range c.opts.Describe(ctx, p.Call) {
			b.WriteString(Escape(line) + "\n")
		}
	}
	if t := strings.TrimSpace(p.ModelText); t != "" {
		b.WriteString("The model's words (not shelldon's): " + Bound(Escape(t), 500) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func parkedReply(p contracts.Pending, v ApprovalView) string {
	return fmt.Sprintf("This needs your approval (request %s, expires %s):\n%s",
		v.ID, v.ExpiresAt.Local().Format("15:04"), v.Summary)
}

// Approvals lists the requests waiting for the owner.
func (c *Core) Approvals(ctx context.Context) ([]ApprovalView, error) {
	list, err := c.opts.Store.Approvals(ctx, store.ApprovalPending)
	if err != nil {
		return nil, err
	}
	now := c.now()
	out := make([]ApprovalView, 0, len(list))
	for _, a := range list {
		if a.ExpiresAt.After(now) {
			out = append(out, view(a))
		}
	}
	return out, nil
}

// Approval returns one request, in any state.
func (c *Core) Approval(ctx context.Context, id string) (ApprovalView, error) {
	a, err := c.opts.Store.Approval(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return ApprovalView{}, ErrUnknownApproval
	}
	if err != nil {
		return ApprovalView{}, err
	}
	return view(a), nil
}

// Decide records the owner's decision and continues the parked turn: an
// approved call runs once, in a fresh worker, bound to the arguments the
// owner saw; a denied one tells the model "denied by owner". Either way the
// loop goes on to a reply, which may park again. The decision is committed
// before anything runs; when every worker slot is busy it waits its turn.
func (c *Core) Decide(ctx context.Context, id string, approve bool, by string, ev Events) (Outcome, error) {
	a, err := c.opts.Store.Decide(ctx, id, approve, by, c.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Outcome{}, ErrUnknownApproval
	case errors.Is(err, store.ErrExpired):
		return Outcome{}, ErrApprovalExpired
	case errors.Is(err, store.ErrDecided):
		return Outcome{}, ErrAlreadyDecided
	case err != nil:
		return Outcome{}, fmt.Errorf("core: decide %s: %w", id, err)
	}
	kind := auditDenied
	if approve {
		kind = auditApproved
	}
	c.audit(ctx, a.Chat, a.Turn, kind, a.Tool, a.Args, "request "+a.ID+" by "+by, approve, 0)
	// The decision is committed: it is carried out even if the caller goes
	// away while it waits for a slot.
	ctx = context.WithoutCancel(ctx)
	if a.Kind == KindPromotion {
		return c.decidePromotion(ctx, a)
	}
	if err := c.acquire(ctx); err != nil {
		return Outcome{}, err
	}
	defer c.release()
	return c.continueParked(ctx, a, "", ev)
}

// continueParked claims a decided request (approved -> running, or denied ->
// done; exactly one caller wins) and runs the rest of its turn. note, when
// set, is the model's result for a call that did not run.
func (c *Core) continueParked(ctx context.Context, a store.Approval, note string, ev Events) (Outcome, error) {
	st := c.opts.Store
	resume := &contracts.Resume{Messages: a.Pending.Messages, Call: a.Pending.Call, ArgsHash: a.ArgsHash,
		Binding: a.Pending.Binding, Note: note}
	switch {
	case a.State == store.ApprovalApproved && note == "":
		if err := st.Transition(ctx, a.ID, store.ApprovalApproved, store.ApprovalRunning, "", 0); err != nil {
			return Outcome{}, ErrAlreadyDecided
		}
		resume.Approved = true
	default:
		if err := st.Transition(ctx, a.ID, a.State, store.ApprovalDone, outcomeOf(a.State, note), 0); err != nil {
			return Outcome{}, ErrAlreadyDecided
		}
	}
	// Learn how the approved call went from its own tool event.
	var ran, ok bool
	var summary string
	inner := ev.Tool
	ev.Tool = func(te contracts.ToolEvent) {
		if te.CallID == a.Pending.Call.ID && te.Phase == contracts.PhaseEnd {
			ran, ok, summary = true, te.OK, te.Summary
		}
		if inner != nil {
			inner(te)
		}
	}
	text := ""
	if len(a.Pending.Messages) > 0 {
		text = a.Pending.Messages[0].Text
	}
	out, err := c.runTurn(ctx, a.Chat, text, resume, ev)
	if resume.Approved {
		outcome := "not run"
		switch {
		case ran && ok:
			outcome = "executed ok"
		case ran:
			outcome = "executed, failed: " + summary
		}
		if terr := st.Transition(ctx, a.ID, store.ApprovalRunning, store.ApprovalDone, outcome, out.Turn); terr != nil {
			c.log.Error("close approval", "id", a.ID, "err", terr)
		}
		c.audit(ctx, a.Chat, out.Turn, auditExecuted, a.Tool, a.Args, "request "+a.ID+": "+outcome, ran && ok, 0)
	}
	return out, err
}

func outcomeOf(state, note string) string {
	if note != "" {
		return note
	}
	return state
}

// Interrupted is the model's result for an approved call whose execution a
// crash cut short: it may or may not have happened, and it is not retried.
const Interrupted = "not known to have run: shelldon stopped while this call was running; it may or may not have completed, and it was not retried"

// ExpireApprovals closes every request past its expiry: the owner is told
// (in the log, the audit trail and the chat's history), and the model's
// conversation is completed with a result saying the request expired.
func (c *Core) ExpireApprovals(ctx context.Context) (int, error) {
	expired, err := c.opts.Store.ExpirePending(ctx, c.now())
	if err != nil {
		return 0, err
	}
	for _, a := range expired {
		c.audit(ctx, a.Chat, a.Turn, auditExpired, a.Tool, a.Args, "request "+a.ID+" expired undecided", false, 0)
		if a.Kind == KindPromotion {
			c.tools.Discard(a.Tool)
			continue
		}
		c.log.Warn("approval request expired", "id", a.ID, "tool", a.Tool, "chat", a.Chat)
		// Close the conversation so the next turn's context is well formed.
		msgs := append([]contracts.Message(nil), a.Pending.Messages...)
		res := contracts.ToolResult{CallID: a.Pending.Call.ID, Name: a.Pending.Call.Name, Content: "not run: the owner did not decide before the request expired"}
		if n := len(msgs); n > 0 && msgs[n-1].Role == contracts.RoleTool {
			msgs[n-1].ToolResults = append(append([]contracts.ToolResult(nil), msgs[n-1].ToolResults...), res)
		} else {
			msgs = append(msgs, contracts.Message{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{res}})
		}
		note := fmt.Sprintf("The approval request %s (%s) expired before you decided; nothing was run.", a.ID, a.Tool)
		msgs = append(msgs, contracts.Message{Role: contracts.RoleAssistant, Text: note})
		text := ""
		if len(msgs) > 0 {
			text = msgs[0].Text
		}
		turn, err := c.opts.Store.BeginTurn(ctx, a.Chat, text, c.now())
		if err == nil {
			err = c.opts.Store.FinishTurn(ctx, turn, store.TurnEnd{Status: contracts.StopError, Error: "approval expired", Reply: note, Messages: msgs, At: c.now()})
		}
		if err != nil {
			c.log.Error("record expired approval", "id", a.ID, "err", err)
		}
	}
	return len(expired), nil
}

// RecoverApprovals finishes what a crash left between a decision and its
// end: decided requests whose turn never resumed are resumed (an approved
// call runs then, once); a call that was running is not retried, and the
// model is told it may or may not have completed. It returns how many it
// handled.
func (c *Core) RecoverApprovals(ctx context.Context) (int, error) {
	if _, err := c.ExpireApprovals(ctx); err != nil {
		return 0, err
	}
	list, err := c.opts.Store.Approvals(ctx, store.ApprovalApproved, store.ApprovalDenied, store.ApprovalRunning)
	if err != nil {
		return 0, err
	}
	for _, a := range list {
		if a.Kind == KindPromotion {
			c.recoverPromotion(ctx, a)
			continue
		}
		note := ""
		if a.State == store.ApprovalRunning {
			note = Interrupted
			c.audit(ctx, a.Chat, a.Turn, auditExecuted, a.Tool, a.Args, "request "+a.ID+": interrupted by a restart", false, 0)
		}
		if err := c.acquire(ctx); err != nil {
			return 0, err
		}
		_, err := c.continueParked(ctx, a, note, Events{})
		c.release()
		if err != nil && !errors.Is(err, ErrAlreadyDecided) {
			c.log.Error("resume a decided approval", "id", a.ID, "err", err)
		}
	}
	return len(list), nil
}

// audit appends one row to the audit trail; a failure is logged, not fatal.
func (c *Core) audit(ctx context.Context, chat string, turn int64, kind, tool, args, summary string, ok bool, d time.Duration) {
	_, err := c.opts.Store.AppendAudit(context.WithoutCancel(ctx), store.AuditEntry{
		At: c.now(), Chat: chat, Turn: turn, Kind: kind, Tool: tool,
		Args: c.opts.Redact(args), Summary: c.opts.Redact(summary), OK: ok, Duration: d,
	})
	if err != nil {
		c.log.Error("audit", "kind", kind, "tool", tool, "err", err)
	}
}

// recoverPromotion finishes a promotion decision a crash interrupted.
func (c *Core) recoverPromotion(ctx context.Context, a store.Approval) {
	switch a.State {
	case store.ApprovalApproved, store.ApprovalDenied:
		if _, err := c.decidePromotion(ctx, a); err != nil {
			c.log.Error("resume a promotion", "id", a.ID, "err", err)
		}
	case store.ApprovalRunning:
		// The rename either happened or not: the live version says which.
		c.opts.Store.Transition(ctx, a.ID, store.ApprovalRunning, store.ApprovalDone, c.tools.Promoted(a), 0)
	}
}
