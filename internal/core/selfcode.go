package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// KindPromotion is an approval of a self-coded tool version.
const KindPromotion = "promotion"

// Audit kinds of the self-coding trail.
const (
	auditProposed    = "tool_proposed"
	auditPromoted    = "tool_promoted"
	auditDiscarded   = "tool_denied"
	auditStrike      = "tool_strike"
	auditQuarantined = "tool_quarantined"
	auditRestored    = "tool_restored"
	auditRolledBack  = "tool_rolled_back"
	auditRemoved     = "tool_removed"
)

// propose stages a tool whose gate passed and asks the owner to promote it.
func (c *Core) propose(ctx context.Context, job contracts.Job, p contracts.Proposal) (contracts.Proposed, error) {
	if c.opts.Tools == nil {
		return contracts.Proposed{}, errors.New("self-coded tools are not enabled")
	}
	name, err := selfcode.Normalize(p.Name)
	if err != nil {
		return contracts.Proposed{}, err
	}
	meta := selfcode.Meta{Description: p.Description, ParamsSchema: p.Parameters, Capabilities: p.Capabilities}
	m, err := c.opts.Tools.Stage(name, p.Language, p.Code, p.Test, meta, p.Gate)
	if err != nil {
		return contracts.Proposed{}, err
	}
	now := c.now()
	a := store.Approval{
		ID: store.NewApprovalID(), Kind: KindPromotion, Chat: job.Chat, Turn: job.Turn,
		Tool: name, Args: fmt.Sprintf(`{"name":%q,"version":%d}`, name, m.Version), ArgsHash: m.Hash,
		Summary: renderPromotion(m, p), State: store.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(c.tuning().ApprovalTTL),
		Pending: contracts.Pending{Call: contracts.ToolCall{Name: name}},
	}
	if err := c.opts.Store.CreateApproval(context.WithoutCancel(ctx), a); err != nil {
		return contracts.Proposed{}, err
	}
	c.audit(ctx, job.Chat, job.Turn, auditProposed, name, a.Args, fmt.Sprintf("v%d %s, gate passed; request %s", m.Version, m.Hash[:12], a.ID), true, 0)
	c.notes.addApproval(job.Turn, view(a))
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

// decidePromotion carries out the owner's decision on a proposed tool:
// approved, it is promoted if its content is still the one shown (hash);
// denied, the staged copy is discarded.
func (c *Core) decidePromotion(ctx context.Context, a store.Approval) (Outcome, error) {
	out := Outcome{Approvals: []ApprovalView{}}
	if c.opts.Tools == nil {
		return out, errors.New("core: self-coded tools are not enabled")
	}
	st := c.opts.Store
	if a.State == store.ApprovalDenied {
		if err := st.Transition(ctx, a.ID, store.ApprovalDenied, store.ApprovalDone, "discarded", 0); err != nil {
			return out, ErrAlreadyDecided
		}
		c.opts.Tools.Discard(a.Tool)
		c.audit(ctx, a.Chat, a.Turn, auditDiscarded, a.Tool, a.Args, "request "+a.ID, true, 0)
		out.Reply = fmt.Sprintf("The tool %s was discarded.", a.Tool)
		return out, nil
	}
	if err := st.Transition(ctx, a.ID, store.ApprovalApproved, store.ApprovalRunning, "", 0); err != nil {
		return out, ErrAlreadyDecided
	}
	m, err := c.opts.Tools.Promote(a.Tool, a.ArgsHash, a.DecidedBy)
	outcome := fmt.Sprintf("promoted v%d", m.Version)
	if err != nil {
		outcome = "not promoted: " + err.Error()
	}
	if terr := st.Transition(ctx, a.ID, store.ApprovalRunning, store.ApprovalDone, outcome, 0); terr != nil {
		c.log.Error("close promotion", "id", a.ID, "err", terr)
	}
	c.audit(ctx, a.Chat, a.Turn, auditPromoted, a.Tool, a.Args, "request "+a.ID+": "+outcome, err == nil, 0)
	if err != nil {
		return out, fmt.Errorf("core: promote %s: %w", a.Tool, err)
	}
	c.invalidate()
	out.Reply = fmt.Sprintf("The tool %s (version %d) is live: it is one of shelldon's tools from the next turn.", m.Name, m.Version)
	return out, nil
}

// discovery caches the live tools between turns; a promotion, quarantine,
// restore, rollback or removal through the core invalidates it, and a
// change of the live directory's entries (another process) is seen by
// its modification time.
type discovery struct {
	mu    sync.Mutex
	stamp string
	tools []contracts.SelfTool
}

func (c *Core) invalidate() {
	c.disc.mu.Lock()
	c.disc.stamp = ""
	c.disc.mu.Unlock()
}

// discover lists the live self-coded tools for a turn.
func (c *Core) discover() []contracts.SelfTool {
	if c.opts.Tools == nil {
		return nil
	}
	stamp := c.opts.Tools.Stamp()
	c.disc.mu.Lock()
	defer c.disc.mu.Unlock()
	if stamp != "" && stamp == c.disc.stamp {
		return c.disc.tools
	}
	list, err := c.opts.Tools.List(selfcode.StateLive)
	if err != nil {
		c.log.Error("discover self-coded tools", "err", err)
		return nil
	}
	tools := make([]contracts.SelfTool, 0, len(list))
	for _, m := range list {
		tools = append(tools, contracts.SelfTool{
			Name: m.Name, Version: m.Version, Language: m.Language, Hash: m.Hash,
			Description: m.Meta.Description, Parameters: m.Meta.ParamsSchema, Capabilities: m.Meta.Capabilities,
			Dir: c.opts.Tools.VersionDir(selfcode.StateLive, m.Name),
		})
	}
	c.disc.stamp, c.disc.tools = stamp, tools
	return tools
}

// strike counts a failed call of a self-coded tool; at the threshold the
// version is quarantined and the owner told.
func (c *Core) strike(ctx context.Context, job contracts.Job, te contracts.ToolEvent) {
	var st *contracts.SelfTool
	for i := range job.SelfTools {
		if job.SelfTools[i].Name == te.Tool {
			st = &job.SelfTools[i]
		}
	}
	if st == nil || c.opts.Tools == nil {
		return
	}
	n, err := c.opts.Store.AddStrike(context.WithoutCancel(ctx), st.Name, st.Version, te.Summary, c.now())
	if err != nil {
		c.log.Error("strike", "tool", st.Name, "err", err)
		return
	}
	limit := c.tuning().Strikes
	c.audit(ctx, job.Chat, job.Turn, auditStrike, st.Name, "", fmt.Sprintf("v%d strike %d of %d: %s", st.Version, n, limit, te.Summary), false, 0)
	if n < limit {
		return
	}
	if err := c.opts.Tools.Quarantine(st.Name); err != nil {
		c.log.Error("quarantine", "tool", st.Name, "err", err)
		return
	}
	c.invalidate()
	c.audit(ctx, job.Chat, job.Turn, auditQuarantined, st.Name, "", fmt.Sprintf("v%d after %d failed calls", st.Version, n), true, 0)
	c.log.Warn("self-coded tool quarantined", "tool", st.Name, "version", st.Version, "strikes", n)
	c.note(job.Turn, fmt.Sprintf("Note from shelldon: the tool %s (version %d) failed %d times and was quarantined; `shelldon tools restore %s` brings it back.", st.Name, st.Version, n, st.Name))
}

// notes are messages from shelldon itself to the owner, added to the reply
// of the turn they arose in.
type notes struct {
	mu        sync.Mutex
	m         map[int64][]string
	approvals map[int64][]ApprovalView // promotions filed during a turn
}

// addApproval records a request filed during a turn (a promotion), for the
// turn's outcome, so every transport can put it before the owner at once.
func (n *notes) addApproval(turn int64, v ApprovalView) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.approvals == nil {
		n.approvals = map[int64][]ApprovalView{}
	}
	n.approvals[turn] = append(n.approvals[turn], v)
}

