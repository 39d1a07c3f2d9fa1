// Package approvals keeps the requests that wait for the owner: a RISKY
// call a turn stopped at, and a self-coded tool version proposed for
// promotion (one more kind of request). It files them with the daemon's own
// rendering (park), lists them, takes the owner's decision exactly once
// (decide), carries it out, closes the ones nobody decided (expire) and
// finishes what a crash left between a decision and its end (recover).
//
// Its invariants: a request is rendered by the daemon from the normalized
// call, never worded by the model except in a labeled part; a decision is
// committed before anything runs and is used once (every state change is
// one guarded UPDATE in the store); an approved call runs bound to the
// arguments the owner saw. It does not run turns: the turn engine is handed
// to Decide and Recover as a small interface (Turns), and the toolbox as
// another (Toolbox), so neither is imported here (repo_test.go).
package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// Kinds of request.
const (
	KindToolCall  = store.KindToolCall
	KindPromotion = store.KindPromotion // a self-coded tool version
	KindSkill     = store.KindSkill     // a skill the agent drafted
)

// View is a request as transports show it. Summary is the daemon's
// rendering of the normalized call; nothing in it is worded by the model
// except the part labeled as the model's. Arguments is the whole of the
// canonical arguments, unescaped beyond JSON, for a presenter that shows
// every byte (each escapes at its own sink).
type View struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Chat      string    `json:"chat"`
	Turn      int64     `json:"turn"` // the turn that filed it
	Tool      string    `json:"tool"`
	Arguments string    `json:"arguments"`
	Summary   string    `json:"summary"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

func view(a store.Approval) View {
	return View{ID: a.ID, Kind: a.Kind, Chat: a.Chat, Turn: a.Turn, Tool: a.Tool, Arguments: a.Args, Summary: a.Summary, State: a.State,
		CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC()}
}

// Errors of Decide and Get, for transports to map (404, 409). Any other
// error is the system's (a storage failure), never one of these.
var (
	ErrUnknown = errors.New("no such approval request")
	ErrDecided = errors.New("this request was already decided")
	ErrExpired = errors.New("this request has expired")
	// ErrStale wraps the reason a decided request can no longer be carried
	// out (a proposed tool changed since the owner saw it).
	ErrStale = errors.New("this request can no longer be carried out")
)

// Audit kinds of the approval trail.
const (
	auditRequested = "approval_requested"
	auditApproved  = "approval_approved"
	auditDenied    = "approval_denied"
	auditExpired   = "approval_expired"
	auditExecuted  = "approval_executed"
)

// Recorder appends a row to the audit trail; it stamps the time and
// redacts. A failure is the recorder's to log. Entry stamps and redacts a
// row without appending it, for one the store writes with a change.
type Recorder interface {
	Record(ctx context.Context, e store.AuditEntry)
	Entry(e store.AuditEntry) store.AuditEntry
}

// Promoter carries out the owner's decisions on one kind of proposal: a
// self-coded tool version, a skill draft.
type Promoter interface {
	// Promote makes the approved draft of a live if its content is still
	// a.ArgsHash. It returns the reply for the owner and the outcome to
	// record; an error means it could not be carried out (and why).
	Promote(ctx context.Context, a store.Approval) (reply, outcome string, err error)
	// Deny discards the draft of a denied request.
	Deny(ctx context.Context, a store.Approval)
	// Discard drops the draft of an expired request.
	Discard(ctx context.Context, a store.Approval)
	// Promoted finishes a promotion a crash interrupted (or carries out an
	// approved one that had not begun) and returns the outcome to record.
	Promoted(a store.Approval) string
}

// Options configure a Desk.
type Options struct {
	Store *store.Store
	// Promoters carry out the decisions on proposals, by kind
	// (KindPromotion, KindSkill); a kind without one cannot be decided.
	Promoters map[string]Promoter
	Audit     Recorder
	// TTL is how long a new request waits for the owner, read at each
	// filing (a config change applies to the next request); nil or <= 0
	// means an hour.
	TTL func() time.Duration
	// Describe adds the daemon's own facts to the rendering of a call (the
	// resolved path, a URL's host); nil adds nothing.
	Describe func(ctx context.Context, call contracts.ToolCall) []string
	// OnNetwork says, for a host a proposed tool asks for in its
	// CAPABILITIES, the owner's http.allow_hosts entry that lists it (the
	// daemon's rendering), or ""; nil lists none.
	OnNetwork func(host string) string
	Now       func() time.Time
	Logger    *slog.Logger
}

// Desk holds the requests waiting for the owner and carries out the
// decisions. It is safe for concurrent use; exactly-once is the store's.
type Desk struct {
	st        *store.Store
	promoters map[string]Promoter
	audit     Recorder
	ttl       func() time.Duration
	describe  func(ctx context.Context, call contracts.ToolCall) []string
	onNetwork func(host string) string
	now       func() time.Time
	log       *slog.Logger
}

// New returns a Desk over opts.Store.
func New(opts Options) (*Desk, error) {
	if opts.Store == nil || opts.Audit == nil {
		return nil, errors.New("approvals: a store and a recorder are required")
	}
	d := &Desk{st: opts.Store, promoters: opts.Promoters, audit: opts.Audit, ttl: opts.TTL,
		describe: opts.Describe, onNetwork: opts.OnNetwork, now: opts.Now, log: opts.Logger}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	return d, nil
}

func (d *Desk) expiry(from time.Time) time.Time {
	ttl := time.Duration(0)
	if d.ttl != nil {
		ttl = d.ttl()
	}
	if ttl <= 0 {
		ttl = time.Hour
	}
	return from.Add(ttl)
}

func (d *Desk) record(ctx context.Context, chat string, turn int64, kind, tool, args, summary string, ok bool) {
	d.audit.Record(context.WithoutCancel(ctx), store.AuditEntry{Chat: chat, Turn: turn, Kind: kind, Tool: tool,
		Args: args, Summary: summary, OK: ok})
}

// Park files the RISKY call turn of chat stopped at, under a new
// unguessable id, with the daemon's rendering of it.
func (d *Desk) Park(ctx context.Context, chat string, turn int64, p contracts.Pending) (View, error) {
	hash, err := contracts.ArgsHash(p.Call.Name, p.Call.Arguments, p.Binding)
	if err != nil {
		return View{}, fmt.Errorf("approvals: park %s: %w", p.Call.Name, err)
	}
	now := d.now()
	id := store.NewApprovalID()
	a := store.Approval{
		ID: id, Kind: KindToolCall, Chat: chat, Turn: turn,
		Tool: p.Call.Name, Args: p.Call.Arguments, ArgsHash: hash,
		Summary: render(ctx, id, p, d.describe), Pending: p, CreatedAt: now, ExpiresAt: d.expiry(now),
		State: store.ApprovalPending,
	}
	if err := d.st.CreateApproval(context.WithoutCancel(ctx), a); err != nil {
		return View{}, fmt.Errorf("approvals: park %s: %w", p.Call.Name, err)
	}
	d.record(ctx, chat, turn, auditRequested, a.Tool, a.Args, "request "+a.ID, true)
	return view(a), nil
}

// Propose files the promotion of a staged tool version (m, with the
// request's arguments args) that turn of chat proposed from p.
func (d *Desk) Propose(ctx context.Context, chat string, turn int64, m selfcode.Manifest, args string, p contracts.Proposal) (View, error) {
	return d.file(ctx, store.Approval{Kind: KindPromotion, Chat: chat, Turn: turn, Tool: m.Name, Args: args,
		ArgsHash: m.Hash, Summary: renderPromotion(m, p, d.onNetwork)})
}

// SkillDraft is a skill the agent drafted (a new one or a change), as the
// desk files and renders it.
type SkillDraft struct {
	Name string
	Text string // the whole SKILL.md it makes
	Live string // the SKILL.md in use it replaces; "" for a new skill
	Hash string // what the owner approves: the draft's content hash
}

// ProposeSkill files the draft sd that turn of chat made, for the owner
// to make live.
func (d *Desk) ProposeSkill(ctx context.Context, chat string, turn int64, sd SkillDraft) (View, error) {
	args, _ := json.Marshal(map[string]string{"name": sd.Name, "sha256": sd.Hash})
	return d.file(ctx, store.Approval{Kind: KindSkill, Chat: chat, Turn: turn, Tool: sd.Name, Args: string(args),
		ArgsHash: sd.Hash, Summary: renderSkill(sd)})
}

// file stores a proposal a, pending, under a new id.
func (d *Desk) file(ctx context.Context, a store.Approval) (View, error) {
	now := d.now()
	a.ID, a.State, a.CreatedAt, a.ExpiresAt = store.NewApprovalID(), store.ApprovalPending, now, d.expiry(now)
	a.Pending = contracts.Pending{Call: contracts.ToolCall{Name: a.Tool}}
	if err := d.st.CreateApproval(context.WithoutCancel(ctx), a); err != nil {
		return View{}, fmt.Errorf("approvals: file the %s of %s: %w", a.Kind, a.Tool, err)
	}
	return view(a), nil
}

// Pending lists the requests waiting for the owner that have not expired.
func (d *Desk) Pending(ctx context.Context) ([]View, error) {
	list, err := d.st.Approvals(ctx, store.ApprovalPending)
	if err != nil {
		return nil, err
	}
	now := d.now()
	out := make([]View, 0, len(list))
	for _, a := range list {
		if a.ExpiresAt.After(now) {
			out = append(out, view(a))
		}
	}
	return out, nil
}

// Get returns one request, in any state.
func (d *Desk) Get(ctx context.Context, id string) (View, error) {
	a, err := d.st.Approval(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return View{}, ErrUnknown
	}
	if err != nil {
		return View{}, err
	}
	return view(a), nil
}
