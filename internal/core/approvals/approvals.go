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
	KindPromotion = store.KindPromotion
)

// View is a request as transports show it. Summary is the daemon's
// rendering of the normalized call; nothing in it is worded by the model
// except the part labeled as the model's.
type View struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Chat      string    `json:"chat"`
	Tool      string    `json:"tool"`
	Summary   string    `json:"summary"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

func view(a store.Approval) View {
	return View{ID: a.ID, Kind: a.Kind, Chat: a.Chat, Tool: a.Tool, Summary: a.Summary, State: a.State,
		CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC()}
}

// Errors of Decide and Get, for transports to map (404, 409).
var (
	ErrUnknown = errors.New("no such approval request")
	ErrDecided = errors.New("this request was already decided")
	ErrExpired = errors.New("this request has expired")
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
// redacts. A failure is the recorder's to log.
type Recorder interface {
	Record(ctx context.Context, e store.AuditEntry)
}

// Toolbox is what a promotion needs of the self-coded tools.
type Toolbox interface {
	// Enabled reports whether there are self-coded tools at all.
	Enabled() bool
	// Promote makes the approved version of a live if its content is still
	// a.ArgsHash, and returns the outcome to record.
	Promote(ctx context.Context, a store.Approval) (selfcode.Manifest, string, error)
	// Deny discards the staged version of a denied promotion.
	Deny(ctx context.Context, a store.Approval)
	// Discard drops the staged version of an expired one.
	Discard(name string)
	// Promoted tells whether an interrupted promotion's rename happened,
	// as the outcome to record.
	Promoted(a store.Approval) string
}

// Options configure a Desk.
type Options struct {
	Store   *store.Store
	Toolbox Toolbox
	Audit   Recorder
	// TTL is how long a new request waits for the owner, read at each
	// filing (a config change applies to the next request); nil or <= 0
	// means an hour.
	TTL func() time.Duration
	// Describe adds the daemon's own facts to the rendering of a call (the
	// resolved path, a URL's host); nil adds nothing.
	Describe func(ctx context.Context, call contracts.ToolCall) []string
	Now      func() time.Time
	Logger   *slog.Logger
}

// Desk holds the requests waiting for the owner and carries out the
// decisions. It is safe for concurrent use; exactly-once is the store's.
type Desk struct {
	st       *store.Store
	tools    Toolbox
	audit    Recorder
	ttl      func() time.Duration
	describe func(ctx context.Context, call contracts.ToolCall) []string
	now      func() time.Time
	log      *slog.Logger
}

// New returns a Desk over opts.Store.
func New(opts Options) (*Desk, error) {
	if opts.Store == nil || opts.Toolbox == nil || opts.Audit == nil {
		return nil, errors.New("approvals: store, toolbox and recorder are required")
	}
	d := &Desk{st: opts.Store, tools: opts.Toolbox, audit: opts.Audit, ttl: opts.TTL,
		describe: opts.Describe, now: opts.Now, log: opts.Logger}
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
	a := store.Approval{
		ID: store.NewApprovalID(), Kind: KindToolCall, Chat: chat, Turn: turn,
		Tool: p.Call.Name, Args: p.Call.Arguments, ArgsHash: hash,
		Summary: render(ctx, p, d.describe), Pending: p, CreatedAt: now, ExpiresAt: d.expiry(now),
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
	now := d.now()
	a := store.Approval{
		ID: store.NewApprovalID(), Kind: KindPromotion, Chat: chat, Turn: turn,
		Tool: m.Name, Args: args, ArgsHash: m.Hash,
		Summary: renderPromotion(m, p), State: store.ApprovalPending, CreatedAt: now, ExpiresAt: d.expiry(now),
		Pending: contracts.Pending{Call: contracts.ToolCall{Name: m.Name}},
	}
	if err := d.st.CreateApproval(context.WithoutCancel(ctx), a); err != nil {
		return View{}, fmt.Errorf("approvals: file the promotion of %s: %w", m.Name, err)
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