func (n *notes) takeApprovals(turn int64) []ApprovalView {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.approvals[turn]
	delete(n.approvals, turn)
	return out
}

func (c *Core) note(turn int64, text string) {
	c.notes.mu.Lock()
	defer c.notes.mu.Unlock()
	if c.notes.m == nil {
		c.notes.m = map[int64][]string{}
	}
	c.notes.m[turn] = append(c.notes.m[turn], text)
}

func (n *notes) take(turn int64) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := strings.Join(n.m[turn], "\n")
	delete(n.m, turn)
	return out
}

// ToolView is a tool as the owner's commands, GET /api/tools and
// Telegram's /tools show it.
type ToolView struct {
	Name     string `json:"name"`
	Tier     string `json:"tier"`
	Runs     string `json:"runs"`   // where it runs: see contracts.Runs
	Source   string `json:"source"` // "builtin" or "self"
	State    string `json:"state"`
	Version  int    `json:"version,omitempty"`
	Language string `json:"language,omitempty"`
	Hash     string `json:"hash,omitempty"`
	Strikes  int    `json:"strikes,omitempty"`
	Summary  string `json:"summary,omitempty"` // a built-in's one line
}

// The sources of a ToolView.
const (
	SourceBuiltin = "builtin"
	SourceSelf    = "self"
)

