package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// The self-coded tools are the toolbox's (internal/core/toolbox); core files
// its proposals as promotion approvals, carries the owner's decision to it,
// and keeps the facade transports and app use.

// KindPromotion is an approval of a self-coded tool version.
const KindPromotion = toolbox.KindPromotion

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
}

func (f *turnFiled) note(text string) {
	if text != "" {
		f.notes = append(f.notes, text)
	}
}

// recorder hands core's audit trail to the toolbox.
type recorder struct{ c *Core }

func (r recorder) Record(ctx context.Context, e store.AuditEntry) {
	r.c.audit(ctx, e.Chat, e.Turn, e.Kind, e.Tool, e.Args, e.Summary, e.OK, e.Duration)
}

var _ toolbox.Recorder = recorder{}

// propose has the toolbox stage a tool whose gate passed and files the
// request that asks the owner to promote it.
func (c *Core) propose(ctx context.Context, job contracts.Job, p contracts.Proposal, filed *turnFiled) (contracts.Proposed, error) {
	s, err := c.tools.Stage(p)
	if err != nil {
		return contracts.Proposed{}, err
	}
	m := s.Manifest
	now := c.now()
	a := store.Approval{
		ID: store.NewApprovalID(), Kind: KindPromotion, Chat: job.Chat, Turn: job.Turn,
		Tool: m.Name, Args: s.Args, ArgsHash: m.Hash,
		Summary: renderPromotion(m, p), State: store.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(c.tuning().ApprovalTTL),
		Pending: contracts.Pending{Call: contracts.ToolCall{Name: m.Name}},
	}
	if err := c.opts.Store.CreateApproval(context.WithoutCancel(ctx), a); err != nil {
		return contracts.Proposed{}, err
	}
	c.audit(ctx, job.Chat, job.Turn, toolbox.AuditProposed, m.Name, a.Args, fmt.Sprintf("v%d %s, gate passed; request %s", m.Version, m.Hash[:12], a.ID), true, 0)
	filed.approvals = append(filed.approvals, view(a))
	return contracts.Proposed{ApprovalID: a.ID, Version: m.Version, Hash: m.Hash}, nil
}

// renderPromotion is the owner's view of a proposed tool: all of it, escaped.
func renderPromotion(m selfcode.Manifest, p contracts.Proposal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "New tool: %s (version %d, %s)\n", m.Name, m.Version, m.Language)
	fmt.Fprintf(&b, "Description: %s\n", Escape(p.Description))
	fmt.Fprintf(&b, "Parameters: %s\n", Escape(string(p.Parameters)))
	caps := "none"
	if len(p.Capabilities) > 0 {
		raw, _ := json.Marshal(p.Capabilities)
		caps = string(raw)
	}
	fmt.Fprintf(&b, "Capabilities: %s\n", Escape(caps))
	fmt.Fprintf(&b, "Content hash: %s\n", m.Hash)
	fmt.Fprintf(&b, "Gate: %s\n", Escape(p.Gate))
	fmt.Fprintf(&b, "--- code (%d bytes) ---\n%s\n--- test (%d bytes) ---\n%s", len(p.Code), escapeLines(p.Code), len(p.Test), escapeLines(p.Test))
	return b.String()
}

// escapeLines escapes each line of source but keeps the lines.
func escapeLines(src string) string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// decidePromotion claims the owner's decision on a proposed tool and has
// the toolbox carry it out: approved, it is promoted if its content is
// still the one shown (hash); denied, the staged copy is discarded.
func (c *Core) decidePromotion(ctx context.Context, a store.Approval) (Outcome, error) {
	out := Outcome{Approvals: []ApprovalView{}}
	if !c.tools.Enabled() {
		return out, errors.New("core: self-coded tools are not enabled")
	}
	st := c.opts.Store
	if a.State == store.ApprovalDenied {
		if err := st.Transition(ctx, a.ID, store.ApprovalDenied, store.ApprovalDone, "discarded", 0); err != nil {
			return out, ErrAlreadyDecided
		}
		c.tools.Deny(ctx, a)
		out.Reply = fmt.Sprintf("The tool %s was discarded.", a.Tool)
		return out, nil
	}
	if err := st.Transition(ctx, a.ID, store.ApprovalApproved, store.ApprovalRunning, "", 0); err != nil {
		return out, ErrAlreadyDecided
	}
	m, outcome, err := c.tools.Promote(ctx, a)
	if terr := st.Transition(ctx, a.ID, store.ApprovalRunning, store.ApprovalDone, outcome, 0); terr != nil {
		c.log.Error("close promotion", "id", a.ID, "err", terr)
	}
	if err != nil {
		return out, fmt.Errorf("core: %w", err)
	}
	out.Reply = fmt.Sprintf("The tool %s (version %d) is live: it is one of shelldon's tools from the next turn.", m.Name, m.Version)
	return out, nil
}

// Tools lists every built-in tool of the catalogue (contracts.BuiltinTools),
// in its order, then every self-coded one with its state: the one list the
// owner's commands, the API and Telegram show. A self-coded tool is FREE
// and each call runs in a sandbox of its own.
func (c *Core) Tools(ctx context.Context) ([]ToolView, error) { return c.tools.Tools(ctx) }

// ToolAction is an owner command on a self-coded tool.
func (c *Core) ToolAction(ctx context.Context, action, name, by string) (string, error) {
	return c.tools.Action(ctx, action, name, by)
}