// Tools lists every built-in tool of the catalogue (contracts.BuiltinTools),
// in its order, then every self-coded one with its state: the one list the
// owner's commands, the API and Telegram show. A self-coded tool is FREE
// and each call runs in a sandbox of its own.
func (c *Core) Tools(ctx context.Context) ([]ToolView, error) {
	builtins := contracts.BuiltinTools()
	out := make([]ToolView, 0, len(builtins))
	for _, b := range builtins {
		out = append(out, ToolView{Name: b.Name, Tier: string(b.Tier), Runs: string(b.Runs),
			Source: SourceBuiltin, State: selfcode.StateLive, Summary: b.Summary})
	}
	if c.opts.Tools == nil {
		return out, nil
	}
	for _, state := range []string{selfcode.StateLive, selfcode.StateStaged, selfcode.StateQuarantined} {
		list, err := c.opts.Tools.List(state)
		if err != nil {
			return nil, err
		}
		for _, m := range list {
			n, _ := c.opts.Store.Strikes(ctx, m.Name, m.Version)
			out = append(out, ToolView{Name: m.Name, Tier: string(contracts.TierFree), Runs: string(contracts.RunsSandbox),
				Source: SourceSelf, State: state, Version: m.Version, Language: m.Language, Hash: m.Hash, Strikes: n})
		}
	}
	return out, nil
}

// ShowTool returns a self-coded tool's manifest and source in a state.
func (c *Core) ShowTool(name, state string) (selfcode.Tool, error) {
	if c.opts.Tools == nil {
		return selfcode.Tool{}, selfcode.ErrNotFound
	}
	return c.opts.Tools.Load(state, name)
}

// ToolAction is an owner command on a self-coded tool.
func (c *Core) ToolAction(ctx context.Context, action, name, by string) (string, error) {
	if c.opts.Tools == nil {
		return "", selfcode.ErrNotFound
	}
	d := c.opts.Tools
	var err error
	var msg, kind string
	switch action {
	case "quarantine":
		err, kind, msg = d.Quarantine(name), auditQuarantined, name+" is quarantined: it is no longer offered."
	case "restore":
		var t selfcode.Tool
		if t, err = d.Load(selfcode.StateQuarantined, name); err == nil {
			if err = d.Restore(name); err == nil {
				c.opts.Store.ClearStrikes(ctx, name, t.Version)
			}
		}
		kind, msg = auditRestored, name+" is live again, its strikes cleared."
	case "rollback":
		var m selfcode.Manifest
		m, err = d.Rollback(name)
		kind, msg = auditRolledBack, fmt.Sprintf("%s is back at version %d.", name, m.Version)
	case "remove":
		err, kind, msg = d.Remove(name), auditRemoved, name+" is removed (its versions are kept in the archive)."
	default:
		return "", fmt.Errorf("unknown action %q", action)
	}
	if err != nil {
		return "", err
	}
	c.invalidate()
	c.audit(ctx, "", 0, kind, name, "", "by "+by, true, 0)
	return msg, nil
}
